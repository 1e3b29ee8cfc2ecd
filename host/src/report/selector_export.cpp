#include "report/selector_export.hpp"

#include "report/text_table.hpp"

#include <algorithm>
#include <cctype>

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
  const auto axes = named_sizes(mine.front()->config, mine.front()->axis_names);
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
  else
    h << "the measured one nearest in log scale (the\n"
      << "// product over the axes of larger / smaller), the first on a tie.\n";
  if (!cells && sel.check.sizes > 0)
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
  h << ";\n    if (i == 0 || d < best_d) {\n      best = i;\n      best_d = d;\n    }\n  }\n"
    << "  return " << table << "_configs[best];\n}\n";
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
  return {{"variant", s.family + "." + s.name},
          {"file", file},
          {"rule", tune::to_string(sel.rule)},
          {"rule_text",
           std::string(between ? "a measured size's own row; between measured sizes, the cell's "
                                 "values (least bad at the cell's corners); outside them, "
                               : "") +
               "the row whose sizes are nearest in log scale (the product over the axes of "
               "larger / smaller), the first on a tie"},
          {"table", table},
          {"cells", cells},
          {"leave_one_out",
           {{"sizes", sel.check.sizes},
            {"nearest_log",
             {{"mean_loss", sel.check.mean_loss_nearest},
              {"worst_loss", sel.check.worst_loss_nearest}}},
            {"between",
             {{"mean_loss", sel.check.mean_loss_between},
              {"worst_loss", sel.check.worst_loss_between}}}}}};
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
  return out + " (" + std::to_string(c.sizes) +
         " measured sizes left out in turn, each from inside the others' range: the nearest "
         "size's best lost a mean " +
         percent(c.mean_loss_nearest) + ", worst " + percent(c.worst_loss_nearest) +
         "; the point least bad at its neighbours lost a mean " + percent(c.mean_loss_between) +
         ", worst " + percent(c.worst_loss_between) + ")";
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
