#include "report/selector_export.hpp"

#include "report/text_table.hpp"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

namespace kl {
namespace {

std::string percent(double loss) { return fmt("%.2f", loss * 100) + "%"; }

// The values of `point` as one initializer: the sizes given, then the point's parameters.
void write_row(std::ostream& h, const std::vector<std::pair<std::string, std::uint64_t>>& sizes,
               const tune::tuning_space& s, std::size_t point) {
  h << "{";
  bool first = true;
  for (const auto& [name, v] : sizes) {
    h << (first ? "" : ", ") << v;
    first = false;
  }
  for (const auto& [name, v] : s.candidates[point].values) h << ", " << v;
  h << "}";
}

// The struct of a cell between measured sizes: its low and high corner per axis and its
// configuration (whose sizes are the low corner).
void write_cell_struct(std::ostream& h, const std::string& id,
                       const std::vector<std::pair<std::string, std::uint64_t>>& axes) {
  h << "struct " << id << "_cell {\n";
  for (const auto& [name, v] : axes)
    h << "  long long low_" << c_identifier(name) << ", high_" << c_identifier(name) << ";\n";
  h << "  " << id << "_config config;  // its sizes are the cell's low corner\n};\n";
}

// The cells of the `between` rule as TABLE_cells[].
void write_cells(std::ostream& h, const std::string& id, const std::string& table,
                 const tune::size_selector& sel,
                 const std::vector<std::pair<std::string, std::uint64_t>>& axes,
                 const tune::tuning_space& s) {
  h << "inline constexpr " << id << "_cell " << table << "_cells[] = {\n";
  for (const auto& c : sel.cells) {
    h << "    {";
    std::vector<std::pair<std::string, std::uint64_t>> low;
    for (std::size_t i = 0; i < axes.size(); ++i) {
      h << c.low[i] << ", " << c.high[i] << ", ";
      low.emplace_back(axes[i].first, c.low[i]);
    }
    write_row(h, low, s, c.point);
    h << "},  // at worst " << percent(c.worst_loss) << " from a corner's best\n";
  }
  h << "};\n";
}

// The waves rule's part of a header: every point of the space as a configuration, its resident
// blocks, its time at each measured size (0: not measured there), and TABLE_blocks(p, sizes...),
// the blocks of its grid, from the grid's expressions with the point's constants. Points whose
// grids read alike share one case.
void write_waves(std::ostream& h, const std::string& id, const std::string& table,
                 const tune::size_selector& sel,
                 const std::vector<std::pair<std::string, std::uint64_t>>& axes,
                 const tune::tuning_space& s) {
  const std::size_t points = s.candidates.size();
  std::vector<std::pair<std::string, std::uint64_t>> none;
  for (const auto& [name, v] : axes) none.emplace_back(name, 0);
  h << "// Every point of the space (its sizes 0), for the waves rule.\ninline constexpr " << id
    << "_config " << table << "_points[] = {\n";
  for (std::size_t p = 0; p < points; ++p) {
    h << "    ";
    write_row(h, none, s, p);
    h << ",\n";
  }
  h << "};\n// Each point's blocks resident at once on the GPU tuned (0: not known).\n"
    << "inline constexpr long long " << table << "_resident[] = {";
  for (std::size_t p = 0; p < points; ++p) h << (p ? ", " : "") << sel.waves.resident[p];
  h << "};\n// Each point's time (us) at each row of " << table
    << "_configs (0: not measured there).\ninline constexpr double " << table << "_times[]["
    << points << "] = {\n";
  for (const auto& values : sel.values) {
    h << "    {";
    for (std::size_t p = 0; p < points; ++p) {
      const auto it = values.find(p);
      h << (p ? ", " : "")
        << (it == values.end() ? std::string("0") : fmt("%.6g", it->second * 1e3));
    }
    h << "},\n";
  }
  h << "};\n"
    << "constexpr long long " << table << "_ceil_div(long long a, long long b) {\n"
    << "  return a / b + (a % b != 0 && (a < 0) == (b < 0) ? 1 : 0);\n}\n"
    << "constexpr long long " << table
    << "_min(long long a, long long b) { return a < b ? a : b; }\n"
    << "constexpr long long " << table
    << "_max(long long a, long long b) { return a < b ? b : a; }\n"
    << "constexpr long long " << table << "_sqrt(long long a) {\n  long long r = 0;\n"
    << "  while ((r + 1) <= a / (r + 1)) ++r;\n  return r;\n}\n";
  // Each point's case body; points with the same body share it.
  const std::regex call(R"(\b(ceil_div|min|max|sqrt)\s*\()"), word(R"([A-Za-z_][A-Za-z0-9_]*)");
  std::vector<std::pair<std::string, std::vector<std::size_t>>> bodies;
  for (std::size_t p = 0; p < points; ++p) {
    const tune::point_grid& g = (*sel.waves.grids)[p];
    if (g.dims.empty() || sel.waves.resident[p] <= 0) continue;
    std::string product, body;
    std::set<std::string> used;
    for (const auto& d : g.dims) {
      product +=
          (product.empty() ? "(" : " * (") + std::regex_replace(d, call, table + "_$1(") + ")";
      for (std::sregex_iterator it(d.begin(), d.end(), word), end; it != end; ++it)
        used.insert(it->str());
    }
    // A name the header does not know (a family's own launch variable): no blocks for it here,
    // as the fit had none (wave_table::efficiency).
    const auto& names = sel.waves.axis_names;  // the grid's names of the sizes
    const bool known = std::all_of(used.begin(), used.end(), [&](const std::string& name) {
      return name == "RESIDENT_BLOCKS" || g.constants.count(name) || name == "ceil_div" ||
             name == "min" || name == "max" || name == "sqrt" ||
             std::find(names.begin(), names.end(), name) != names.end();
    });
    if (!known) continue;
    for (const auto& name : used)
      if (const auto a = std::find(names.begin(), names.end(), name); a != names.end()) {
        const std::string param =
            c_identifier(axes[static_cast<std::size_t>(a - names.begin())].first);
        if (param != name) body += "const long long " + name + " = " + param + "; ";
      } else if (name == "RESIDENT_BLOCKS")
        body += "const long long RESIDENT_BLOCKS = " + table + "_resident[p]; ";
      else if (const auto c = g.constants.find(name); c != g.constants.end())
        body += "const long long " + name + " = " + std::to_string(c->second) + "; ";
    body += "return " + product + ";";
    auto it =
        std::find_if(bodies.begin(), bodies.end(), [&](const auto& b) { return b.first == body; });
    if (it == bodies.end()) it = bodies.insert(bodies.end(), {body, {}});
    it->second.push_back(p);
  }
  h << "constexpr long long " << table << "_blocks(unsigned long p";
  std::string args;
  for (const auto& [name, v] : axes) {
    h << ", long long " << c_identifier(name);
    args += ", " + c_identifier(name);
  }
  h << ") {\n";
  for (const auto& [name, v] : axes) h << "  static_cast<void>(" << c_identifier(name) << ");\n";
  h << "  switch (p) {\n";
  for (const auto& [body, ps] : bodies) {
    for (std::size_t i = 0; i < ps.size(); ++i)
      h << (i % 8 ? " " : i ? "\n    " : "    ") << "case " << ps[i] << ":";
    h << " {\n      " << body << "\n    }\n";
  }
  h << "    default:\n      return 0;\n  }\n}\n"
    << "// How full the point's last wave of blocks is at these sizes (0: not known).\n"
    << "constexpr double " << table << "_fill(unsigned long p";
  for (const auto& [name, v] : axes) h << ", long long " << c_identifier(name);
  h << ") {\n  const long long b = " << table << "_blocks(p" << args << "), w = " << table
    << "_resident[p];\n  if (b <= 0 || w <= 0) return 0;\n"
    << "  return static_cast<double>(b) / (static_cast<double>((b + w - 1) / w) * w);\n}\n";
}

// The tunes a selector is made of: one group when they differ in their sizes alone; one per GPU
// model (in the order first met) when they differ in their sizes and models alone; none else.
std::vector<std::vector<const tune::tune_outcome*>> selector_groups(
    const std::vector<const tune::tune_outcome*>& mine) {
  if (mine.empty()) return {};
  if (sizes_alone_differ(mine)) return {mine};
  std::vector<std::vector<const tune::tune_outcome*>> out;
  for (const auto* t : mine) {
    if (!tune::same_but_sizes(*mine.front(), *t, true)) return {};
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const auto& g) { return g.front()->model == t->model; });
    if (it == out.end()) it = out.insert(out.end(), std::vector<const tune::tune_outcome*>{});
    it->push_back(t);
  }
  return out;
}

// TABLE_select(sizes...) over TABLE_configs[] (and TABLE_cells[] with the `between` rule), all of
// ID_config: a measured size's own row, the cell's between measured sizes, else the nearest.
void write_one_selector(std::ostream& h, const std::string& id, const std::string& table,
                        const std::vector<const tune::tune_outcome*>& mine, bool& cell_struct) {
  const tune::size_selector sel = tune::fit_selector(mine);
  const bool cells = sel.rule == tune::selector_rule::between && !sel.cells.empty();
  const bool waves = sel.rule == tune::selector_rule::waves;
  const auto axes = named_sizes(mine.front()->config, mine.front()->axis_names);
  if (waves) write_waves(h, id, table, sel, axes, *mine.front()->space);
  if (cells && !cell_struct) {
    write_cell_struct(h, id, axes);
    cell_struct = true;
  }
  if (cells) write_cells(h, id, table, sel, axes, *mine.front()->space);
  h << "// The configuration to launch at any size: ";
  if (cells)
    h << "a measured size's own row; between measured sizes,\n"
      << "// the cell's: the point least bad at the cell's corners (left out in turn, "
      << sel.check.sizes << " measured\n// sizes inside the others' range lost a mean "
      << percent(sel.check.mean_loss_between) << " with it, "
      << percent(sel.check.mean_loss_nearest)
      << " with the nearest size's best); outside\n// the measured range, the measured one "
      << "nearest in log scale, the first on a tie.\n";
  else if (waves)
    h << "a measured size's own row; else, of the points\n"
      << "// measured at the size nearest in log scale, the least time there scaled by how full "
         "the\n"
      << "// point's last wave of blocks is there against here (left out in turn, "
      << sel.check.sizes << " measured sizes\n// " << (sel.check.outside ? "outside" : "inside")
      << " the others' range lost a mean " << percent(sel.check.mean_loss_waves) << " with it, "
      << percent(sel.check.mean_loss_nearest) << " with the nearest size's best, "
      << percent(sel.check.mean_loss_between) << " with the\n// cells' rule).\n";
  else
    h << "the measured one nearest in log scale (the\n"
      << "// product over the axes of larger / smaller), the first on a tie.\n";
  if (!cells && !waves && sel.check.sizes > 0)
    h << "// (Left out in turn, " << sel.check.sizes
      << " measured sizes inside the others' range lost "
      << "a mean " << percent(sel.check.mean_loss_nearest) << " with it, "
      << percent(sel.check.mean_loss_between) << " with the cells' rule.)\n";
  h << "constexpr double " << table << "_ratio(long long a, long long b) {\n"
    << "  a = a < 1 ? 1 : a;\n  b = b < 1 ? 1 : b;\n"
    << "  return a > b ? static_cast<double>(a) / b : static_cast<double>(b) / a;\n}\n"
    << "constexpr const " << id << "_config& " << table << "_select(";
  for (std::size_t i = 0; i < axes.size(); ++i)
    h << (i ? ", " : "") << "long long " << c_identifier(axes[i].first);
  h << ") {\n";
  const auto each = [&](const char* what) {
    return std::string("  for (unsigned long i = 0; i < sizeof ") + table + "_" + what +
           " / sizeof " + table + "_" + what + "[0]; ++i) {\n";
  };
  if (cells) {
    h << each("configs") << "    if (";
    for (std::size_t i = 0; i < axes.size(); ++i) {
      const std::string a = c_identifier(axes[i].first);
      h << (i ? " && " : "") << table << "_configs[i]." << a << " == " << a;
    }
    h << ") return " << table << "_configs[i];\n  }\n"
      << each("cells") << "    const " << id << "_cell& c = " << table << "_cells[i];\n    if (";
    for (std::size_t i = 0; i < axes.size(); ++i) {
      const std::string a = c_identifier(axes[i].first);
      h << (i ? " &&\n        " : "") << "(c.low_" << a << " == c.high_" << a << " ? " << a
        << " == c.low_" << a << " : c.low_" << a << " < " << a << " && " << a << " < c.high_" << a
        << ")";
    }
    h << ")\n      return c.config;\n  }\n";
  }
  h << "  unsigned long best = 0;\n  double best_d = 0;\n"
    << each("configs") << "    const " << id << "_config& c = " << table << "_configs[i];\n"
    << "    const double d = 1";
  for (const auto& [name, v] : axes)
    h << " * " << table << "_ratio(" << c_identifier(name) << ", c." << c_identifier(name) << ")";
  h << ";\n    if (i == 0 || d < best_d) {\n      best = i;\n      best_d = d;\n    }\n  }\n";
  if (waves) {
    std::string at, here;
    for (const auto& [name, v] : axes) {
      at += ", c." + c_identifier(name);
      here += ", " + c_identifier(name);
    }
    h << "  const " << id << "_config& c = " << table << "_configs[best];\n"
      << "  if (best_d == 1) return c;\n"
      << "  unsigned long pick = 0;\n  double pick_time = 0;\n"
      << "  for (unsigned long p = 0; p < sizeof " << table << "_resident / sizeof " << table
      << "_resident[0]; ++p) {\n"
      << "    const double t = " << table << "_times[best][p], there = " << table << "_fill(p" << at
      << "),\n                 here = " << table << "_fill(p" << here << ");\n"
      << "    if (t <= 0 || there <= 0 || here <= 0) continue;\n"
      << "    if (pick_time == 0 || t * there / here < pick_time) {\n"
      << "      pick = p;\n      pick_time = t * there / here;\n    }\n  }\n"
      << "  if (pick_time > 0) return " << table << "_points[pick];\n";
  }
  h << "  return " << table << "_configs[best];\n}\n";
}

}  // namespace

std::string c_identifier(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "_" + out;
  return out;
}

std::string c_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\\' || c == '"' || c == '?')
      out += std::string("\\") + c;
    else if (u < 0x20 || u == 0x7F)
      out += {'\\', static_cast<char>('0' + (u >> 6)), static_cast<char>('0' + (u >> 3 & 7)),
              static_cast<char>('0' + (u & 7))};
    else
      out += c;
  }
  return out + "\"";
}

std::vector<std::pair<std::string, std::uint64_t>> named_sizes(
    const problem_config& c, const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  const auto shape = c.shape();
  if (shape.size() == 1) {
    out.emplace_back("n", shape.front());
    return out;
  }
  for (std::size_t i = 0; i < shape.size(); ++i)
    out.emplace_back(i < names.size() ? names[i] : "D" + std::to_string(i), shape[i]);
  return out;
}

bool sizes_alone_differ(const std::vector<const tune::tune_outcome*>& tunes) {
  return std::all_of(tunes.begin(), tunes.end(),
                     [&](const auto* t) { return tune::same_but_sizes(*t, *tunes.front()); });
}

// Constexpr functions, so a size known at compile time picks at compile time.
void write_selector(std::ostream& h, const std::string& id,
                    const std::vector<const tune::tune_outcome*>& mine) {
  const auto groups = selector_groups(mine);
  if (groups.empty()) {
    h << "// No " << id << "_select: the table holds more than sizes and GPU models (dtypes, ops "
      << "or real axes);\n// tune one of each at a time for a selector.\n";
    return;
  }
  bool cell_struct = false;
  if (groups.size() == 1) {
    write_one_selector(h, id, id, mine, cell_struct);
    return;
  }
  // Several GPU models: a table and a selector of each, and ID_select(model, sizes...) to choose.
  const auto axes = named_sizes(mine.front()->config, mine.front()->axis_names);
  const tune::tuning_space& s = *mine.front()->space;
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const std::string table = id + "_gpu" + std::to_string(k);
    h << "// On " << c_string(groups[k].front()->model) << ":\ninline constexpr " << id
      << "_config " << table << "_configs[] = {\n";
    for (const auto* t : groups[k]) {
      h << "    ";
      write_row(h, named_sizes(t->config, t->axis_names), s, t->best()->point);
      h << ",\n";
    }
    h << "};\n";
    write_one_selector(h, id, table, groups[k], cell_struct);
  }
  h << "// The GPU model's selector (its name as the CUDA driver gives it, cuDeviceGetName); a\n"
    << "// model not tuned gets the first's.\n"
    << "constexpr bool " << id << "_same(const char* a, const char* b) {\n"
    << "  while (*a && *a == *b) ++a, ++b;\n  return *a == *b;\n}\n"
    << "constexpr const " << id << "_config& " << id << "_select(const char* model";
  std::string args;
  for (const auto& [name, v] : axes) {
    h << ", long long " << c_identifier(name);
    args += (args.empty() ? "" : ", ") + c_identifier(name);
  }
  h << ") {\n";
  for (std::size_t k = 1; k < groups.size(); ++k)
    h << "  if (" << id << "_same(model, " << c_string(groups[k].front()->model) << ")) return "
      << id << "_gpu" << k << "_select(" << args << ");\n";
  h << "  return " << id << "_gpu0_select(" << args << ");\n}\n";
}

namespace {

nlohmann::json selector_json_of(const std::string& file,
                                const std::vector<const tune::tune_outcome*>& mine) {
  const tune::tuning_space& s = *mine.front()->space;
  const auto values_of = [&](std::size_t point) {
    nlohmann::json values = nlohmann::json::object();
    for (const auto& [name, v] : s.candidates[point].values) values[name] = v;
    return values;
  };
  const auto sizes_of = [&](const std::vector<std::uint64_t>& at) {
    nlohmann::json sizes = nlohmann::json::object();
    const auto names = named_sizes(mine.front()->config, mine.front()->axis_names);
    for (std::size_t i = 0; i < names.size(); ++i) sizes[names[i].first] = at[i];
    return sizes;
  };
  nlohmann::json table = nlohmann::json::array();
  for (const auto* t : mine)
    table.push_back(
        {{"sizes", sizes_of(t->config.shape())}, {"values", values_of(t->best()->point)}});
  const tune::size_selector sel = tune::fit_selector(mine);
  nlohmann::json cells = nlohmann::json::array();
  for (const auto& c : sel.cells)
    cells.push_back({{"low", sizes_of(c.low)},
                     {"high", sizes_of(c.high)},
                     {"values", values_of(c.point)},
                     {"worst_loss", c.worst_loss}});
  const bool between = sel.rule == tune::selector_rule::between;
  const bool waves = sel.rule == tune::selector_rule::waves;
  nlohmann::json out = {
      {"variant", s.family + "." + s.name},
      {"file", file},
      {"rule", tune::to_string(sel.rule)},
      {"rule_text",
       std::string(between ? "a measured size's own row; between measured sizes, the cell's "
                             "values (least bad at the cell's corners); outside them, "
                   : waves ? "a measured size's own row; else, of the points in `waves` measured "
                             "at the row nearest in log scale, the least time there times its "
                             "fill there / its fill at the sizes asked (fill: blocks / (ceil("
                             "blocks / resident) * resident), blocks the product of the grid's "
                             "expressions); failing that, "
                           : "") +
           "the row whose sizes are nearest in log scale (the product over the axes of "
           "larger / smaller), the first on a tie"},
      {"table", table},
      {"cells", cells},
      {"leave_one_out",
       {{"sizes", sel.check.sizes},
        {"outside", sel.check.outside},
        {"nearest_log",
         {{"mean_loss", sel.check.mean_loss_nearest},
          {"worst_loss", sel.check.worst_loss_nearest}}},
        {"between",
         {{"mean_loss", sel.check.mean_loss_between},
          {"worst_loss", sel.check.worst_loss_between}}}}}};
  if (sel.check.waves)
    out["leave_one_out"]["waves"] = {{"mean_loss", sel.check.mean_loss_waves},
                                     {"worst_loss", sel.check.worst_loss_waves}};
  if (waves) {
    nlohmann::json points = nlohmann::json::array();
    for (std::size_t p = 0; p < s.candidates.size(); ++p) {
      nlohmann::json times = nlohmann::json::array();
      for (const auto& values : sel.values) {
        const auto it = values.find(p);
        times.push_back(it == values.end() ? nlohmann::json() : nlohmann::json(it->second * 1e3));
      }
      points.push_back({{"values", values_of(p)},
                        {"grid", (*sel.waves.grids)[p].dims},
                        {"constants", (*sel.waves.grids)[p].constants},
                        {"resident", sel.waves.resident[p]},
                        {"times_us", times}});
    }
    out["waves"] = points;
  }
  return out;
}

}  // namespace

namespace {

std::string summary_of(const std::vector<const tune::tune_outcome*>& mine,
                       const std::string& where) {
  const tune::size_selector sel = tune::fit_selector(mine);
  const auto& c = sel.check;
  std::string out = "size selector" + where + ": " + std::string(tune::to_string(sel.rule));
  if (c.sizes == 0)
    return out +
           " (no measured size lies between two others with a point measured at both: "
           "nothing to learn a rule between sizes from)";
  if (c.outside)
    out +=
        " (no measured size lies between two others, so each was left out in turn and "
        "predicted from outside the others' range";
  else
    out += " (" + std::to_string(c.sizes) +
           " measured sizes left out in turn, each from inside the others' range";
  return out + ": the nearest size's best lost a mean " + percent(c.mean_loss_nearest) +
         ", worst " + percent(c.worst_loss_nearest) +
         (c.outside
              ? std::string()
              : "; the point least bad at its neighbours lost a mean " +
                    percent(c.mean_loss_between) + ", worst " + percent(c.worst_loss_between)) +
         (c.waves ? "; the nearest size's times scaled wave by wave lost a mean " +
                        percent(c.mean_loss_waves) + ", worst " + percent(c.worst_loss_waves)
                  : std::string()) +
         ")";
}

}  // namespace

std::vector<nlohmann::json> selector_json(const std::string& file,
                                          const std::vector<const tune::tune_outcome*>& all) {
  const auto groups = selector_groups(all);
  std::vector<nlohmann::json> out;
  for (const auto& mine : groups) {
    out.push_back(selector_json_of(file, mine));
    if (groups.size() > 1) out.back()["model"] = mine.front()->model;
  }
  return out;
}

std::string selector_summary(const std::vector<const tune::tune_outcome*>& all) {
  std::string lines;
  const auto groups = selector_groups(all);
  for (const auto& mine : groups)
    if (mine.size() >= 2)
      lines += summary_of(mine, groups.size() > 1 ? " on " + mine.front()->model : "") + "\n";
  if (!lines.empty()) lines.pop_back();
  return lines;
}

}  // namespace kl
