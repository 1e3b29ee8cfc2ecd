#include "report/exports.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

namespace kl {
namespace {

using nlohmann::json;

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double v, const char* f = "%.1f") {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// Block sizes keep their colour in every panel (colour-blind-safe Okabe-Ito palette).
std::string colour_for(unsigned block) {
  switch (block) {
    case 128: return "#E69F00";
    case 256: return "#56B4E9";
    case 512: return "#009E73";
    case 1024: return "#0072B2";
    case 0: return "#999999";
    default: return "#CC79A7";
  }
}

struct panel {
  std::string title;
  std::vector<std::string> variants;                       // in record order
  std::map<std::string, std::vector<const json*>> rows;    // variant -> its records
  double baseline_gbps = 0;
  std::string baseline_name;
};

constexpr int bar_w = 11, cluster_gap = 14, left = 112, right = 24, plot_h = 240, top = 46,
              label_h = 170, panel_gap = 20;

}  // namespace

void write_svg(const json& results, std::ostream& os) {
  const auto& repro = results.at("reproducibility");
  const double peak = repro.at("device").is_null() ? 0.0
                                                   : repro.at("device").at("peak_bandwidth_gbs").get<double>();
  const std::string device = repro.at("device").is_null() ? "no device"
                                                          : repro.at("device").at("name").get<std::string>();
  // Group the records into panels, keeping the order they came in.
  std::vector<panel> panels;
  std::map<std::string, std::size_t> index;
  std::vector<unsigned> blocks_seen;
  for (const auto& r : results.at("records")) {
    if (r.at("outcome") == "skipped") continue;  // it has nothing to show, not even a failure
    const auto& c = r.at("config");
    const std::string title = r.at("variant").at("family").get<std::string>() + " " +
                              c.at("dtype").get<std::string>() + " " + c.at("op").get<std::string>() +
                              " n=" + std::to_string(c.at("size").get<std::uint64_t>());
    if (!index.count(title)) {
      index[title] = panels.size();
      panels.push_back({title, {}, {}, 0, ""});
    }
    panel& p = panels[index[title]];
    const std::string name = r.at("variant").at("name");
    if (!p.rows.count(name)) p.variants.push_back(name);
    p.rows[name].push_back(&r);
    const unsigned b = r.at("block");
    if (std::find(blocks_seen.begin(), blocks_seen.end(), b) == blocks_seen.end()) blocks_seen.push_back(b);
    if (!r.value("baseline", json()).is_null() && r.at("variant").at("qualified_name") == r.at("baseline") &&
        !r.value("gbps", json()).is_null()) {
      p.baseline_gbps = r.at("gbps");
      p.baseline_name = name;
    }
  }
  std::sort(blocks_seen.begin(), blocks_seen.end());

  // Every panel is as wide as the widest, so that they line up.
  std::size_t widest = 1;
  for (const auto& p : panels) {
    std::size_t w = 0;
    for (const auto& v : p.variants) w += p.rows.at(v).size() * bar_w + cluster_gap;
    widest = std::max(widest, w);
  }
  const int width = left + static_cast<int>(widest) + right;
  const int panel_h = top + plot_h + label_h;
  const int height = 40 + static_cast<int>(panels.size()) * (panel_h + panel_gap) + 10;

  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
     << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<text x=\"" << left << "\" y=\"20\" font-size=\"14\" font-weight=\"bold\">kernlab: GB/s per "
        "variant and block size, "
     << esc(device) << "</text>\n";
  // Legend.
  int lx = left;
  for (unsigned b : blocks_seen) {
    os << "<rect x=\"" << lx << "\" y=\"28\" width=\"10\" height=\"10\" fill=\"" << colour_for(b) << "\"/>"
       << "<text x=\"" << lx + 14 << "\" y=\"37\">" << (b == 0 ? std::string("block n/a") : "block " + std::to_string(b))
       << "</text>\n";
    lx += 90;
  }
  os << "<line x1=\"" << lx << "\" y1=\"33\" x2=\"" << lx + 24 << "\" y2=\"33\" stroke=\"#D55E00\" "
        "stroke-dasharray=\"5,3\" stroke-width=\"2\"/><text x=\""
     << lx + 28 << "\" y=\"37\">theoretical peak</text>\n";
  lx += 140;
  os << "<line x1=\"" << lx << "\" y1=\"33\" x2=\"" << lx + 24 << "\" y2=\"33\" stroke=\"#000000\" "
        "stroke-dasharray=\"2,2\" stroke-width=\"2\"/><text x=\""
     << lx + 28 << "\" y=\"37\">baseline</text>\n";

  for (std::size_t pi = 0; pi < panels.size(); ++pi) {
    const panel& p = panels[pi];
    const int y0 = 40 + static_cast<int>(pi) * (panel_h + panel_gap);
    const int axis_y = y0 + top + plot_h;
    double ymax = std::max(peak, p.baseline_gbps);
    for (const auto& v : p.variants)
      for (const json* r : p.rows.at(v))
        if (!r->value("gbps", json()).is_null()) ymax = std::max(ymax, r->at("gbps").get<double>());
    ymax = ymax <= 0 ? 1 : ymax * 1.08;
    auto y_of = [&](double gbps) { return axis_y - static_cast<int>(gbps / ymax * plot_h); };

    os << "<g>\n<text x=\"" << left << "\" y=\"" << y0 + top - 14 << "\" font-size=\"13\" font-weight=\"bold\">"
       << esc(p.title) << "</text>\n";
    // Grid lines at quarters of the peak (or of the axis, without a device).
    const double step = peak > 0 ? peak / 4 : ymax / 4;
    for (int k = 0; k <= 4; ++k) {
      const double g = step * k;
      if (g > ymax) break;
      os << "<line x1=\"" << left << "\" y1=\"" << y_of(g) << "\" x2=\"" << width - right << "\" y2=\""
         << y_of(g) << "\" stroke=\"#dddddd\"/><text x=\"" << left - 6 << "\" y=\"" << y_of(g) + 4
         << "\" text-anchor=\"end\">" << num(g, "%.0f") << (peak > 0 ? " (" + std::to_string(25 * k) + "%)" : "")
         << "</text>\n";
    }
    os << "<text x=\"16\" y=\"" << y0 + top + plot_h / 2 << "\" transform=\"rotate(-90 16 "
       << y0 + top + plot_h / 2 << ")\" text-anchor=\"middle\">GB/s (% of peak)</text>\n";
    int x = left + cluster_gap / 2;
    for (const auto& v : p.variants) {
      const auto& rows = p.rows.at(v);
      const int cluster_w = static_cast<int>(rows.size()) * bar_w;
      for (const json* r : rows) {
        const std::string outcome = r->at("outcome");
        const unsigned b = r->at("block");
        const std::string label = v + (b ? " block " + std::to_string(b) : std::string());
        if (outcome == "passed") {
          const double g = r->at("gbps");
          os << "<rect class=\"bar\" x=\"" << x << "\" y=\"" << y_of(g) << "\" width=\"" << bar_w - 1 << "\" height=\""
             << axis_y - y_of(g) << "\" fill=\"" << colour_for(b) << "\"><title>" << esc(label) << ": "
             << num(g) << " GB/s</title></rect>\n";
        } else if (outcome == "wrong_result" || outcome == "failed") {
          os << "<text x=\"" << x + bar_w / 2 << "\" y=\"" << axis_y - 3
             << "\" text-anchor=\"middle\" fill=\"#D55E00\" font-weight=\"bold\"><title>" << esc(label) << ": "
             << esc(outcome) << "</title>x</text>\n";
        }
        x += bar_w;
      }
      const int cx = x - cluster_w / 2;
      os << "<text x=\"" << cx << "\" y=\"" << axis_y + 12 << "\" text-anchor=\"end\" transform=\"rotate(-50 "
         << cx << " " << axis_y + 12 << ")\">" << esc(v) << "</text>\n";
      x += cluster_gap;
    }
    os << "<line x1=\"" << left << "\" y1=\"" << axis_y << "\" x2=\"" << width - right << "\" y2=\"" << axis_y
       << "\" stroke=\"black\"/>\n";
    if (peak > 0)
      os << "<line x1=\"" << left << "\" y1=\"" << y_of(peak) << "\" x2=\"" << width - right << "\" y2=\""
         << y_of(peak) << "\" stroke=\"#D55E00\" stroke-dasharray=\"5,3\" stroke-width=\"2\"/>\n";
    if (p.baseline_gbps > 0)
      os << "<line x1=\"" << left << "\" y1=\"" << y_of(p.baseline_gbps) << "\" x2=\"" << width - right
         << "\" y2=\"" << y_of(p.baseline_gbps) << "\" stroke=\"#000000\" stroke-dasharray=\"2,2\" "
            "stroke-width=\"2\"/><text x=\""
         << width - right - 4 << "\" y=\"" << y_of(p.baseline_gbps) - 4 << "\" text-anchor=\"end\">"
         << esc(p.baseline_name) << " " << num(p.baseline_gbps, "%.0f") << " GB/s</text>\n";
    os << "</g>\n";
  }
  os << "</svg>\n";
}

}  // namespace kl
