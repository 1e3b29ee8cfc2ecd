#include "spec/family_spec.hpp"

#include "core/file_read.hpp"
#include "spec/expression.hpp"
#include "spec/metadata.hpp"

// toml++ (libtomlplusplus-dev) is used header-only, in this file alone: nothing to link, nothing
// to carry to a GPU machine.
#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>

namespace fs = std::filesystem;

namespace kl {
namespace {

// The most read of a family.toml and of a reference kernel (a kernel file's bound, 16 MiB).
constexpr std::uint64_t max_description_bytes = std::uint64_t{1} << 20;
constexpr std::uint64_t max_reference_bytes = std::uint64_t{16} << 20;

const std::vector<std::string> reserved = {"BLOCK",    "TSIZE", "DTYPE", "T",   "RESIDENT_BLOCKS",
                                           "SM_COUNT", "GRID",  "sqrt",  "min", "max",
                                           "ceil_div"};

bool is_identifier(const std::string& s) {
  return !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_') &&
         std::all_of(s.begin(), s.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
         });
}

// Reads one family.toml, keeping its path for every error.
class reader {
 public:
  reader(const std::string& path, const std::string& dir) : path_(path), dir_(dir) {}

  [[noreturn]] void fail(int line, const std::string& why) const {
    throw metadata_error(path_, line, why);
  }
  static int line_of(const toml::node& n) { return static_cast<int>(n.source().begin.line); }

  // Every key of `t` must be one of `allowed`.
  void only_keys(const toml::table& t, const std::vector<std::string>& allowed,
                 const std::string& where) const {
    for (auto&& [key, node] : t) {
      const std::string k(key.str());
      if (std::find(allowed.begin(), allowed.end(), k) != allowed.end()) continue;
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      fail(line_of(node),
           "unknown key '" + k + "' in " + where + " (expected one of: " + list + ")");
    }
  }

  const toml::table& table(const toml::node& n, const std::string& what) const {
    if (!n.is_table()) fail(line_of(n), what + " must be a table");
    return *n.as_table();
  }
  std::string string(const toml::node& n, const std::string& what) const {
    if (!n.is_string()) fail(line_of(n), what + " must be a string");
    return n.as_string()->get();
  }
  // An expression: a string, or an integer written as a number.
  std::string expression(const toml::node& n, const std::string& what) const {
    if (n.is_integer()) return std::to_string(n.as_integer()->get());
    if (!n.is_string())
      fail(line_of(n), what + " must be an expression (a string such as \"ROWS * COLS\")");
    return n.as_string()->get();
  }
  std::int64_t integer(const toml::node& n, const std::string& what) const {
    if (!n.is_integer()) fail(line_of(n), what + " must be an integer");
    return n.as_integer()->get();
  }
  double number(const toml::node& n, const std::string& what) const {
    if (n.is_integer()) return static_cast<double>(n.as_integer()->get());
    if (!n.is_floating_point()) fail(line_of(n), what + " must be a number");
    return n.as_floating_point()->get();
  }
  std::vector<std::string> strings(const toml::node& n, const std::string& what) const {
    if (!n.is_array()) fail(line_of(n), what + " must be an array of strings");
    std::vector<std::string> out;
    for (const auto& e : *n.as_array()) out.push_back(string(e, what + "'s elements"));
    return out;
  }
  std::vector<std::string> expressions(const toml::node& n, const std::string& what) const {
    if (!n.is_array()) fail(line_of(n), what + " must be an array of expressions");
    std::vector<std::string> out;
    for (const auto& e : *n.as_array()) out.push_back(expression(e, what + "'s elements"));
    if (out.empty() || out.size() > 3) fail(line_of(n), what + " needs 1 to 3 dimensions");
    return out;
  }

  generator_spec generator(const toml::node& n, const std::string& what) const {
    const toml::table& t = table(n, what + " (a generator such as { kind = \"uniform\" })");
    generator_spec g;
    g.line = line_of(n);
    const toml::node* kind = t.get("kind");
    if (!kind) fail(g.line, what + " needs a 'kind'");
    g.kind = string(*kind, what + ".kind");
    static const std::map<std::string, std::vector<std::string>> keys = {
        {"grid", {"kind", "den", "min", "max"}}, {"uniform", {"kind", "min", "max"}},
        {"normal", {"kind", "mean", "stddev"}},  {"constant", {"kind", "value"}},
        {"iota", {"kind", "start", "step"}},     {"npy", {"kind", "file"}},
        {"plugin", {"kind", "function"}}};
    auto it = keys.find(g.kind);
    if (it == keys.end())
      fail(line_of(*kind), "unknown generator '" + g.kind +
                               "' (expected grid, uniform, normal, constant, iota, npy or plugin)");
    only_keys(t, it->second, what);
    auto num = [&](const char* key, double& out) {
      if (const toml::node* v = t.get(key)) out = number(*v, what + "." + key);
    };
    num("den", g.den);
    num("min", g.min);
    num("max", g.max);
    num("mean", g.mean);
    num("stddev", g.stddev);
    num("value", g.value);
    num("start", g.start);
    num("step", g.step);
    if (g.kind == "grid" || g.kind == "uniform") {
      if (!t.get("min") || !t.get("max")) fail(g.line, what + " needs 'min' and 'max'");
      if (!(g.min <= g.max)) fail(g.line, what + ": min is above max");
    }
    if (g.kind == "grid" && !(g.den >= 1))
      fail(g.line, what + ": den must be at least 1 (values are k / den)");
    if (g.kind == "normal" && !(g.stddev >= 0)) fail(g.line, what + ": stddev is negative");
    if (g.kind == "constant" && !t.get("value")) fail(g.line, what + " needs a 'value'");
    if (g.kind == "plugin") {
      const toml::node* f = t.get("function");
      if (!f) fail(g.line, what + " needs a 'function' (the family plugin's generator)");
      g.function = string(*f, what + ".function");
      if (!has_plugin)
        fail(g.line, what + ": a plugin generator needs the family's 'plugin' (its file)");
    }
    if (g.kind == "npy") {
      const toml::node* f = t.get("file");
      if (!f) fail(g.line, what + " needs a 'file'");
      g.file = (fs::path(dir_) / string(*f, what + ".file")).string();
      std::error_code ec;
      if (!fs::is_regular_file(g.file, ec)) fail(line_of(*f), g.file + " does not exist");
    }
    return g;
  }

  std::string path_, dir_;

 public:
  bool has_plugin = false;  // the description names a family plugin
};

// A reference kernel's text, read as every file kernlab did not write (core/file_read.hpp); ""
// when it cannot be (the caller says so, naming it).
std::string read_text(const std::string& path) {
  return read_regular_file(path, max_reference_bytes).bytes;
}

bool is_dtype(const std::string& t) { return data_dtype_size(t) != 0; }

}  // namespace

const buffer_spec* family_spec::buffer(const std::string& n) const {
  for (const auto& b : buffers)
    if (b.name == n) return &b;
  return nullptr;
}

const op_spec* family_spec::op(const std::string& n) const {
  for (const auto& o : ops)
    if (o.name == n) return &o;
  return nullptr;
}

std::string cxx_type_of(const std::string& dtype) {
  if (dtype == "uint8") return "unsigned char";
  if (dtype == "int32") return "int";
  if (dtype == "int64") return "long long";
  if (dtype == "float32") return "float";
  if (dtype == "float64") return "double";
  if (dtype == "float16") return "__half";          // cuda_fp16.h
  if (dtype == "bfloat16") return "__nv_bfloat16";  // cuda_bf16.h
  return dtype;
}

bool is_reserved_name(const std::string& name) {
  return std::find(reserved.begin(), reserved.end(), name) != reserved.end() ||
         is_dtype(name);  // a require's constants (DTYPE == float32)
}

namespace {

// How an out buffer with a start (init = "zero") or an inout buffer gets it back before every
// launch: `reset = "timed"` (the default) inside the timed region, `"untimed"` outside it.
void read_reset(const reader& r, const toml::table& t, buffer_spec& b) {
  const toml::node* reset = t.get("reset");
  if (!reset) return;
  if (!b.has_start())
    r.fail(reader::line_of(*reset),
           "buffer " + b.name +
               ": 'reset' belongs to a buffer with a start (an inout buffer, or an out buffer "
               "with init = \"zero\")");
  const std::string when = r.string(*reset, "reset");
  if (when != "timed" && when != "untimed")
    r.fail(reader::line_of(*reset), "reset '" + when + "': expected timed or untimed");
  b.reset_timed = when == "timed";
}

// What a buffer starts with: generators for an in or inout buffer (one per input mode), or
// init = "zero" for an out buffer the kernel accumulates into.
void read_start(const reader& r, const toml::table& t, buffer_spec& b) {
  const toml::node* init = t.get("init");
  const toml::node* exact = t.get("exact");
  const toml::node* random = t.get("random");
  if (b.role == buffer_role::out && init && !exact && !random) {
    if (!init->is_string() || init->as_string()->get() != "zero")
      r.fail(reader::line_of(*init),
             "buffer " + b.name +
                 ": an out buffer's init is \"zero\" (the kernel accumulates into it); for "
                 "other starting values make it an inout buffer with a generator");
    b.zero = true;
  } else if (b.role == buffer_role::in || b.role == buffer_role::inout) {
    if (init && (exact || random))
      r.fail(b.line, "buffer " + b.name + ": give 'init', or 'exact' and 'random', not both");
    if (!init && !(exact && random))
      r.fail(b.line, "input buffer " + b.name +
                         " needs 'init' (a generator), or both 'exact' and 'random'");
    b.exact = r.generator(init ? *init : *exact, b.name + (init ? ".init" : ".exact"));
    b.random = init ? b.exact : r.generator(*random, b.name + ".random");
  } else if (init || exact || random) {
    r.fail(b.line, "buffer " + b.name + " is not an input: it takes no generator" +
                       (b.role == buffer_role::out ? " (init = \"zero\" starts it at zero)" : ""));
  }
  read_reset(r, t, b);
}

// One [[buffers]] table. Its count must evaluate, and hold at least one element, at the axes'
// defaults (`vars`).
buffer_spec read_buffer(const reader& r, const toml::node& node, const family_spec& s,
                        const std::map<std::string, std::int64_t>& vars) {
  const toml::table& t = r.table(node, "[[buffers]]");
  buffer_spec b;
  b.line = reader::line_of(node);
  r.only_keys(t, {"name", "role", "type", "count", "init", "exact", "random", "reset"},
              "[[buffers]]");
  auto need = [&](const char* key) -> const toml::node& {
    const toml::node* n = t.get(key);
    if (!n) r.fail(b.line, std::string("a buffer needs '") + key + "'");
    return *n;
  };
  b.name = r.string(need("name"), "name");
  if (!is_identifier(b.name)) r.fail(b.line, "buffer name '" + b.name + "' is not an identifier");
  if (s.buffer(b.name)) r.fail(b.line, "buffer '" + b.name + "' is declared twice");
  static const std::map<std::string, buffer_role> roles = {{"in", buffer_role::in},
                                                           {"out", buffer_role::out},
                                                           {"inout", buffer_role::inout},
                                                           {"workspace", buffer_role::workspace}};
  const std::string role = r.string(need("role"), "role");
  const auto known = roles.find(role);
  if (known == roles.end())
    r.fail(reader::line_of(need("role")),
           "role '" + role + "': expected in, out, inout or workspace");
  b.role = known->second;
  b.type = r.string(need("type"), "type");
  if (b.type != "T" && !is_dtype(b.type))
    r.fail(reader::line_of(need("type")),
           "type '" + b.type +
               "': expected T, uint8, int32, int64, float16, bfloat16, float32 or float64");
  b.count = r.expression(need("count"), "count");
  const int count_line = reader::line_of(need("count"));
  std::int64_t n = 0;
  try {
    n = evaluate(b.count, vars);
  } catch (const expression_error& e) {
    r.fail(count_line, "count '" + b.count + "': " + e.what());
  }
  if (n < 1)
    r.fail(count_line, "count '" + b.count + "' is " + std::to_string(n) +
                           " at the axes' defaults; a buffer holds at least one element");
  read_start(r, t, b);
  return b;
}

// The pipeline (kernlab --pipeline): the problem cut along one size axis into chunks, each
// chunk a problem of its own whose buffers are slices of the whole ones. So every in and out
// buffer must be that axis times a constant (at the other axes' defaults), and no workspace.
void read_pipeline(const reader& r, const toml::node& p,
                   const std::map<std::string, std::int64_t>& vars, family_spec& s) {
  const toml::table& pt = r.table(p, "pipeline ({ axis = \"N\" })");
  r.only_keys(pt, {"axis"}, "[pipeline]");
  const toml::node* a = pt.get("axis");
  if (!a) r.fail(reader::line_of(p), "[pipeline] needs 'axis' (the size axis it cuts)");
  s.pipeline_axis = r.string(*a, "axis");
  s.pipeline_line = reader::line_of(*a);
  const auto axis = std::find_if(s.axes.begin(), s.axes.end(),
                                 [&](const axis_spec& x) { return x.name == s.pipeline_axis; });
  if (axis == s.axes.end())
    r.fail(s.pipeline_line, "[pipeline] axis '" + s.pipeline_axis + "' is not a size axis");
  if (s.plan != launch_plan::single)
    r.fail(s.pipeline_line, "[pipeline] needs the plan single (one launch per chunk)");
  for (const auto& b : s.buffers) {
    if (b.role == buffer_role::workspace)
      r.fail(b.line, "[pipeline]: buffer " + b.name + " is a workspace, which a chunk cannot cut");
    if (b.has_start())
      r.fail(b.line, "[pipeline]: buffer " + b.name +
                         " has a start (inout, or init = \"zero\"), which the pipeline does not "
                         "restore per chunk");
    const std::string linear = "[pipeline]: buffer " + b.name + "'s count '" + b.count +
                               "' is not a multiple of " + s.pipeline_axis +
                               " (a chunk of the axis must be a slice of the buffer)";
    // The count at chunks of 1, 2 and many units, all within the axis' limits: a count that does
    // not evaluate there (an overflow) is the buffer's error, not kernlab's.
    std::int64_t unit = 0;
    for (const std::int64_t units : {std::int64_t{1}, std::int64_t{2}, std::int64_t{1000003}}) {
      auto x = vars;
      x[s.pipeline_axis] = std::min(units, axis->max);
      std::int64_t count = 0;
      try {
        count = evaluate(b.count, x);
      } catch (const expression_error& e) {
        r.fail(b.line, "[pipeline]: buffer " + b.name + "'s count at " + s.pipeline_axis + " = " +
                           std::to_string(x[s.pipeline_axis]) + ": " + e.what());
      }
      if (units == 1) unit = count;
      std::int64_t expected = 0;
      if (unit < 1 || __builtin_mul_overflow(unit, x[s.pipeline_axis], &expected) ||
          count != expected)
        r.fail(b.line, linear);
    }
  }
}

// Reads a family.toml's sections into `s`, in the order they depend on each other: what the
// family is (dtypes, roofline, plugin), its axes, the variables its expressions see with its
// requirements and ops, its buffers, its kernel's signature and launch, its reference, its
// comparison rule, its baseline and pipeline. Every error names the file and line (reader::fail).
class spec_reader {
 public:
  spec_reader(reader& r, const toml::table& root, family_spec& s, const std::string& dir)
      : r(r), root(root), s(s), dir(dir) {}

  void what_it_is(const std::vector<std::string>& plugin_dirs);
  void axes();
  void variables_requirements_and_ops();
  void buffers();
  void kernel();
  void reference();
  void comparison();
  void baseline_and_pipeline();

 private:
  // An expression must evaluate with `v`; else the error names `line`.
  void check_expr(const std::string& e, int line, const std::string& what,
                  const std::map<std::string, std::int64_t>& v) const {
    try {
      evaluate(e, v);
    } catch (const expression_error& ex) {
      r.fail(line, what + " '" + e + "': " + ex.what());
    }
  }
  // The line of a top-level key, `fallback` when it is absent.
  int line_or(const char* key, int fallback) const {
    const toml::node* n = root.get(key);
    return n ? reader::line_of(*n) : fallback;
  }

  reader& r;
  const toml::table& root;
  family_spec& s;
  const std::string& dir;  ///< the family's folder
  /// The variables every expression of the file sees, at the axes' defaults
  /// (variables_requirements_and_ops() makes them), and with the launch's own (kernel()).
  std::map<std::string, std::int64_t> vars, grid_vars;
};

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

void spec_reader::buffers() {
  // Buffers.
  const toml::node* buffers = root.get("buffers");
  if (!buffers || !buffers->is_array())
    r.fail(buffers ? reader::line_of(*buffers) : 1,
           "'[[buffers]]' is missing: a family needs at least one in and one out buffer");
  for (const auto& node : *buffers->as_array()) s.buffers.push_back(read_buffer(r, node, s, vars));
  auto has_role = [&](buffer_role role) {
    return std::any_of(s.buffers.begin(), s.buffers.end(),
                       [&](const buffer_spec& b) { return b.role == role; });
  };
  if (!has_role(buffer_role::out) && !has_role(buffer_role::inout))
    r.fail(reader::line_of(*buffers),
           "no buffer has role 'out' or 'inout': there is nothing to compare");
}

void spec_reader::kernel() {
  // The kernel's signature and default launch.
  const toml::node* kernel = root.get("kernel");
  if (!kernel) r.fail(1, "'[kernel]' is missing (its 'args' are the variants' parameters)");
  const toml::table& kt = r.table(*kernel, "kernel");
  s.kernel_line = reader::line_of(*kernel);
  r.only_keys(kt, {"args", "block_dims", "grid_dims", "plan", "includes", "pad", "plugin_sizes"},
              "[kernel]");
  if (const toml::node* n = kt.get("plan")) {
    const std::string plan = r.string(*n, "plan");
    if (plan == "passes")
      s.plan = launch_plan::passes;
    else if (plan != "single")
      r.fail(reader::line_of(*n), "plan '" + plan + "': expected single or passes");
  }
  if (const toml::node* n = kt.get("includes")) s.includes = r.strings(*n, "includes");
  if (const toml::node* n = kt.get("pad")) {
    const std::int64_t pad = r.integer(*n, "pad");
    if (pad < 1) r.fail(reader::line_of(*n), "pad must be at least 1");
    if (s.plan != launch_plan::passes) r.fail(reader::line_of(*n), "pad belongs to plan passes");
    s.pad = static_cast<std::uint64_t>(pad);
  }
  if (s.plan == launch_plan::passes) {
    for (const auto& o : s.ops)
      if (o.identity.empty())
        r.fail(o.line, "op " + o.name + " needs an 'identity': plan passes pads its input with it");
    // One input reduced to one value: the engine relaunches the kernel on its partial results.
    const auto count = [&](buffer_role role) {
      return std::count_if(s.buffers.begin(), s.buffers.end(),
                           [&](const buffer_spec& b) { return b.role == role; });
    };
    if (count(buffer_role::in) != 1 || count(buffer_role::out) != 1 ||
        count(buffer_role::inout) != 0 || count(buffer_role::workspace) != 0)
      r.fail(s.kernel_line,
             "plan passes needs one in buffer, one out buffer and no inout or workspace buffer (a "
             "variant's header declares its own workspace)");
    for (const auto& b : s.buffers)
      if (b.zero)
        r.fail(b.line, "plan passes: the out buffer " + b.name +
                           " is each pass's own output, not a start at zero (no init)");
    for (const auto& b : s.buffers)
      if (b.role == buffer_role::out && evaluate(b.count, vars) != 1)
        r.fail(b.line, "plan passes: the out buffer " + b.name + " holds one element (count 1)");
    if (s.ops.empty())
      r.fail(s.kernel_line, "plan passes needs [ops]: their identities pad the input");
    vars["PASS_N"] = vars.at(s.axes.front().name);  // the elements one pass reads
  }
  if (const toml::node* n = kt.get("plugin_sizes")) {
    auto sizes_vars = vars;
    if (s.plan == launch_plan::passes) sizes_vars["PADDED_N"] = 1;
    if (!n->is_array()) r.fail(reader::line_of(*n), "plugin_sizes must be an array");
    for (const auto& e : *n->as_array()) {
      s.plugin_sizes.push_back(r.expression(e, "plugin_sizes' elements"));
      check_expr(s.plugin_sizes.back(), reader::line_of(e), "plugin_sizes", sizes_vars);
    }
  }
  const toml::node* args = kt.get("args");
  if (!args || !args->is_array()) r.fail(s.kernel_line, "[kernel] needs 'args' (an array)");
  for (const auto& a : *args->as_array()) {
    arg_spec arg;
    arg.line = reader::line_of(a);
    if (a.is_table()) {
      const toml::table& t = *a.as_table();
      r.only_keys(t, {"value", "type"}, "an argument");
      const toml::node* v = t.get("value");
      if (!v) r.fail(arg.line, "an argument table needs 'value'");
      arg.expression = r.expression(*v, "value");
      if (const toml::node* ty = t.get("type")) arg.type = r.string(*ty, "type");
      if (arg.type != "int32" && arg.type != "int64" && arg.type != "uint32" &&
          arg.type != "uint64")
        r.fail(arg.line,
               "argument type '" + arg.type + "': expected int32, int64, uint32 or uint64");
    } else {
      const std::string text = r.expression(a, "an argument");
      if (s.buffer(text))
        arg.buffer = text;
      else
        arg.expression = text;
    }
    if (!arg.expression.empty())
      check_expr(arg.expression, arg.line,
                 "argument (neither a buffer nor an expression over the axes)", vars);
    s.args.push_back(arg);
  }
  for (const auto& b : s.buffers)
    if (std::none_of(s.args.begin(), s.args.end(),
                     [&](const arg_spec& a) { return a.buffer == b.name; }))
      r.fail(b.line, "buffer " + b.name + " is not among [kernel] args");
  grid_vars = vars;
  grid_vars["RESIDENT_BLOCKS"] = 1024;
  grid_vars["SM_COUNT"] = 132;
  if (const toml::node* n = kt.get("block_dims")) {
    s.block_dims = r.expressions(*n, "block_dims");
    for (const auto& e : s.block_dims) check_expr(e, reader::line_of(*n), "block_dims", vars);
  }
  const toml::node* grid = kt.get("grid_dims");
  if (grid) {
    if (s.plan == launch_plan::passes)
      r.fail(reader::line_of(*grid),
             "plan passes takes its grids from the variants' headers "
             "(tile, grid), not grid_dims");
    s.grid_dims = r.expressions(*grid, "grid_dims");
    for (const auto& e : s.grid_dims) check_expr(e, reader::line_of(*grid), "grid_dims", grid_vars);
  } else if (s.plan == launch_plan::single) {
    r.fail(s.kernel_line, "[kernel] needs 'grid_dims' (the default launch)");
  }
}

void spec_reader::reference() {
  // The reference kernel.
  const toml::node* ref = root.get("reference");
  if (!ref) r.fail(1, "'[reference]' is missing (the kernel whose result the variants must match)");
  const toml::table& rt = r.table(*ref, "reference");
  s.reference.line = reader::line_of(*ref);
  r.only_keys(rt, {"file", "entry", "plugin", "type", "block", "block_dims", "grid_dims"},
              "[reference]");
  const toml::node* file = rt.get("file");
  const toml::node* entry = rt.get("entry");
  if (const toml::node* fn = rt.get("plugin")) {
    // A function of the family plugin, on the host: no kernel, so no file, entry or launch.
    s.reference.plugin_function = r.string(*fn, "plugin");
    if (!r.has_plugin)
      r.fail(reader::line_of(*fn), "[reference] plugin needs the family's 'plugin' (its file)");
    for (const char* k : {"file", "entry", "type", "block", "block_dims", "grid_dims"})
      if (const toml::node* n = rt.get(k))
        r.fail(reader::line_of(*n), std::string("[reference] plugin takes no '") + k +
                                        "' (the plugin writes each output in its own type)");
    s.reference.type = "T";
  } else if (!file || !entry) {
    r.fail(s.reference.line, "[reference] needs 'file' and 'entry', or 'plugin'");
  }
  if (!s.reference.plugin_function.empty()) {
    // Nothing more to read about the reference.
  } else {
    s.reference.file = (fs::path(dir) / r.string(*file, "file")).string();
    s.reference.entry = r.string(*entry, "entry");
    std::error_code ec;
    if (!fs::is_regular_file(s.reference.file, ec))
      r.fail(reader::line_of(*file), s.reference.file + " does not exist");
    s.reference.source = read_text(s.reference.file);
    if (s.reference.source.empty())
      r.fail(reader::line_of(*file), s.reference.file + " is empty or cannot be read");
    if (const toml::node* n = rt.get("type")) {
      s.reference.type = r.string(*n, "type");
      if (s.reference.type != "float64" && s.reference.type != "T")
        r.fail(reader::line_of(*n),
               "reference type '" + s.reference.type + "': expected float64 or T");
    }
    if (const toml::node* n = rt.get("block")) {
      const std::int64_t b = r.integer(*n, "block");
      if (b < 1 || b > 1024) r.fail(reader::line_of(*n), "reference block must be 1..1024");
      s.reference.block = static_cast<unsigned>(b);
    }
    std::map<std::string, std::int64_t> ref_vars = grid_vars;
    ref_vars["BLOCK"] = s.reference.block;
    if (const toml::node* n = rt.get("block_dims")) {
      s.reference.block_dims = r.expressions(*n, "block_dims");
      for (const auto& e : s.reference.block_dims)
        check_expr(e, reader::line_of(*n), "block_dims", ref_vars);
    }
    if (const toml::node* n = rt.get("grid_dims")) {
      s.reference.grid_dims = r.expressions(*n, "grid_dims");
      for (const auto& e : s.reference.grid_dims)
        check_expr(e, reader::line_of(*n), "grid_dims", ref_vars);
    } else {
      s.reference.grid_dims = s.grid_dims;
    }
  }  // the reference kernel
}

void spec_reader::comparison() {
  // The comparison rule: [compare] for both input modes, [compare.random] for random inputs.
  auto read_compare = [&](const toml::table& ct, int line, const std::string& where,
                          bool may_nest) {
    compare_spec c;
    c.line = line;
    std::vector<std::string> keys = {"rule", "max_ulp", "abs", "rel", "tol", "terms"};
    if (may_nest) keys.push_back("random");
    r.only_keys(ct, keys, where);
    if (const toml::node* n = ct.get("rule")) c.rule = r.string(*n, "rule");
    static const std::map<std::string, std::vector<std::string>> needs = {
        {"exact", {}},     {"bytes", {}},          {"ulp", {"max_ulp"}},
        {"tolerance", {}}, {"frobenius", {"tol"}}, {"bound", {"terms"}}};
    auto it = needs.find(c.rule);
    if (it == needs.end())
      r.fail(line, "compare rule '" + c.rule +
                       "': expected exact, bytes, ulp, tolerance, frobenius or bound");
    for (const auto& k : it->second)
      if (!ct.get(k)) r.fail(line, "rule " + c.rule + " needs '" + k + "'");
    if (c.rule == "tolerance" && !ct.get("abs") && !ct.get("rel"))
      r.fail(line, "rule tolerance needs 'abs', 'rel' or both");
    auto num = [&](const char* key, double& out) {
      if (const toml::node* v = ct.get(key)) {
        out = r.number(*v, key);
        if (!(out >= 0)) r.fail(reader::line_of(*v), std::string(key) + " must be >= 0");
      }
    };
    num("max_ulp", c.max_ulp);
    num("abs", c.abs);
    num("rel", c.rel);
    num("tol", c.tol);
    if (const toml::node* n = ct.get("terms")) {
      c.terms = r.expression(*n, "terms");
      check_expr(c.terms, reader::line_of(*n), "terms", vars);
    }
    if (c.rule == "bytes" && s.reference.type != "T")
      r.fail(line, "rule bytes compares with a reference of type T, not " + s.reference.type);
    if (c.rule == "bound" && s.reference.type != "float64")
      r.fail(line,
             "rule bound needs a reference of type float64 (it writes the magnitudes "
             "in double), not " +
                 s.reference.type);
    return c;
  };
  if (const toml::node* cmp = root.get("compare")) {
    const toml::table& ct = r.table(*cmp, "compare");
    s.compare = read_compare(ct, reader::line_of(*cmp), "[compare]", true);
    if (const toml::node* rnd = ct.get("random"))
      s.compare_random = read_compare(r.table(*rnd, "compare.random"), reader::line_of(*rnd),
                                      "[compare.random]", false);
  }
}

void spec_reader::baseline_and_pipeline() {
  // The baseline.
  if (const toml::node* base = root.get("baseline")) {
    const toml::table& bt = r.table(*base, "baseline");
    s.baseline.line = reader::line_of(*base);
    r.only_keys(bt, {"copy"}, "[baseline]");
    if (const toml::node* n = bt.get("copy")) {
      const toml::table& c = r.table(*n, "copy ({ from = \"x\", to = \"y\" })");
      r.only_keys(c, {"from", "to"}, "copy");
      const toml::node* from = c.get("from");
      const toml::node* to = c.get("to");
      if (!from || !to) r.fail(reader::line_of(*n), "copy needs 'from' and 'to'");
      s.baseline.copy_from = r.string(*from, "from");
      s.baseline.copy_to = r.string(*to, "to");
      const buffer_spec* f = s.buffer(s.baseline.copy_from);
      const buffer_spec* t = s.buffer(s.baseline.copy_to);
      if (!f || f->role != buffer_role::in)
        r.fail(reader::line_of(*from),
               "copy from '" + s.baseline.copy_from + "': expected the name of an in buffer");
      if (!t || t->role != buffer_role::out || t->zero)
        r.fail(reader::line_of(*to), "copy to '" + s.baseline.copy_to +
                                         "': expected the name of an out buffer (without init)");
    }
  }

  if (const toml::node* p = root.get("pipeline")) read_pipeline(r, *p, vars, s);
}

}  // namespace

family_spec parse_family_spec(const std::string& text, const std::string& path,
                              const std::string& dir, const std::string& name,
                              const std::vector<std::string>& plugin_dirs) {
  reader r(path, dir);
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    r.fail(static_cast<int>(e.source().begin.line), std::string(e.description()));
  }
  family_spec s;
  s.name = name;
  s.path = path;
  s.dir = dir;
  s.text = text;
  r.only_keys(root,
              {"summary", "plugin", "dtypes", "roofline", "bytes", "flops", "axes", "require",
               "ops", "buffers", "kernel", "reference", "compare", "baseline", "pipeline"},
              "family.toml");

  spec_reader read(r, root, s, dir);
  read.what_it_is(plugin_dirs);
  read.axes();
  read.variables_requirements_and_ops();
  read.buffers();
  read.kernel();
  read.reference();
  read.comparison();
  read.baseline_and_pipeline();
  return s;
}

family_spec load_family_spec(const std::string& dir, const std::vector<std::string>& plugin_dirs) {
  const std::string path = (fs::path(dir) / "family.toml").string();
  const file_read text = read_regular_file(path, max_description_bytes);
  if (!text.ok()) throw metadata_error(path, 1, "cannot be read (" + text.why + ")");
  return parse_family_spec(text.bytes, path, dir, fs::path(dir).filename().string(), plugin_dirs);
}

}  // namespace kl
