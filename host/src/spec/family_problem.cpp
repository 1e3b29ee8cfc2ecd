// A family.toml's sections that say what the problem is (spec/family_toml.hpp): the family's
// summary, plugin, dtypes, roofline, bytes and flops; its axes; the variables its expressions see,
// with its requirements; and its ops.
#include "spec/family_toml.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>

namespace fs = std::filesystem;

namespace kl::family_toml {

void spec_reader::what_it_is(const std::vector<std::string>& plugin_dirs) {
  if (const toml::node* n = root.get("summary")) s.summary = r.string(*n, "summary");
  // The family plugin's file: in the family's folder, else in a plugin folder.
  if (const toml::node* n = root.get("plugin")) {
    s.plugin_line = reader::line_of(*n);
    const std::string file = r.string(*n, "plugin");
    std::vector<fs::path> tried = {fs::path(file).is_absolute() ? fs::path(file)
                                                                : fs::path(dir) / file};
    if (!fs::path(file).is_absolute())
      for (const auto& d : plugin_dirs) tried.push_back(fs::path(d) / file);
    std::error_code ec;
    for (const auto& t : tried)
      if (fs::is_regular_file(t, ec)) {
        s.plugin = t.lexically_normal().string();
        break;
      }
    if (s.plugin.empty()) {
      std::string where;
      for (const auto& t : tried) where += (where.empty() ? "" : ", ") + t.parent_path().string();
      r.fail(s.plugin_line, "family plugin '" + file + "' not found (looked in " + where + ")");
    }
    r.has_plugin = true;
  }
  const toml::node* dtypes = root.get("dtypes");
  if (!dtypes) r.fail(1, "'dtypes' is missing (e.g. dtypes = [\"float32\"])");
  s.dtypes = r.strings(*dtypes, "dtypes");
  if (s.dtypes.empty()) r.fail(reader::line_of(*dtypes), "dtypes is empty");
  for (const auto& t : s.dtypes)
    if (!is_dtype(t))
      r.fail(reader::line_of(*dtypes),
             "unknown dtype '" + t +
                 "' (expected uint8, int32, int64, float16, bfloat16, float32 or float64)");
  if (const toml::node* n = root.get("roofline")) {
    const std::string v = r.string(*n, "roofline");
    if (v != "bandwidth" && v != "compute" && v != "tensor" && v != "tf32" && v != "fp64")
      r.fail(reader::line_of(*n),
             "roofline '" + v + "': expected bandwidth, compute, tensor, tf32 or fp64");
    s.roofline = v;
  }
  if (const toml::node* n = root.get("bytes")) s.bytes = r.expression(*n, "bytes");
  if (const toml::node* n = root.get("flops")) s.flops = r.expression(*n, "flops");
}

void spec_reader::axes() {
  // Axes, in the order written.
  const toml::node* axes = root.get("axes");
  if (!axes) r.fail(1, "'[axes]' is missing: a family needs at least one axis (e.g. N)");
  const toml::table& at = r.table(*axes, "axes");
  std::vector<std::pair<int, axis_spec>> ordered;
  std::vector<std::pair<int, real_axis_spec>> reals;
  for (auto&& [key, node] : at) {
    axis_spec a;
    a.name = std::string(key.str());
    a.line = reader::line_of(node);
    if (!is_identifier(a.name) || is_reserved_name(a.name))
      r.fail(a.line, "axis name '" + a.name + "' is not an identifier or is reserved");
    const toml::table& t = r.table(node, "axis " + a.name + " ({ default = N, min = N, max = N })");
    r.only_keys(t, {"default", "min", "max", "type"}, "axis " + a.name);
    const toml::node* d = t.get("default");
    if (!d) r.fail(a.line, "axis " + a.name + " needs a 'default'");
    if (const toml::node* ty = t.get("type")) {
      const std::string type = r.string(*ty, a.name + ".type");
      if (type != "size" && type != "real")
        r.fail(reader::line_of(*ty), "axis " + a.name + ": type '" + type +
                                         "': expected size (the default: an integer that "
                                         "expressions see) or real");
      if (type == "real") {
        real_axis_spec x;
        x.name = a.name;
        x.line = a.line;
        x.default_value = r.number(*d, a.name + ".default");
        if (const toml::node* v = t.get("min")) x.min = r.number(*v, a.name + ".min");
        if (const toml::node* v = t.get("max")) x.max = r.number(*v, a.name + ".max");
        if (!std::isfinite(x.default_value) || !std::isfinite(x.min) || !std::isfinite(x.max))
          r.fail(a.line, "axis " + a.name + ": default, min and max must be finite");
        if (x.max < x.min) r.fail(a.line, "axis " + a.name + ": max is below min");
        if (x.default_value < x.min || x.default_value > x.max)
          r.fail(a.line, "axis " + a.name + ": the default is outside [min, max]");
        reals.emplace_back(x.line, x);
        continue;
      }
    }
    a.default_value = r.integer(*d, a.name + ".default");
    if (const toml::node* v = t.get("min")) a.min = r.integer(*v, a.name + ".min");
    if (const toml::node* v = t.get("max")) a.max = r.integer(*v, a.name + ".max");
    if (a.min < 1) r.fail(a.line, "axis " + a.name + ": min must be at least 1");
    if (a.max < a.min) r.fail(a.line, "axis " + a.name + ": max is below min");
    if (a.default_value < a.min || a.default_value > a.max)
      r.fail(a.line, "axis " + a.name + ": the default is outside [min, max]");
    ordered.emplace_back(a.line, a);
  }
  // toml++ keeps a table's keys sorted; the file's order is the --shape order.
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  for (auto& [line, a] : ordered) s.axes.push_back(a);
  std::stable_sort(reals.begin(), reals.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  for (auto& [line, a] : reals) s.real_axes.push_back(a);
  if (s.axes.empty())
    r.fail(reader::line_of(*axes), "[axes] has no size axis: a family needs at least one (e.g. N)");
}

void spec_reader::variables_requirements_and_ops() {
  // The variables every expression of the file sees, at the axes' defaults.
  vars = {{"BLOCK", 256}, {"TSIZE", 4}};
  for (const auto& a : s.axes) vars[a.name] = a.default_value;
  if (const toml::node* n = root.get("require")) {
    if (!n->is_array()) r.fail(reader::line_of(*n), "require must be an array of conditions");
    for (const auto& e : *n->as_array()) {
      const std::string text = r.expression(e, "require's elements");
      s.requires.push_back({text, reader::line_of(*n)});
      // It sees each dtype's TSIZE and DTYPE, and must hold for one of the family's.
      bool holds = false;
      for (const auto& dtype : s.dtypes) {
        auto with_dtype = vars;
        add_dtype_variables(with_dtype, dtype);
        check_expr(text, reader::line_of(*n), "require", with_dtype);
        holds = holds || evaluate(text, with_dtype) != 0;
      }
      if (!holds)
        r.fail(reader::line_of(*n), "require '" + text +
                                        "' does not hold at the axes' defaults for any of the "
                                        "family's dtypes");
    }
  }
  // Operations, in the order written.
  if (const toml::node* ops = root.get("ops")) {
    const toml::table& ot = r.table(*ops, "ops");
    for (auto&& [key, node] : ot) {
      op_spec o;
      o.name = std::string(key.str());
      o.line = reader::line_of(node);
      if (!is_identifier(o.name)) r.fail(o.line, "op name '" + o.name + "' is not an identifier");
      const toml::table& t =
          r.table(node, "op " + o.name + " ({ functor = \"kl::sum<T>\", identity = \"0\" })");
      r.only_keys(t, {"functor", "identity"}, "op " + o.name);
      // Both optional: an op may only name a configuration (entries then cannot use OP), and
      // only the plan passes needs an identity (checked with the plan).
      const toml::node* f = t.get("functor");
      const toml::node* id = t.get("identity");
      if (f) o.functor = r.string(*f, o.name + ".functor");
      if (id)
        o.identity = id->is_string() ? r.string(*id, o.name + ".identity")
                                     : std::to_string(r.number(*id, o.name + ".identity"));
      if (id && o.identity != "max" && o.identity != "lowest") {
        char* end = nullptr;
        std::strtod(o.identity.c_str(), &end);
        if (o.identity.empty() || *end != '\0')
          r.fail(reader::line_of(*id), "op " + o.name + ": identity '" + o.identity +
                                           "': expected a number, \"max\" or \"lowest\"");
      }
      s.ops.push_back(o);
    }
    std::stable_sort(s.ops.begin(), s.ops.end(),
                     [](const op_spec& x, const op_spec& y) { return x.line < y.line; });
    if (s.ops.empty()) r.fail(reader::line_of(*ops), "[ops] is empty");
  }
  s.bytes_line = line_or("bytes", 0);
  s.flops_line = line_or("flops", 0);
  if (!s.bytes.empty()) check_expr(s.bytes, s.bytes_line, "bytes", vars);
  check_expr(s.flops, std::max(s.flops_line, 1), "flops", vars);
}

}  // namespace kl::family_toml
