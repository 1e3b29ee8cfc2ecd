#include "report/exports.hpp"

#include "families/problem_config.hpp"
#include "report/svg_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>
#include <vector>

namespace kl {
namespace {

using nlohmann::json;
using svg::colour_for;
using svg::esc;
using svg::num;
using svg::number_at;
using svg::panel_title;
using svg::text_width;

// What a panel's bars measure: memory throughput (GB/s against the DRAM bandwidth), or, for a
// compute-bound family whose records count flops (matmul), TFLOP/s against the FP32 peak, or
// for a tensor-core family against its precision's tensor-core peak (matmul_tc: 16-bit,
// matmul_tf32: TF32, matmul_f64: FP64).
struct unit {
  const char* field;  // the record's value
  const char* name;   // the axis's unit
  double peak;        // the device's, 0 when unknown
};

struct panel {
  std::string title;
  unit u;
  std::vector<std::string> variants;                     // in record order
  std::map<std::string, std::vector<const json*>> rows;  // variant -> its records
  double baseline = 0;
  std::string baseline_name;
};

constexpr int bar_w = 11, cluster_gap = 14, left = 112, right = 24, plot_h = 240, top = 46,
              panel_gap = 20;

// The units a panel's bars can be in, with the device's peaks from the results file.
struct units {
  unit bandwidth, compute, tensor, tf32, fp64;
};

units units_of(const json& dev) {
  auto peak = [&](const char* key) { return dev.is_null() ? 0 : number_at(dev, key).value_or(0); };
  return {{"gbps", "GB/s", peak("peak_bandwidth_gbs")},
          {"tflops", "TFLOP/s", peak("peak_fp32_tflops")},
          {"tflops", "TFLOP/s", peak("peak_tensor16_tflops")},
          {"tflops", "TFLOP/s", peak("peak_tf32_tflops")},
          {"tflops", "TFLOP/s", peak("peak_fp64_tensor_tflops")}};
}

// The records drawn, a panel per configuration in the order they came in, with the block sizes
// (the legend's colours) and the longest variant name (the room under the axis).
struct bar_panels {
  std::vector<panel> panels;
  std::vector<unsigned> blocks_seen;  // sorted
  std::size_t longest_name = 0;
};

// A record's panel, made when it is the first of its configuration.
panel& panel_for(const json& r, const units& u, bar_panels& out,
                 std::map<std::string, std::size_t>& index) {
  const std::string title = panel_title(r);
  if (!index.count(title)) {
    index[title] = out.panels.size();
    // The record's roofline, from its family; files written before records had one: a
    // compute-bound row is one that counts flops.
    const std::string roofline = r.value("roofline", std::string());
    const bool flops =
        r.contains("flops") && r.at("flops").is_number() && r.at("flops").get<double>() > 0;
    const bool by_compute = roofline.empty() ? flops : is_compute_roofline(roofline);
    out.panels.push_back({title,
                          roofline == "tensor" ? u.tensor
                          : roofline == "tf32" ? u.tf32
                          : roofline == "fp64" ? u.fp64
                          : by_compute         ? u.compute
                                               : u.bandwidth,
                          {},
                          {},
                          0,
                          ""});
  }
  return out.panels[index[title]];
}

bar_panels panels_of(const json& results, const units& u) {
  bar_panels out;
  std::map<std::string, std::size_t> index;
  for (const auto& r : results.at("records")) {
    if (r.at("outcome") == "skipped") continue;  // it has nothing to show, not even a failure
    panel& p = panel_for(r, u, out, index);
    const std::string name = r.at("variant").at("name");
    out.longest_name = std::max(out.longest_name, name.size());
    if (!p.rows.count(name)) p.variants.push_back(name);
    p.rows[name].push_back(&r);
    const unsigned b = r.at("block");
    if (std::find(out.blocks_seen.begin(), out.blocks_seen.end(), b) == out.blocks_seen.end())
      out.blocks_seen.push_back(b);
    const auto value = number_at(r, p.u.field);
    if (value && r.contains("baseline") && r.at("baseline").is_string() &&
        r.at("variant").at("qualified_name") == r.at("baseline")) {
      p.baseline = *value;
      p.baseline_name = name;
    }
  }
  std::sort(out.blocks_seen.begin(), out.blocks_seen.end());
  return out;
}

// The legend: a colour per block size, the peak's line and the baseline's.
void write_legend(std::ostream& os, const std::vector<unsigned>& blocks_seen) {
  int lx = left;
  for (unsigned b : blocks_seen) {
    os << "<rect x=\"" << lx << "\" y=\"28\" width=\"10\" height=\"10\" fill=\"" << colour_for(b)
       << "\"/>"
       << "<text x=\"" << lx + 14 << "\" y=\"37\">"
       << (b == 0 ? std::string("block n/a") : "block " + std::to_string(b)) << "</text>\n";
    lx += 90;
  }
  os << "<line x1=\"" << lx << "\" y1=\"33\" x2=\"" << lx + 24
     << "\" y2=\"33\" stroke=\"#D55E00\" "
        "stroke-dasharray=\"5,3\" stroke-width=\"2\"/><text x=\""
     << lx + 28 << "\" y=\"37\">theoretical peak</text>\n";
  lx += 140;
  os << "<line x1=\"" << lx << "\" y1=\"33\" x2=\"" << lx + 24
     << "\" y2=\"33\" stroke=\"#000000\" "
        "stroke-dasharray=\"2,2\" stroke-width=\"2\"/><text x=\""
     << lx + 28 << "\" y=\"37\">baseline</text>\n";
}

// A panel's y axis: from 0 to a little above the highest bar, the peak and the baseline; in
// pixels, clamped to the plot, so that no value from a file can overflow the conversion.
struct y_scale {
  double ymax = 0;
  int axis_y = 0;

  int y_of(double value) const {
    const double f = std::clamp(value / ymax, 0.0, 1.0);
    return axis_y - static_cast<int>(f * plot_h);
  }
};

y_scale scale_of(const panel& p, int axis_y) {
  double ymax = std::max(p.u.peak, p.baseline);
  for (const auto& v : p.variants)
    for (const json* r : p.rows.at(v))
      if (r->at("outcome") == "passed") ymax = std::max(ymax, number_at(*r, p.u.field).value_or(0));
  if (ymax <= 0) ymax = 1;
  if (std::isfinite(ymax * 1.08)) ymax *= 1.08;
  return {ymax, axis_y};
}

// Grid lines at quarters of the peak (or of the axis, without a device), and the axis's title.
void write_grid(std::ostream& os, const panel& p, const y_scale& s, int y0, int width) {
  const double peak = p.u.peak;
  const double step = peak > 0 ? peak / 4 : s.ymax / 4;
  const char* tick_format = s.ymax < 20 ? "%.2f" : "%.0f";
  for (int k = 0; k <= 4; ++k) {
    const double g = step * k;
    if (g > s.ymax) break;
    os << "<line x1=\"" << left << "\" y1=\"" << s.y_of(g) << "\" x2=\"" << width - right
       << "\" y2=\"" << s.y_of(g) << "\" stroke=\"#dddddd\"/><text x=\"" << left - 6 << "\" y=\""
       << s.y_of(g) + 4 << "\" text-anchor=\"end\">" << num(g, tick_format)
       << (peak > 0 ? " (" + std::to_string(25 * k) + "%)" : "") << "</text>\n";
  }
  os << "<text x=\"16\" y=\"" << y0 + top + plot_h / 2 << "\" transform=\"rotate(-90 16 "
     << y0 + top + plot_h / 2 << ")\" text-anchor=\"middle\">" << p.u.name
     << " (% of peak)</text>\n";
}

// A cluster of bars per variant, one per row (a mark for a row that did not pass), with the
// variant's name at 50 degrees under the axis.
void write_bars(std::ostream& os, const panel& p, const y_scale& s) {
  const int axis_y = s.axis_y;
  int x = left + cluster_gap / 2;
  for (const auto& v : p.variants) {
    const auto& rows = p.rows.at(v);
    const int cluster_w = static_cast<int>(rows.size()) * bar_w;
    for (const json* r : rows) {
      const std::string outcome = r->at("outcome");
      const unsigned b = r->at("block");
      const std::string label = v + (b ? " block " + std::to_string(b) : std::string());
      const auto value = number_at(*r, p.u.field);
      if (outcome == "passed" && value) {
        os << "<rect class=\"bar\" x=\"" << x << "\" y=\"" << s.y_of(*value) << "\" width=\""
           << bar_w - 1 << "\" height=\"" << axis_y - s.y_of(*value) << "\" fill=\""
           << colour_for(b) << "\"><title>" << esc(label) << ": " << num(*value, "%.1f") << " "
           << p.u.name << "</title></rect>\n";
      } else if (outcome != "passed") {
        os << "<text x=\"" << x + bar_w / 2 << "\" y=\"" << axis_y - 3
           << "\" text-anchor=\"middle\" fill=\"#D55E00\" font-weight=\"bold\"><title>"
           << esc(label) << ": " << esc(outcome) << "</title>x</text>\n";
      }
      x += bar_w;
    }
    const int cx = x - cluster_w / 2;
    os << "<text x=\"" << cx << "\" y=\"" << axis_y + 12
       << "\" text-anchor=\"end\" transform=\"rotate(-50 " << cx << " " << axis_y + 12 << ")\">"
       << esc(v) << "</text>\n";
    x += cluster_gap;
  }
}

// The axis, and the peak's and the baseline's lines across the panel.
void write_lines(std::ostream& os, const panel& p, const y_scale& s, int width) {
  os << "<line x1=\"" << left << "\" y1=\"" << s.axis_y << "\" x2=\"" << width - right << "\" y2=\""
     << s.axis_y << "\" stroke=\"black\"/>\n";
  if (p.u.peak > 0)
    os << "<line x1=\"" << left << "\" y1=\"" << s.y_of(p.u.peak) << "\" x2=\"" << width - right
       << "\" y2=\"" << s.y_of(p.u.peak)
       << "\" stroke=\"#D55E00\" stroke-dasharray=\"5,3\" stroke-width=\"2\"/>\n";
  if (p.baseline > 0)
    os << "<line x1=\"" << left << "\" y1=\"" << s.y_of(p.baseline) << "\" x2=\"" << width - right
       << "\" y2=\"" << s.y_of(p.baseline)
       << "\" stroke=\"#000000\" stroke-dasharray=\"2,2\" "
          "stroke-width=\"2\"/><text x=\""
       << width - right - 4 << "\" y=\"" << s.y_of(p.baseline) - 4 << "\" text-anchor=\"end\">"
       << esc(p.baseline_name) << " " << num(p.baseline, p.baseline < 20 ? "%.2f" : "%.0f") << " "
       << p.u.name << "</text>\n";
}

// A --compile-only or --resources result: say so, in place of a blank image.
void write_nothing_measured(std::ostream& os) {
  const std::string note =
      "no measured records in this file (a --compile-only or --resources run?)";
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + text_width(note, 14) + right
     << "\" height=\"60\" font-family=\"sans-serif\" font-size=\"14\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"" << left
     << "\" y=\"34\">" << esc(note) << "</text>\n</svg>\n";
}

// Every panel is as wide as the widest, so that they line up; no title is cut.
int width_of(const bar_panels& d, const std::string& heading) {
  int width = std::max(left + text_width(heading, 14) + right,
                       left + 90 * static_cast<int>(d.blocks_seen.size()) + 260);
  for (const auto& p : d.panels) {
    std::size_t w = 0;
    for (const auto& v : p.variants) w += p.rows.at(v).size() * bar_w + cluster_gap;
    width = std::max(width, left + static_cast<int>(w) + right);
    width = std::max(width, left + text_width(p.title, 13) + right);
  }
  return width;
}

}  // namespace

void write_svg(const json& results, std::ostream& os) {
  const auto& repro = results.at("reproducibility");
  const json& dev = repro.at("device");
  const std::string device = dev.is_null() ? "no device" : dev.at("name").get<std::string>();
  const bar_panels drawn = panels_of(results, units_of(dev));
  if (drawn.panels.empty() && results.contains("pipeline"))
    throw std::runtime_error(
        "no sweep records (a --pipeline result): kernlab plot --timeline draws it");
  if (drawn.panels.empty()) {
    write_nothing_measured(os);
    return;
  }

  const std::string heading = "kernlab: throughput per variant and block size, " + device;
  const int width = width_of(drawn, heading);
  // The variant names are written at 50 degrees under the axis: room for the longest.
  const int label_h = std::max(
      170, static_cast<int>(
               static_cast<double>(text_width(std::string(drawn.longest_name, 'x'), 11)) * 0.77) +
               24);
  const int panel_h = top + plot_h + label_h;
  const int height = 40 + static_cast<int>(drawn.panels.size()) * (panel_h + panel_gap) + 10;

  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
     << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<text x=\"" << left << "\" y=\"20\" font-size=\"14\" font-weight=\"bold\">" << esc(heading)
     << "</text>\n";
  write_legend(os, drawn.blocks_seen);
  for (std::size_t pi = 0; pi < drawn.panels.size(); ++pi) {
    const panel& p = drawn.panels[pi];
    const int y0 = 40 + static_cast<int>(pi) * (panel_h + panel_gap);
    const y_scale s = scale_of(p, y0 + top + plot_h);
    os << "<g>\n<text x=\"" << left << "\" y=\"" << y0 + top - 14
       << "\" font-size=\"13\" font-weight=\"bold\">" << esc(p.title) << "</text>\n";
    write_grid(os, p, s, y0, width);
    write_bars(os, p, s);
    write_lines(os, p, s, width);
    os << "</g>\n";
  }
  os << "</svg>\n";
}

}  // namespace kl
