// A tunable header's space: the values of its `tune:` lines, the points its `require:` conditions
// allow at each block size and dtype, and each point's own descriptor (expand_tunables).
#include "spec/metadata.hpp"

#include "spec/dtypes.hpp"
#include "spec/expression.hpp"
#include "spec/header_text.hpp"
#include "spec/names.hpp"

#include <algorithm>
#include <optional>
#include <sstream>
#include <string>

namespace kl {

using header_text::header_integer;
using header_text::trim;

std::vector<std::int64_t> parse_tunable_values(const std::string& text) {
  constexpr std::size_t max_values = 1024;
  auto integer = [](const std::string& t) {
    std::int64_t v = 0;
    if (!header_integer(t, v)) throw std::invalid_argument("'" + t + "' is not an integer");
    return v;
  };
  std::vector<std::int64_t> out;
  const auto dots = text.find("..");
  if (dots == std::string::npos) {
    for (const auto& item : split_list(text)) {
      const std::int64_t v = integer(item);
      if (std::count(out.begin(), out.end(), v))
        throw std::invalid_argument(item + " is listed twice");
      out.push_back(v);
    }
  } else {
    // a..b, a..b pow2, a..b step s
    std::istringstream words(text.substr(dots + 2));
    std::string hi_text, how, step_text, extra;
    words >> hi_text >> how >> step_text >> extra;
    const std::int64_t lo = integer(trim(text.substr(0, dots))), hi = integer(hi_text);
    if (hi < lo) throw std::invalid_argument("the range " + trim(text) + " is empty");
    if (how.empty()) {
      if (hi - lo + 1 > static_cast<std::int64_t>(max_values))
        throw std::invalid_argument("the range " + trim(text) + " has more than 1024 values");
      for (std::int64_t v = lo; v <= hi; ++v) out.push_back(v);
    } else if (how == "pow2" && step_text.empty()) {
      for (std::int64_t v = 1; v <= hi; v *= 2)
        if (v >= lo) out.push_back(v);
      if (out.empty())
        throw std::invalid_argument("no power of two in " + std::to_string(lo) + ".." + hi_text);
    } else if (how == "step" && !step_text.empty() && extra.empty()) {
      const std::int64_t step = integer(step_text);
      if (step < 1) throw std::invalid_argument("the step must be at least 1");
      if ((hi - lo) / step + 1 > static_cast<std::int64_t>(max_values))
        throw std::invalid_argument("the range " + trim(text) + " has more than 1024 values");
      for (std::int64_t v = lo; v <= hi; v += step) out.push_back(v);
    } else {
      throw std::invalid_argument("'" + trim(text) +
                                  "' is not a range (a..b, a..b pow2 or a..b step s)");
    }
  }
  if (out.empty()) throw std::invalid_argument("no value");
  if (out.size() > max_values) throw std::invalid_argument("more than 1024 values");
  return out;
}

namespace {

// The dtypes header `d`'s requirements must be tried at: those it may run (its `dtypes`, else
// all) when a condition names TSIZE, DTYPE or a dtype; else one, "" (a space of thousands of
// points is expanded at every run, so it is not tried seven times over for nothing).
std::vector<std::string> requirement_dtypes(const variant_descriptor& d) {
  for (const auto& cond : d.requires)
    for (std::size_t i = 0; i < cond.size();) {
      if (!std::isalpha(static_cast<unsigned char>(cond[i])) && cond[i] != '_') {
        ++i;
        continue;
      }
      std::size_t end = i;
      while (end < cond.size() &&
             (std::isalnum(static_cast<unsigned char>(cond[end])) || cond[end] == '_'))
        ++end;
      const std::string word = cond.substr(i, end - i);
      if (word == "TSIZE" || word == "DTYPE" || data_dtype_size(word) != 0)
        return d.dtypes.empty() ? data_dtypes() : d.dtypes;
      i = end;
    }
  return {""};
}

// Whether header `h`'s requirements hold at `point` and `block` for some of `dtypes`, and for all
// of them: they see BLOCK, the tunables, TSIZE and DTYPE.
std::pair<bool, bool> requirements_at(
    const parsed_header& h, const std::vector<std::pair<std::string, std::int64_t>>& point,
    unsigned block, const std::vector<std::string>& dtypes) {
  const variant_descriptor& base = h.descriptor;
  bool some = false, all = true;
  for (const auto& dtype : dtypes) {
    std::map<std::string, std::int64_t> vars = {{"BLOCK", block}};
    if (!dtype.empty()) add_dtype_variables(vars, dtype);
    for (const auto& [name, v] : point) vars[name] = v;
    bool ok = true;
    for (const auto& cond : base.requires) {
      try {
        ok = ok && evaluate(cond, vars) != 0;
      } catch (const expression_error& e) {
        throw metadata_error(base.origin_path, h.line_of("require"),
                             "require: " + std::string(e.what()) +
                                 " (it sees BLOCK, the tunables, TSIZE and DTYPE)");
      }
    }
    some = some || ok;
    all = all && ok;
  }
  return {some, all};
}

}  // namespace

std::vector<parsed_header> expand_tunables(const parsed_header& h,
                                           const std::vector<std::string>& shape_names) {
  const variant_descriptor& base = h.descriptor;
  if (base.tunables.empty()) return {h};
  // The combinations are filtered by `require` as the header is read (every run), so their
  // number is capped to keep that quick; the points left are variants, each its own compile.
  constexpr std::size_t max_combinations = 65536, max_points = 4096;
  const std::vector<std::string> dtypes = requirement_dtypes(base);
  std::size_t total = 1;
  for (const auto& t : base.tunables) {
    total *= t.second.size();
    if (total > max_combinations)
      throw metadata_error(base.origin_path, h.line_of("tune"),
                           "tune: more than " + std::to_string(max_combinations) +
                               " combinations of values; narrow the values or split the file");
  }
  std::vector<parsed_header> out;
  // The named points, in the order given, ahead of the rest (`named[i]`: `points:` item i).
  std::vector<std::optional<parsed_header>> named(h.named_points.size());
  std::size_t kept = 0;
  std::vector<std::size_t> index(base.tunables.size(), 0);
  for (std::size_t n = 0; n < total; ++n) {
    // The point: each tunable's value, the first tunable varying slowest.
    std::vector<std::pair<std::string, std::int64_t>> point;
    for (std::size_t i = 0; i < base.tunables.size(); ++i)
      point.emplace_back(base.tunables[i].first, base.tunables[i].second[index[i]]);
    for (std::size_t i = base.tunables.size(); i-- > 0;) {
      if (++index[i] < base.tunables[i].second.size()) break;
      index[i] = 0;
    }
    // The blocks the requirements allow at this point, at some dtype; where they fail at
    // another dtype, the point keeps them for its rows to skip (variant_descriptor::unmet).
    std::vector<unsigned> blocks;
    bool dtype_bound = false;
    for (unsigned b : base.blocks) {
      const auto [some, all] = requirements_at(h, point, b, dtypes);
      if (some) blocks.push_back(b);
      dtype_bound = dtype_bound || (some && !all);
    }
    if (blocks.empty()) continue;
    parsed_header p = h;
    p.points.clear();
    p.named_points.clear();
    variant_descriptor& d = p.descriptor;
    std::string suffix;
    std::vector<std::pair<std::string, std::string>> params;
    for (const auto& [name, v] : point) {
      suffix += (suffix.empty() ? "" : ";") + name + "=" + std::to_string(v);
      params.emplace_back(name, std::to_string(v));
    }
    d.name = base.name + "[" + suffix + "]";
    d.tunable_file = base.name;
    d.point = point;
    const auto given = std::find_if(h.named_points.begin(), h.named_points.end(),
                                    [&](const named_point& n) { return n.values == point; });
    if (given != h.named_points.end()) {
      d.name = given->name;
      d.named_point = true;
      if (!given->summary.empty()) d.summary = given->summary;
    }
    params.insert(params.end(), base.params.begin(), base.params.end());
    d.params = params;
    d.blocks = blocks;
    d.tunables.clear();
    if (!dtype_bound) d.requires.clear();  // met at every dtype: the blocks are those it allows
    check_expressions(p, shape_names);
    if (given != h.named_points.end())
      named[static_cast<std::size_t>(given - h.named_points.begin())] = std::move(p);
    else
      out.push_back(std::move(p));
    if (++kept > max_points)
      throw metadata_error(base.origin_path, h.line_of(base.requires.empty() ? "tune" : "require"),
                           "more than " + std::to_string(max_points) +
                               " points meet the requirements; narrow the values or split the "
                               "file");
  }
  if (kept == 0)
    throw metadata_error(
        base.origin_path, h.line_of(base.requires.empty() ? "tune" : "require"),
        "require leaves none of the " + std::to_string(total) + " points at any of the blocks");
  std::vector<parsed_header> ordered;
  ordered.reserve(kept);
  for (std::size_t i = 0; i < named.size(); ++i) {
    if (!named[i]) {
      const named_point& n = h.named_points[i];
      std::string values;
      for (const auto& [name, v] : n.values)
        values += (values.empty() ? "" : ", ") + name + "=" + std::to_string(v);
      throw metadata_error(base.origin_path, n.line,
                           "points: " + n.name + "(" + values +
                               ") meets the requirements (require:) at none of the blocks");
    }
    ordered.push_back(std::move(*named[i]));
  }
  for (auto& p : out) ordered.push_back(std::move(p));
  return ordered;
}

}  // namespace kl
