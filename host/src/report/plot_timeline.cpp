// `kernlab plot --timeline`: a --pipeline result's schedules, one lane per stream, each
// chunk's H2D, kernel and D2H as a box on a time axis in microseconds (the median run's events,
// docs/results_format.md).
#include "report/exports.hpp"
#include "report/svg_text.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace kl {
namespace {

using nlohmann::json;
using svg::esc;
using svg::num;
using svg::text_width;

struct box {
  unsigned chunk = 0, stream = 0;
  double begin[3] = {0, 0, 0}, end[3] = {0, 0, 0};  // microseconds, H2D, kernel, D2H
};

struct schedule {
  std::string order;
  unsigned streams = 0, chunks = 0;
  double wall_us = 0, x_bound = 0, overlap = 0;
  bool valid = true;
  std::vector<box> boxes;
};

// What a --pipeline row holds at most (--streams 1..64, --chunks 1..4096).
constexpr unsigned max_streams = 64, max_chunks = 4096;

const char* const stage_key[3] = {"h2d_us", "kernel_us", "d2h_us"};
const char* const stage_name[3] = {"H2D", "kernel", "D2H"};
const char* const stage_colour[3] = {"#0072B2", "#E69F00", "#009E73"};

// A finite number at `key`, or an error that says where.
double number(const json& j, const char* key, const std::string& where) {
  const auto v = svg::number_at(j, key);
  if (!v) throw std::runtime_error(where + "." + key + " is not a non-negative number");
  return *v;
}

schedule schedule_of(const json& row, const std::string& where) {
  schedule s;
  if (!row.is_object()) throw std::runtime_error(where + " is not an object");
  s.order = row.value("order", std::string("?"));
  const double streams = number(row, "streams", where), chunks = number(row, "chunks", where);
  // A lane is drawn per stream: a count past what --pipeline runs is refused, not drawn.
  if (streams > max_streams)
    throw std::runtime_error(where + ".streams " + num(streams, "%.0f") + " is more than the " +
                             std::to_string(max_streams) + " streams a --pipeline row has");
  if (chunks > max_chunks)
    throw std::runtime_error(where + ".chunks " + num(chunks, "%.0f") + " is more than the " +
                             std::to_string(max_chunks) + " chunks a --pipeline row has");
  s.streams = static_cast<unsigned>(streams);
  s.chunks = static_cast<unsigned>(chunks);
  s.wall_us = 1000 * number(row, "wall_ms", where);
  s.x_bound = svg::number_at(row, "x_bound").value_or(0);
  s.overlap = svg::number_at(row, "overlap").value_or(0);
  s.valid = row.value("valid", true);
  const auto t = row.find("timeline");
  if (t == row.end()) return s;
  if (!t->is_array()) throw std::runtime_error(where + ".timeline is not a list");
  if (t->size() > max_chunks)
    throw std::runtime_error(where + ".timeline has " + std::to_string(t->size()) +
                             " chunks, more than the " + std::to_string(max_chunks) +
                             " a --pipeline row has");
  for (std::size_t i = 0; i < t->size(); ++i) {
    const json& c = t->at(i);
    const std::string at = where + ".timeline[" + std::to_string(i) + "]";
    if (!c.is_object()) throw std::runtime_error(at + " is not an object");
    box b;
    b.chunk = static_cast<unsigned>(std::min(number(c, "chunk", at), 1e9));
    b.stream = static_cast<unsigned>(std::min(number(c, "stream", at), 1e9));
    if (b.stream >= s.streams)
      throw std::runtime_error(at + ".stream " + std::to_string(b.stream) + " is not below the " +
                               std::to_string(s.streams) + " streams of its row");
    for (int k = 0; k < 3; ++k) {
      const auto span = c.find(stage_key[k]);
      if (span == c.end() || !span->is_array() || span->size() != 2 ||
          !svg::number_at(json::object({{"v", span->at(0)}}), "v") ||
          !svg::number_at(json::object({{"v", span->at(1)}}), "v") ||
          span->at(1).get<double>() < span->at(0).get<double>())
        throw std::runtime_error(at + "." + stage_key[k] +
                                 " is not [begin, end] in microseconds, begin <= end");
      b.begin[k] = span->at(0).get<double>();
      b.end[k] = span->at(1).get<double>();
    }
    s.boxes.push_back(b);
  }
  return s;
}

// A step of 1, 2 or 5 x 10^k that cuts `span` into at most about ten parts.
double tick_step(double span) {
  const double raw = span / 10;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * decade >= raw) return m * decade;
  return 10 * decade;
}

constexpr int left = 84, plot_w = 900, right = 24, lane_h = 18, lane_gap = 4, font = 11;

// The picture's heading, the stages' colours and what a box is. `y` goes past them.
void write_legend(std::ostream& body, int& y, const std::string& device, int text_w) {
  for (const auto& line : svg::wrap("kernlab pipeline timeline: " + device, text_w, 14)) {
    y += 18;
    body << "<text x=\"10\" y=\"" << y << "\" font-size=\"14\" font-weight=\"bold\">" << esc(line)
         << "</text>\n";
  }
  y += 20;
  int lx = 10;
  for (int k = 0; k < 3; ++k) {
    body << "<rect x=\"" << lx << "\" y=\"" << y - 10 << "\" width=\"14\" height=\"12\" fill=\""
         << stage_colour[k] << "\"/><text x=\"" << lx + 18 << "\" y=\"" << y << "\">"
         << stage_name[k] << " (chunk number inside)</text>\n";
    lx += 24 + text_width(std::string(stage_name[k]) + " (chunk number inside)", font);
  }
  body << "<line x1=\"" << lx << "\" y1=\"" << y - 12 << "\" x2=\"" << lx << "\" y2=\"" << y + 2
       << "\" stroke=\"black\" stroke-width=\"2\"/><text x=\"" << lx + 6 << "\" y=\"" << y
       << "\">wall: the median run's end (the last stream's completion)</text>\n";
  for (const auto& line :
       svg::wrap("Each box spans the events recorded on its stream just before and just after "
                 "the stage, in the median run, from the run's start: a copy that waited for a "
                 "copy engine busy with another stream's copy has the wait inside its box.",
                 text_w, font)) {
    y += 15;
    body << "<text x=\"10\" y=\"" << y << "\" fill=\"#444444\">" << esc(line) << "</text>\n";
  }
}

// A problem's heading: its family, variant, block and size, the bytes it moves, and how long
// each stage takes alone.
std::string problem_heading(const json& rep) {
  // Files before the pipeline was every family's have no "family": qam256's.
  const std::string variant = rep.value("variant", std::string("?"));
  std::string heading =
      rep.value("family", variant.substr(0, variant.find('.'))) + " pipeline, " + variant;
  if (const auto b = svg::number_at(rep, "block")) heading += " block " + num(*b, "%.0f");
  if (rep.contains("config") && rep.at("config").is_object()) {
    const json& c = rep.at("config");
    if (const auto n = svg::number_at(c, "size")) heading += ", n=" + num(*n, "%.0f");
  }
  if (const auto bytes = svg::number_at(rep, "bytes_each_way"))  // files before 2026-11-26
    heading += ", " + num(*bytes / 1073741824.0, "%.2f") + " GiB each way";
  const auto in = svg::number_at(rep, "bytes_in"), out = svg::number_at(rep, "bytes_out");
  if (in && out)
    heading += ", " + num(*in / 1073741824.0, "%.2f") + " GiB in, " +
               num(*out / 1073741824.0, "%.2f") + " GiB out";
  const auto h2d = svg::number_at(rep, "h2d_alone_ms"), k = svg::number_at(rep, "kernel_alone_ms"),
             d2h = svg::number_at(rep, "d2h_alone_ms"), bound = svg::number_at(rep, "bound_ms");
  if (h2d && k && d2h)
    heading += "; alone: H2D " + num(*h2d, "%.2f") + " ms, kernel " + num(*k, "%.2f") +
               " ms, D2H " + num(*d2h, "%.2f") + " ms";
  if (bound) heading += "; bound (both copies at once) " + num(*bound, "%.2f") + " ms";
  return heading;
}

// "depth, 2 streams, 4 chunks: wall 0.01 ms, 1.20x the bound, overlap 1.67x (fastest)"
std::string schedule_title(const schedule& s, bool fastest) {
  std::string title = s.order + ", " + std::to_string(s.streams) + " stream" +
                      (s.streams == 1 ? "" : "s") + ", " + std::to_string(s.chunks) +
                      " chunks: wall " + num(s.wall_us / 1000, "%.2f") + " ms";
  if (s.x_bound > 0) title += ", " + num(s.x_bound, "%.2f") + "x the bound";
  if (s.overlap > 0) title += ", overlap " + num(s.overlap, "%.2f") + "x";
  if (fastest) title += " (fastest)";
  if (!s.valid) title += " (WRONG output)";
  return title;
}

// A problem's time axis, one for every schedule of the problem so that their lengths compare:
// ticks of 1, 2 or 5 x 10^k microseconds up to the longest schedule.
struct time_scale {
  double step = 0, axis_end = 0;

  double px(double us) const { return left + std::clamp(us / axis_end, 0.0, 1.0) * plot_w; }
};

// A schedule's lanes, one per stream, and its chunks' stages as boxes on them, the chunk's
// number inside where it fits.
void write_boxes(std::ostream& body, const schedule& s, const time_scale& ts, int top) {
  for (unsigned st = 0; st < s.streams; ++st) {
    const int ly = top + static_cast<int>(st) * (lane_h + lane_gap);
    body << "<rect x=\"" << left << "\" y=\"" << ly << "\" width=\"" << plot_w << "\" height=\""
         << lane_h << "\" fill=\"#f4f4f4\"/><text x=\"" << left - 6 << "\" y=\"" << ly + lane_h - 5
         << "\" text-anchor=\"end\">stream " << st << "</text>\n";
  }
  for (const auto& b : s.boxes) {
    const int ly = top + static_cast<int>(b.stream) * (lane_h + lane_gap);
    for (int k2 = 0; k2 < 3; ++k2) {
      const double x0 = ts.px(b.begin[k2]);
      const double w = std::max(1.0, ts.px(b.end[k2]) - x0);
      body << "<rect class=\"stage\" x=\"" << num(x0, "%.2f") << "\" y=\"" << ly << "\" width=\""
           << num(w, "%.2f") << "\" height=\"" << lane_h << "\" fill=\"" << stage_colour[k2]
           << "\" stroke=\"white\" stroke-width=\"0.5\"><title>chunk " << b.chunk << " "
           << stage_name[k2] << ", stream " << b.stream << ": " << num(b.begin[k2], "%.1f")
           << " to " << num(b.end[k2], "%.1f") << " µs (" << num(b.end[k2] - b.begin[k2], "%.1f")
           << " µs)</title></rect>\n";
      const std::string n = std::to_string(b.chunk);
      if (w >= text_width(n, 9) + 2)
        body << "<text x=\"" << num(x0 + w / 2) << "\" y=\"" << ly + lane_h - 5
             << "\" font-size=\"9\" text-anchor=\"middle\" fill=\"" << (k2 == 1 ? "black" : "white")
             << "\">" << n << "</text>\n";
    }
  }
}

// The time axis under a schedule's lanes, ticks in microseconds, and its wall as a line across
// them. Returns the axis's y.
int write_axis(std::ostream& body, const schedule& s, const time_scale& ts, int top) {
  const int h = static_cast<int>(s.streams) * (lane_h + lane_gap) - lane_gap;
  const int axis_y = top + h + 3;
  body << "<line x1=\"" << left << "\" y1=\"" << axis_y << "\" x2=\"" << left + plot_w << "\" y2=\""
       << axis_y << "\" stroke=\"black\"/>\n";
  const int ticks = static_cast<int>(std::lround(ts.axis_end / ts.step));
  for (int i = 0; i <= ticks; ++i) {
    const double t = i * ts.step;
    body << "<line x1=\"" << num(ts.px(t)) << "\" y1=\"" << axis_y << "\" x2=\"" << num(ts.px(t))
         << "\" y2=\"" << axis_y + 4 << "\" stroke=\"black\"/><text x=\"" << num(ts.px(t))
         << "\" y=\"" << axis_y + 15 << "\" text-anchor=\"" << (i == ticks ? "end" : "middle")
         << "\">" << num(t, ts.step < 1 ? "%.1f" : "%.0f") << (i == ticks ? " µs" : "")
         << "</text>\n";
  }
  body << "<line x1=\"" << num(ts.px(s.wall_us)) << "\" y1=\"" << top - 3 << "\" x2=\""
       << num(ts.px(s.wall_us)) << "\" y2=\"" << axis_y << "\" stroke=\"black\" "
       << "stroke-width=\"2\"><title>wall " << num(s.wall_us, "%.1f") << " µs</title></line>\n";
  return axis_y;
}

// One schedule: its title (bold for the fastest, in red when its output was wrong), then its
// lanes and axis, or a note that it has no stage times. `y` goes past it.
void write_schedule(std::ostream& body, int& y, const schedule& s, bool fastest,
                    const time_scale& ts, int text_w) {
  y += 10;
  for (const auto& line : svg::wrap(schedule_title(s, fastest), text_w, 12)) {
    y += 15;
    body << "<text class=\"title\" x=\"10\" y=\"" << y << "\" font-size=\"12\""
         << (fastest ? " font-weight=\"bold\"" : "") << (s.valid ? "" : " fill=\"#D55E00\"") << ">"
         << esc(line) << "</text>\n";
  }
  y += 6;
  if (s.boxes.empty()) {
    y += 14;
    body << "<text x=\"" << left << "\" y=\"" << y
         << "\" fill=\"#D55E00\">no stage times for this row</text>\n";
    return;
  }
  write_boxes(body, s, ts, y);
  y = write_axis(body, s, ts, y) + 18;
}

}  // namespace

std::size_t write_timeline_svg(const json& results, std::ostream& os) {
  const auto p = results.find("pipeline");
  if (p == results.end() || !p->is_array() || p->empty())
    throw std::runtime_error(
        "no pipeline in this results file: --timeline draws a kernlab --pipeline result (a "
        "sweep's rows: kernlab plot --roofline)");
  const auto& repro = results.at("reproducibility");
  const json& dev = repro.at("device");
  const std::string device = dev.is_object() && dev.contains("name") && dev.at("name").is_string()
                                 ? dev.at("name").get<std::string>()
                                 : "no device";
  const int width = left + plot_w + right;
  const int text_w = width - 20;

  std::ostringstream body;
  int y = 10;
  write_legend(body, y, device, text_w);
  bool any_timeline = false;
  // Rows past the picture's cap are counted, not drawn: each may take megabytes.
  std::size_t not_drawn = 0;
  const auto full = [&] {
    return not_drawn > 0 || static_cast<std::size_t>(body.tellp()) > timeline_max_svg_bytes;
  };
  for (std::size_t ri = 0; ri < p->size(); ++ri) {
    const json& rep = p->at(ri);
    const std::string where = "pipeline[" + std::to_string(ri) + "]";
    if (!rep.is_object() || !rep.contains("rows") || !rep.at("rows").is_array())
      throw std::runtime_error(where + " has no list of rows");
    std::vector<schedule> rows;
    for (std::size_t i = 0; i < rep.at("rows").size(); ++i)
      rows.push_back(schedule_of(rep.at("rows").at(i), where + ".rows[" + std::to_string(i) + "]"));
    // One time scale for every schedule of this problem, so that their lengths compare.
    double t_max = 0;
    const schedule* fastest = nullptr;
    for (const auto& s : rows) {
      if (s.boxes.empty()) continue;
      t_max = std::max(t_max, s.wall_us);
      for (const auto& b : s.boxes) t_max = std::max(t_max, b.end[2]);
      if (s.valid && (!fastest || s.wall_us < fastest->wall_us)) fastest = &s;
    }
    if (t_max <= 0) continue;  // no row with stage times
    any_timeline = true;
    if (full()) {
      not_drawn += rows.size();
      continue;
    }
    const double step = tick_step(t_max);
    const time_scale ts{step, std::ceil(t_max / step) * step};
    y += 14;
    for (const auto& line : svg::wrap(problem_heading(rep), text_w, 13)) {
      y += 17;
      body << "<text class=\"title\" x=\"10\" y=\"" << y
           << "\" font-size=\"13\" font-weight=\"bold\">" << esc(line) << "</text>\n";
    }
    for (const auto& s : rows) {
      if (full())
        ++not_drawn;
      else
        write_schedule(body, y, s, &s == fastest, ts, text_w);
    }
  }
  if (!any_timeline)
    throw std::runtime_error(
        "this pipeline result has no stage times per chunk (written by a kernlab before they were "
        "recorded): run kernlab --pipeline again to draw its timeline");
  if (not_drawn > 0) {
    y += 24;
    body << "<text x=\"10\" y=\"" << y << "\" font-size=\"13\" fill=\"#D55E00\">" << not_drawn
         << " more row" << (not_drawn == 1 ? " is" : "s are") << " not drawn: the picture stops at "
         << (timeline_max_svg_bytes >> 20) << " MiB</text>\n";
  }
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << y + 10
     << "\" font-family=\"sans-serif\" font-size=\"" << font << "\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << body.str() << "</svg>\n";
  return not_drawn;
}

}  // namespace kl
