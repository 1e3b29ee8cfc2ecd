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

// The cells between measured sizes (the `between` rule) as ID_cells[], each with its low and high
// corner per axis and its configuration (whose sizes are the low corner).
void write_cells(std::ostream& h, const std::string& id, const tune::size_selector& sel,
                 const std::vector<std::pair<std::string, std::uint64_t>>& axes,
                 const tune::tuning_space& s) {
  h << "struct " << id << "_cell {\n";
  for (const auto& [name, v] : axes)
    h << "  long long low_" << c_identifier(name) << ", high_" << c_identifier(name) << ";\n";
  h << "  " << id << "_config config;  // its sizes are the cell's low corner\n};\n"
    << "inline constexpr " << id << "_cell " << id << "_cells[] = {\n";
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

}  // namespace

std::string c_identifier(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "_" + out;
  return out;
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

// A constexpr function, so a size known at compile time picks at compile time.
void write_selector(std::ostream& h, const std::string& id,
                    const std::vector<const tune::tune_outcome*>& mine) {
  if (!sizes_alone_differ(mine)) {
    h << "// No " << id << "_select: the table holds more than sizes (dtypes, ops, real axes or "
      << "GPU models);\n// tune one of each at a time for a selector.\n";
    return;
  }
  const tune::size_selector sel = tune::fit_selector(mine);
  const bool cells = sel.rule == tune::selector_rule::between && !sel.cells.empty();
  const auto axes = named_sizes(mine.front()->config, mine.front()->axis_names);
  if (cells) write_cells(h, id, sel, axes, *mine.front()->space);
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
  h << "constexpr double " << id << "_ratio(long long a, long long b) {\n"
    << "  a = a < 1 ? 1 : a;\n  b = b < 1 ? 1 : b;\n"
    << "  return a > b ? static_cast<double>(a) / b : static_cast<double>(b) / a;\n}\n"
    << "constexpr const " << id << "_config& " << id << "_select(";
  for (std::size_t i = 0; i < axes.size(); ++i)
    h << (i ? ", " : "") << "long long " << c_identifier(axes[i].first);
  h << ") {\n";
  const auto each = [&](const char* table) {
    return std::string("  for (unsigned long i = 0; i < sizeof ") + id + "_" + table +
           " / sizeof " + id + "_" + table + "[0]; ++i) {\n";
  };
  if (cells) {
    h << each("configs") << "    if (";
    for (std::size_t i = 0; i < axes.size(); ++i) {
      const std::string a = c_identifier(axes[i].first);
      h << (i ? " && " : "") << id << "_configs[i]." << a << " == " << a;
    }
    h << ") return " << id << "_configs[i];\n  }\n"
      << each("cells") << "    const " << id << "_cell& c = " << id << "_cells[i];\n    if (";
    for (std::size_t i = 0; i < axes.size(); ++i) {
      const std::string a = c_identifier(axes[i].first);
      h << (i ? " &&\n        " : "") << "(c.low_" << a << " == c.high_" << a << " ? " << a
        << " == c.low_" << a << " : c.low_" << a << " < " << a << " && " << a << " < c.high_" << a
        << ")";
    }
    h << ")\n      return c.config;\n  }\n";
  }
  h << "  unsigned long best = 0;\n  double best_d = 0;\n"
    << each("configs") << "    const " << id << "_config& c = " << id << "_configs[i];\n"
    << "    const double d = 1";
  for (const auto& [name, v] : axes)
    h << " * " << id << "_ratio(" << c_identifier(name) << ", c." << c_identifier(name) << ")";
  h << ";\n    if (i == 0 || d < best_d) {\n      best = i;\n      best_d = d;\n    }\n  }\n"
    << "  return " << id << "_configs[best];\n}\n";
}

nlohmann::json selector_json(const std::string& file,
                             const std::vector<const tune::tune_outcome*>& mine) {
  if (mine.empty() || !sizes_alone_differ(mine)) return nullptr;
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

std::string selector_summary(const std::vector<const tune::tune_outcome*>& mine) {
  if (mine.size() < 2 || !sizes_alone_differ(mine)) return "";
  const tune::size_selector sel = tune::fit_selector(mine);
  const auto& c = sel.check;
  std::string out = "size selector: " + std::string(tune::to_string(sel.rule));
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

}  // namespace kl
