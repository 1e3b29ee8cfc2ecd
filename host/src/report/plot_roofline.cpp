// `kernlab plot --roofline`: each timed row at its arithmetic intensity and throughput, under the
// device's roofs, a panel per family and configuration (docs/results_format.md, "The roofline
// picture", says what each axis holds and why).
#include "families/problem_config.hpp"
#include "report/exports.hpp"
#include "report/svg_text.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace kl {
namespace {

using nlohmann::json;
using svg::bytes_text;
using svg::decade_label;
using svg::esc;
using svg::intensity_text;
using svg::num;
using svg::number_at;
using svg::text_width;
using svg::value_text;

// The device's peaks as the results file gives them; 0 when unknown.
struct peaks {
  double dram_gbs = 0;
  double fp32_tflops = 0;  ///< the compute roof: FP32, or in a tensor panel the tensor cores'
  double tensor16_tflops = 0;
  double tf32_tflops = 0;
  double fp64_tensor_tflops = 0;
  double l2_bytes = 0;
  std::string compute_name = "FP32";  ///< what fp32_tflops is the peak of
};

peaks peaks_of(const json& dev) {
  peaks p;
  if (!dev.is_object()) return p;
  p.dram_gbs = number_at(dev, "peak_bandwidth_gbs").value_or(0);
  p.l2_bytes = number_at(dev, "l2_bytes").value_or(0);
  // Every device of a results file of format 2 has its peaks (docs/results.schema.json).
  p.fp32_tflops = number_at(dev, "peak_fp32_tflops").value_or(0);
  p.tensor16_tflops = number_at(dev, "peak_tensor16_tflops").value_or(0);
  p.tf32_tflops = number_at(dev, "peak_tf32_tflops").value_or(0);
  p.fp64_tensor_tflops = number_at(dev, "peak_fp64_tensor_tflops").value_or(0);
  return p;
}

// What a panel's axes hold. y is the family's own unit: TFLOP/s for a compute-roofline family,
// GB/s for a bandwidth one. x is FLOP/byte when the rows count FLOPs; a row that counts none has
// no arithmetic intensity, and its x is the bytes the problem moves (where the L2 size matters).
struct axes {
  bool compute = false;    // y in TFLOP/s, else GB/s
  bool intensity = false;  // x in FLOP/byte, else bytes
  bool tensor = false;     // the compute roof is the 16-bit tensor cores', not FP32's
  bool tf32 = false;       // the compute roof is the TF32 tensor cores'
  bool fp64 = false;       // the compute roof is the FP64 tensor cores'
};

// The peaks a panel is drawn under: a tensor-core family's compute roof is the tensor cores'.
peaks panel_peaks(const peaks& device, const axes& a) {
  peaks p = device;
  if (a.tensor) p.fp32_tflops = device.tensor16_tflops;
  if (a.tf32) p.fp32_tflops = device.tf32_tflops;
  if (a.fp64) p.fp32_tflops = device.fp64_tensor_tflops;
  p.compute_name = roofline_peak_name(a.tensor ? "tensor"
                                      : a.tf32 ? "tf32"
                                      : a.fp64 ? "fp64"
                                               : "compute");
  return p;
}

struct point {
  std::string variant;
  unsigned block = 0;
  bool baseline = false;
  double x = 0, y = 0;
};

struct panel {
  std::string title;
  axes a;
  std::vector<std::string> variants;  // in record order
  std::vector<point> points;
  int not_drawn = 0;  // failed or wrong, or passed without a time (--sanitize)
};

double flops_of(const json& r) { return number_at(r, "flops").value_or(0); }

// The row's throughput in the panel's unit, if it has one.
std::optional<double> value_of(const json& r, const axes& a) {
  if (!a.compute) return number_at(r, "gbps");
  if (const auto t = number_at(r, "tflops")) return t;
  const auto& timing = r.find("timing");
  if (timing == r.end() || !timing->is_object()) return std::nullopt;
  const double us = number_at(*timing, "median_us").value_or(0);
  if (us <= 0 || flops_of(r) <= 0) return std::nullopt;
  return flops_of(r) / (us * 1e-6) / 1e12;
}

// The roof at x, in the panel's unit: the lower of what the DRAM bandwidth and the FP32 peak
// allow (x FLOP/byte x B GB/s = x B GFLOP/s; F TFLOP/s / x FLOP/byte = 1000 F / x GB/s). 0 when
// neither peak is known.
double roof_at(double x, const axes& a, const peaks& p) {
  if (!a.intensity) return a.compute ? p.fp32_tflops : p.dram_gbs;
  double r = 0;
  const double by_bw = a.compute ? x * p.dram_gbs / 1000 : p.dram_gbs;
  const double by_fp32 = a.compute ? p.fp32_tflops : 1000 * p.fp32_tflops / x;
  if (p.dram_gbs > 0) r = by_bw;
  if (p.fp32_tflops > 0) r = r > 0 ? std::min(r, by_fp32) : by_fp32;
  return r;
}

// A label of the column beside the plot: a variant's best row.
struct label {
  std::string text;
  double point_x = 0, point_y = 0;  // pixels
  double y = 0;                     // the text's baseline
  std::string colour;
};

constexpr double half_turn_rad = 3.14159265358979323846;
constexpr int left = 74, plot_w = 520, label_gap = 18, right = 16, font = 11, line_h = 13,
              title_font = 13, title_h = 17, min_plot_h = 300, dodge = 8;

// The records drawn, a panel per family and configuration, and what the legend and the heading
// need to know of them.
struct roofline_panels {
  std::vector<panel> panels;  // only those with a point to draw
  std::set<unsigned> blocks;
  bool any_bytes_axis = false;
  bool any_tensor = false, any_tf32 = false, any_fp64 = false;
};

// A record's panel, made when it is the first of its family and configuration.
panel& panel_for(const json& r, roofline_panels& out, std::map<std::string, std::size_t>& index) {
  const std::string title = svg::panel_title(r);
  if (!index.count(title)) {
    index[title] = out.panels.size();
    // The family's roofline; files written before records had one: a row that counts flops.
    const std::string roofline = r.value("roofline", std::string());
    axes a;
    a.compute = roofline.empty() ? flops_of(r) > 0 : is_compute_roofline(roofline);
    a.tensor = roofline == "tensor";
    a.tf32 = roofline == "tf32";
    a.fp64 = roofline == "fp64";
    out.any_tensor = out.any_tensor || a.tensor;
    out.any_tf32 = out.any_tf32 || a.tf32;
    out.any_fp64 = out.any_fp64 || a.fp64;
    a.intensity = flops_of(r) > 0;
    out.any_bytes_axis = out.any_bytes_axis || !a.intensity;
    out.panels.push_back({title, a, {}, {}, 0});
  }
  return out.panels[index[title]];
}

// Every record that is not a skip, as a point of its panel or counted as not drawn. Throws when
// nothing is left to draw.
roofline_panels panels_of(const json& results) {
  roofline_panels out;
  std::map<std::string, std::size_t> index;
  for (const auto& r : results.at("records")) {
    if (r.at("outcome") == "skipped") continue;
    panel& p = panel_for(r, out, index);
    const std::string name = r.at("variant").at("name");
    // 0 when the row has no throughput to draw.
    const double y = r.at("outcome") == "passed" ? value_of(r, p.a).value_or(0) : 0;
    const double bytes = number_at(r, "bytes").value_or(0);
    const double x = p.a.intensity ? (bytes > 0 ? flops_of(r) / bytes : 0) : bytes;
    if (y <= 0 || x <= 0) {
      ++p.not_drawn;
      continue;
    }
    if (std::find(p.variants.begin(), p.variants.end(), name) == p.variants.end())
      p.variants.push_back(name);
    const bool baseline = r.contains("baseline") && r.at("baseline").is_string() &&
                          r.at("variant").at("qualified_name") == r.at("baseline");
    const unsigned block = r.at("block");
    out.blocks.insert(block);
    p.points.push_back({name, block, baseline, x, y});
  }
  auto& panels = out.panels;
  panels.erase(
      std::remove_if(panels.begin(), panels.end(), [](const panel& p) { return p.points.empty(); }),
      panels.end());
  if (panels.empty()) {
    if (results.contains("pipeline") && results.at("records").empty())
      throw std::runtime_error(
          "no sweep records (a --pipeline result): kernlab plot --timeline draws it");
    throw std::runtime_error(
        "no timed rows to draw (a --compile-only, --resources or --sanitize run, or every row "
        "failed or was skipped)");
  }
  return out;
}

// A variant's best row in its panel.
const point& best_point(const panel& p, const std::string& variant) {
  const point* top = nullptr;
  for (const auto& pt : p.points)
    if (pt.variant == variant && (!top || pt.y > top->y)) top = &pt;
  return *top;
}

// Each panel's labels, a variant's best row each, in the order of the variants; their text and
// colour only (where they go is the panel's to find).
std::vector<std::vector<label>> labels_of(const std::vector<panel>& panels,
                                          const peaks& device_peaks) {
  std::vector<std::vector<label>> labels(panels.size());
  for (std::size_t pi = 0; pi < panels.size(); ++pi) {
    const panel& p = panels[pi];
    const peaks pk = panel_peaks(device_peaks, p.a);
    for (const auto& v : p.variants) {
      const point& top = best_point(p, v);
      const double roof = roof_at(top.x, p.a, pk);
      label l;
      l.text = v + (top.baseline ? " (baseline)" : "") +
               (top.block ? " block " + std::to_string(top.block) : std::string()) + ": " +
               value_text(top.y) + (p.a.compute ? " TFLOP/s" : " GB/s") +
               (roof > 0 ? " (" + num(100 * top.y / roof, "%.0f") + "% of roof)" : "");
      l.colour = svg::colour_for(top.block);
      labels[pi].push_back(l);
    }
  }
  return labels;
}

// "kernlab roofline: <device>; DRAM ... GB/s, FP32 ... TFLOP/s, ..., L2 50 MiB", and which
// peaks the file does not give.
std::string heading_of(const std::string& device, const peaks& pk, const roofline_panels& d) {
  std::string heading = "kernlab roofline: " + device;
  std::vector<std::string> known;
  if (pk.dram_gbs > 0) known.push_back("DRAM " + value_text(pk.dram_gbs) + " GB/s");
  if (pk.fp32_tflops > 0) known.push_back("FP32 " + value_text(pk.fp32_tflops) + " TFLOP/s");
  if (d.any_tensor && pk.tensor16_tflops > 0)
    known.push_back("16-bit tensor cores " + value_text(pk.tensor16_tflops) + " TFLOP/s");
  if (d.any_tf32 && pk.tf32_tflops > 0)
    known.push_back("TF32 tensor cores " + value_text(pk.tf32_tflops) + " TFLOP/s");
  if (d.any_fp64 && pk.fp64_tensor_tflops > 0)
    known.push_back("FP64 tensor cores " + value_text(pk.fp64_tensor_tflops) + " TFLOP/s");
  if (pk.l2_bytes > 0) known.push_back("L2 " + num(pk.l2_bytes / 1048576, "%.0f") + " MiB");
  for (std::size_t i = 0; i < known.size(); ++i) heading += (i ? ", " : "; ") + known[i];
  if (pk.dram_gbs <= 0 || pk.fp32_tflops <= 0)
    heading += std::string("; ") + (pk.dram_gbs <= 0 && pk.fp32_tflops <= 0
                                        ? "the file gives no peaks: no roofs"
                                    : pk.dram_gbs <= 0 ? "DRAM bandwidth unknown"
                                                       : "FP32 peak unknown");
  return heading;
}

// The legend under the heading: the block sizes' colours, the baseline's diamond, the roof and,
// when a panel has a bytes axis, the L2 line. Entries flow onto a new line when the image is too
// narrow for them.
void write_legend(std::ostream& body, int& y, int width, const roofline_panels& d) {
  std::vector<std::pair<std::string, std::string>> items;  // (symbol markup at 0,0; text)
  for (unsigned b : d.blocks)
    items.push_back({"<circle cx=\"5\" cy=\"-4\" r=\"4\" fill=\"" + svg::colour_for(b) + "\"/>",
                     b ? "block " + std::to_string(b) : std::string("block n/a")});
  items.push_back({"<path d=\"M5 -9 L10 -4 L5 1 L0 -4 Z\" fill=\"white\" stroke=\"black\"/>",
                   "baseline (diamond)"});
  items.push_back(
      {"<line x1=\"0\" y1=\"-4\" x2=\"22\" y2=\"-4\" stroke=\"#D55E00\" "
       "stroke-width=\"2.5\"/>",
       "roof: the device's peaks"});
  if (d.any_bytes_axis)
    items.push_back(
        {"<line x1=\"0\" y1=\"-4\" x2=\"22\" y2=\"-4\" stroke=\"#555555\" "
         "stroke-dasharray=\"4,3\"/>",
         "L2 size (a smaller problem can stay in L2)"});
  y += 22;
  int lx = 10;
  for (const auto& [symbol, text] : items) {
    const int w = 28 + text_width(text, font) + 10;
    if (lx > 10 && lx + w > width - 10) {
      lx = 10;
      y += 18;
    }
    body << "<g transform=\"translate(" << lx << " " << y << ")\">" << symbol
         << "<text x=\"28\" y=\"0\">" << esc(text) << "</text></g>\n";
    lx += w;
  }
  y += 16;
}

// A panel's plot: its log axes' decades and where they are drawn, the roofs' ends and ridge,
// and the column of the panel's problem.
struct frame {
  const axes& a;
  const peaks& pk;
  int plot_y0 = 0, plot_y1 = 0, plot_h = 0;
  int xlo = 0, xhi = 0, ylo = 0, yhi = 0;
  double column_x = 0;     // one problem per panel: the rows share its x
  std::vector<double> xs;  // the roofs' polyline: the ends, and the ridge between them

  double px(double v) const {
    const double f = std::clamp((std::log10(v) - xlo) / (xhi - xlo), 0.0, 1.0);
    return left + f * plot_w;
  }
  double py(double v) const {
    const double f = std::clamp((std::log10(v) - ylo) / (yhi - ylo), 0.0, 1.0);
    return plot_y1 - f * plot_h;
  }
  double roof(double x) const { return roof_at(x, a, pk); }
};

// The axes' decades: every point, the roofs' corner (the ridge) and the L2 size, with a decade
// to spare on each side of x.
frame frame_of(const panel& p, const peaks& pk, int plot_y0, int plot_h) {
  const axes& a = p.a;
  double x_min = 1e300, x_max = 0, y_min = 1e300, y_max = 0;
  for (const auto& pt : p.points) {
    x_min = std::min(x_min, pt.x);
    x_max = std::max(x_max, pt.x);
    y_min = std::min(y_min, pt.y);
    y_max = std::max(y_max, pt.y);
  }
  const double column_x = x_min;
  if (a.intensity && pk.dram_gbs > 0 && pk.fp32_tflops > 0) {
    const double ridge = 1000 * pk.fp32_tflops / pk.dram_gbs;
    x_min = std::min(x_min, ridge);
    x_max = std::max(x_max, ridge);
  }
  if (!a.intensity && pk.l2_bytes > 0) {
    x_min = std::min(x_min, pk.l2_bytes);
    x_max = std::max(x_max, pk.l2_bytes);
  }
  const int xlo = static_cast<int>(std::floor(std::log10(x_min))) - 1;
  const int xhi = std::max(static_cast<int>(std::ceil(std::log10(x_max))) + 1, xlo + 3);
  for (double xe : {std::pow(10.0, xlo), std::pow(10.0, xhi)}) {
    const double r = roof_at(xe, a, pk);
    if (r > 0) {
      y_max = std::max(y_max, r);
      y_min = std::min(y_min, r);
    }
  }
  const int yhi = static_cast<int>(std::ceil(std::log10(y_max * 1.2)));
  // At most six decades: a point further down sits on the bottom edge (its tooltip has its
  // value).
  const int ylo =
      std::max(std::min(static_cast<int>(std::floor(std::log10(y_min))), yhi - 2), yhi - 6);
  std::vector<double> xs = {std::pow(10.0, xlo), std::pow(10.0, xhi)};
  if (a.intensity && pk.dram_gbs > 0 && pk.fp32_tflops > 0)
    xs.insert(xs.begin() + 1, 1000 * pk.fp32_tflops / pk.dram_gbs);
  return {a, pk, plot_y0, plot_y0 + plot_h, plot_h, xlo, xhi, ylo, yhi, column_x, xs};
}

// The plot's box, its decade grid lines and labels (faint lines at 2x and 5x), and the axes'
// titles. Returns the baseline of the x title's last line.
int write_grid(std::ostream& body, const frame& f, std::size_t pi) {
  const int plot_x1 = left + plot_w;
  body << "<g>\n<clipPath id=\"plot" << pi << "\"><rect x=\"" << left << "\" y=\"" << f.plot_y0
       << "\" width=\"" << plot_w << "\" height=\"" << f.plot_h << "\"/></clipPath>\n";
  body << "<rect x=\"" << left << "\" y=\"" << f.plot_y0 << "\" width=\"" << plot_w
       << "\" height=\"" << f.plot_h << "\" fill=\"none\" stroke=\"black\"/>\n";
  for (int k = f.xlo; k <= f.xhi; ++k) {
    const double gx = f.px(std::pow(10.0, k));
    body << "<line x1=\"" << num(gx) << "\" y1=\"" << f.plot_y0 << "\" x2=\"" << num(gx)
         << "\" y2=\"" << f.plot_y1 << "\" stroke=\"#cccccc\"/><text x=\"" << num(gx) << "\" y=\""
         << f.plot_y1 + 14 << "\" text-anchor=\"middle\">" << decade_label(k, !f.a.intensity)
         << "</text>\n";
    for (int m : {2, 5})
      if (k < f.xhi)
        body << "<line x1=\"" << num(f.px(m * std::pow(10.0, k))) << "\" y1=\"" << f.plot_y0
             << "\" x2=\"" << num(f.px(m * std::pow(10.0, k))) << "\" y2=\"" << f.plot_y1
             << "\" stroke=\"#eeeeee\"/>\n";
  }
  for (int k = f.ylo; k <= f.yhi; ++k) {
    const double gy = f.py(std::pow(10.0, k));
    body << "<line x1=\"" << left << "\" y1=\"" << num(gy) << "\" x2=\"" << plot_x1 << "\" y2=\""
         << num(gy) << "\" stroke=\"#cccccc\"/><text x=\"" << left - 6 << "\" y=\"" << num(gy + 4)
         << "\" text-anchor=\"end\">" << decade_label(k, false) << "</text>\n";
    for (int m : {2, 5})
      if (k < f.yhi)
        body << "<line x1=\"" << left << "\" y1=\"" << num(f.py(m * std::pow(10.0, k)))
             << "\" x2=\"" << plot_x1 << "\" y2=\"" << num(f.py(m * std::pow(10.0, k)))
             << "\" stroke=\"#eeeeee\"/>\n";
  }
  const int mid_y = (f.plot_y0 + f.plot_y1) / 2;
  body << "<text x=\"20\" y=\"" << mid_y << "\" transform=\"rotate(-90 20 " << mid_y
       << ")\" text-anchor=\"middle\">" << (f.a.compute ? "TFLOP/s" : "GB/s") << "</text>\n";
  int ty = f.plot_y1 + 14;
  const std::string x_title =
      f.a.intensity ? "arithmetic intensity: the problem's FLOPs per byte it must move"
                    : "bytes the problem must move (its family counts no FLOPs: no arithmetic "
                      "intensity)";
  for (const auto& line : svg::wrap(x_title, plot_w, font)) {
    ty += line_h + 1;
    body << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << ty << "\" text-anchor=\"middle\">"
         << esc(line) << "</text>\n";
  }
  return ty;
}

// A roof's label along it, `frac` of the way from x0 to x1.
void write_roof_label(std::ostream& body, const frame& f, const std::string& text, double x0,
                      double x1, double frac) {
  const double ax = f.px(x0), ay = f.py(f.roof(x0)), bx = f.px(x1), by = f.py(f.roof(x1));
  const double lx = ax + frac * (bx - ax), ly = ay + frac * (by - ay);
  const double angle = std::atan2(by - ay, bx - ax) * 180 / half_turn_rad;
  body << "<text x=\"" << num(lx) << "\" y=\"" << num(ly - 5) << "\" fill=\"#D55E00\""
       << (frac > 0.5 ? " text-anchor=\"end\"" : "") << " transform=\"rotate(" << num(angle) << " "
       << num(lx) << " " << num(ly) << ")\">" << esc(text) << "</text>\n";
}

// The roofs' labels: the flat one at the right end, a sloped one along its slope.
void write_roof_labels(std::ostream& body, const frame& f) {
  const axes& a = f.a;
  const peaks& pk = f.pk;
  const std::vector<double>& xs = f.xs;
  const std::string dram = "DRAM " + value_text(pk.dram_gbs) + " GB/s";
  const std::string fp32 = pk.compute_name + " peak " + value_text(pk.fp32_tflops) + " TFLOP/s";
  if (xs.size() == 3) {  // both peaks: a slope and a flat roof
    const double ridge = xs[1];
    if (a.compute) {
      write_roof_label(body, f, fp32, ridge, xs[2], 0.97);
      // The slope's label where the slope is inside the plot.
      const double enter = std::max(xs[0], std::pow(10.0, f.ylo) * 1000 / pk.dram_gbs);
      write_roof_label(body, f, dram, enter, ridge, 0.08);
    } else {
      write_roof_label(body, f, dram, xs[0], ridge, 0.03);
      write_roof_label(body, f, fp32 + " / intensity", ridge, xs[2], 0.92);
    }
  } else if (f.roof(xs[0]) > 0) {  // one peak known: one roof, flat or sloped
    const bool flat = !a.intensity || (a.compute ? pk.fp32_tflops > 0 : pk.dram_gbs > 0);
    const std::string text = a.compute ? (pk.fp32_tflops > 0 ? fp32 : dram)
                                       : (pk.dram_gbs > 0 ? dram : fp32 + " / intensity");
    // A flat roof's label at the end away from the rows' column.
    const bool column_right = f.px(f.column_x) > left + plot_w / 2.0;
    write_roof_label(body, f, text, xs[0], xs.back(), !flat ? 0.08 : column_right ? 0.02 : 0.97);
  }
}

// The roofs, as a polyline through the ends and the ridge (straight in log-log), the L2 size and
// the problem's column, clipped to the plot; then their labels.
void write_roofs(std::ostream& body, const frame& f, std::size_t pi, std::size_t blocks) {
  const axes& a = f.a;
  const peaks& pk = f.pk;
  body << "<g clip-path=\"url(#plot" << pi << ")\">\n";
  if (f.roof(f.xs[0]) > 0) {
    body << "<polyline fill=\"none\" stroke=\"#D55E00\" stroke-width=\"2.5\" points=\"";
    for (double xv : f.xs) body << num(f.px(xv)) << "," << num(f.py(f.roof(xv))) << " ";
    body << "\"/>\n";
  }
  if (!a.intensity && pk.l2_bytes > 0)
    body << "<line x1=\"" << num(f.px(pk.l2_bytes)) << "\" y1=\"" << f.plot_y0 << "\" x2=\""
         << num(f.px(pk.l2_bytes)) << "\" y2=\"" << f.plot_y1
         << "\" stroke=\"#555555\" stroke-dasharray=\"4,3\"/>\n";
  // The problem's column.
  body << "<line x1=\"" << num(f.px(f.column_x)) << "\" y1=\"" << f.plot_y0 << "\" x2=\""
       << num(f.px(f.column_x)) << "\" y2=\"" << f.plot_y1
       << "\" stroke=\"#999999\" stroke-dasharray=\"1,3\"/>\n";
  body << "</g>\n";
  write_roof_labels(body, f);
  if (!a.intensity && pk.l2_bytes > 0)
    body << "<text x=\"" << num(f.px(pk.l2_bytes) - 4) << "\" y=\"" << f.plot_y0 + 14
         << "\" text-anchor=\"end\" fill=\"#555555\">L2 " << bytes_text(pk.l2_bytes) << "</text>\n";
  body << "<text x=\"" << num(f.px(f.column_x) + 4 + dodge * (blocks / 2.0)) << "\" y=\""
       << f.plot_y1 - 6 << "\" fill=\"#666666\">"
       << esc(a.intensity ? intensity_text(f.column_x) + " FLOP/byte" : bytes_text(f.column_x))
       << "</text>\n";
}

// A point's x: block sizes side by side, a few pixels apart, around the problem's x.
double dodged_x(const frame& f, const point& pt, const std::vector<unsigned>& block_order) {
  const auto i = std::find(block_order.begin(), block_order.end(), pt.block) - block_order.begin();
  return f.px(pt.x) + dodge * (static_cast<double>(i) - (block_order.size() - 1) / 2.0);
}

// The rows: a circle each, a diamond for the baseline, with the figures as a tooltip.
void write_points(std::ostream& body, const frame& f, const panel& p,
                  const std::vector<unsigned>& block_order) {
  const axes& a = f.a;
  for (const auto& pt : p.points) {
    const double cx = dodged_x(f, pt, block_order), cy = f.py(pt.y);
    const double roof = f.roof(pt.x);
    const std::string tip =
        pt.variant + (pt.block ? " block " + std::to_string(pt.block) : std::string()) + ": " +
        value_text(pt.y) + (a.compute ? " TFLOP/s" : " GB/s") +
        (roof > 0 ? ", " + num(100 * pt.y / roof, "%.0f") + "% of the roof" : std::string()) +
        (a.intensity ? ", " + intensity_text(pt.x) + " FLOP/byte" : ", " + bytes_text(pt.x));
    if (pt.baseline)
      body << "<path class=\"point\" d=\"M" << num(cx) << " " << num(cy - 6) << " L" << num(cx + 6)
           << " " << num(cy) << " L" << num(cx) << " " << num(cy + 6) << " L" << num(cx - 6) << " "
           << num(cy) << " Z\" fill=\"" << svg::colour_for(pt.block)
           << "\" stroke=\"black\" stroke-width=\"1.5\"><title>" << esc(tip) << "</title></path>\n";
    else
      body << "<circle class=\"point\" cx=\"" << num(cx) << "\" cy=\"" << num(cy)
           << "\" r=\"3.5\" fill=\"" << svg::colour_for(pt.block)
           << "\" fill-opacity=\"0.85\"><title>" << esc(tip) << "</title></circle>\n";
  }
}

// The labels: each variant's best row, in a column beside the plot, in the order of the points,
// moved apart just enough not to overlap, each with a line to its point.
void write_labels(std::ostream& body, const frame& f, const panel& p, std::vector<label>& ls,
                  const std::vector<unsigned>& block_order, int label_x) {
  for (std::size_t i = 0; i < ls.size(); ++i) {
    const point& top = best_point(p, p.variants[i]);
    ls[i].point_x = dodged_x(f, top, block_order);
    ls[i].point_y = f.py(top.y);
    ls[i].y = ls[i].point_y + 4;
  }
  std::stable_sort(ls.begin(), ls.end(),
                   [](const label& l, const label& r) { return l.point_y < r.point_y; });
  const double first_y = f.plot_y0 + line_h - 2, last_y = f.plot_y1 + 4;
  for (std::size_t i = 0; i < ls.size(); ++i)
    ls[i].y = std::max(ls[i].y, i ? ls[i - 1].y + line_h : first_y);
  for (std::size_t i = ls.size(); i-- > 0;)
    ls[i].y = std::min(ls[i].y, i + 1 < ls.size() ? ls[i + 1].y - line_h : last_y);
  for (const auto& l : ls) {
    body << "<line x1=\"" << num(l.point_x + 5) << "\" y1=\"" << num(l.point_y) << "\" x2=\""
         << label_x - 3 << "\" y2=\"" << num(l.y - 4) << "\" stroke=\"" << l.colour
         << "\" stroke-opacity=\"0.6\"/><text class=\"label\" x=\"" << label_x << "\" y=\""
         << num(l.y) << "\">" << esc(l.text) << "</text>\n";
  }
}

// One panel: its title (wrapped, never cut) and what is not drawn, then the plot with its grid,
// roofs, points and labels. `y` goes past it.
void write_panel(std::ostream& body, int& y, std::size_t pi, const panel& p, std::vector<label>& ls,
                 const peaks& device_peaks, const std::set<unsigned>& blocks, int width) {
  const peaks pk = panel_peaks(device_peaks, p.a);
  const int plot_h = std::max(min_plot_h, static_cast<int>(ls.size()) * line_h + 2 * line_h);
  const int text_w = width - 20;  // titles wrap inside the image, from x = 10
  y += 12;
  for (const auto& line : svg::wrap(p.title, text_w, title_font)) {
    y += title_h;
    body << "<text class=\"title\" x=\"10\" y=\"" << y << "\" font-size=\"" << title_font
         << "\" font-weight=\"bold\">" << esc(line) << "</text>\n";
  }
  if (p.not_drawn > 0) {
    y += line_h + 2;
    body << "<text x=\"10\" y=\"" << y << "\" fill=\"#D55E00\">" << p.not_drawn << " row"
         << (p.not_drawn == 1 ? "" : "s")
         << " not drawn: failed, wrong, or not timed (docs/results_format.md)</text>\n";
  }
  y += 14;
  const frame f = frame_of(p, pk, y, plot_h);
  const int ty = write_grid(body, f, pi);
  write_roofs(body, f, pi, blocks.size());
  const std::vector<unsigned> block_order(blocks.begin(), blocks.end());
  write_points(body, f, p, block_order);
  write_labels(body, f, p, ls, block_order, left + plot_w + label_gap);
  body << "</g>\n";
  y = ty + 10;
}

}  // namespace

void write_roofline_svg(const json& results, std::ostream& os) {
  const auto& repro = results.at("reproducibility");
  const json& dev = repro.at("device");
  const std::string device = dev.is_object() && dev.contains("name") && dev.at("name").is_string()
                                 ? dev.at("name").get<std::string>()
                                 : "no device";
  const peaks device_peaks = peaks_of(dev);
  const roofline_panels drawn = panels_of(results);
  // The label column is as wide as the longest label of any panel, so that the panels line up.
  std::vector<std::vector<label>> labels = labels_of(drawn.panels, device_peaks);
  int label_w = 0;
  for (const auto& ls : labels)
    for (const auto& l : ls) label_w = std::max(label_w, text_width(l.text, font));
  const int width = left + plot_w + label_gap + label_w + right;

  std::ostringstream body;
  int y = 10;
  for (const auto& line : svg::wrap(heading_of(device, device_peaks, drawn), width - 20, 14)) {
    y += 18;
    body << "<text x=\"10\" y=\"" << y << "\" font-size=\"14\" font-weight=\"bold\">" << esc(line)
         << "</text>\n";
  }
  write_legend(body, y, width, drawn);
  for (std::size_t pi = 0; pi < drawn.panels.size(); ++pi)
    write_panel(body, y, pi, drawn.panels[pi], labels[pi], device_peaks, drawn.blocks, width);
  const int height = y + 10;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
     << "\" font-family=\"sans-serif\" font-size=\"" << font << "\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << body.str() << "</svg>\n";
}

}  // namespace kl
