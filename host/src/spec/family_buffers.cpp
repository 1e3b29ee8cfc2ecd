// A family.toml's [[buffers]] (spec/family_toml.hpp): each buffer's name, role, type and count,
// and what it starts with (a generator per input mode, or zeros) and when it gets it back.
#include "spec/family_toml.hpp"

#include <filesystem>

namespace fs = std::filesystem;

namespace kl::family_toml {
namespace {

// One generator (a buffer's init, exact or random): its kind and that kind's keys.
generator_spec read_generator(const reader& r, const toml::node& n, const std::string& what) {
  const toml::table& t = r.table(n, what + " (a generator such as { kind = \"uniform\" })");
  generator_spec g;
  g.line = reader::line_of(n);
  const toml::node* kind = t.get("kind");
  if (!kind) r.fail(g.line, what + " needs a 'kind'");
  g.kind = r.string(*kind, what + ".kind");
  static const std::map<std::string, std::vector<std::string>> keys = {
      {"grid", {"kind", "den", "min", "max"}}, {"uniform", {"kind", "min", "max"}},
      {"normal", {"kind", "mean", "stddev"}},  {"constant", {"kind", "value"}},
      {"iota", {"kind", "start", "step"}},     {"npy", {"kind", "file"}},
      {"plugin", {"kind", "function"}}};
  auto it = keys.find(g.kind);
  if (it == keys.end())
    r.fail(reader::line_of(*kind),
           "unknown generator '" + g.kind +
               "' (expected grid, uniform, normal, constant, iota, npy or plugin)");
  r.only_keys(t, it->second, what);
  auto num = [&](const char* key, double& out) {
    if (const toml::node* v = t.get(key)) out = r.number(*v, what + "." + key);
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
    if (!t.get("min") || !t.get("max")) r.fail(g.line, what + " needs 'min' and 'max'");
    if (!(g.min <= g.max)) r.fail(g.line, what + ": min is above max");
  }
  if (g.kind == "grid" && !(g.den >= 1))
    r.fail(g.line, what + ": den must be at least 1 (values are k / den)");
  if (g.kind == "normal" && !(g.stddev >= 0)) r.fail(g.line, what + ": stddev is negative");
  if (g.kind == "constant" && !t.get("value")) r.fail(g.line, what + " needs a 'value'");
  if (g.kind == "plugin") {
    const toml::node* f = t.get("function");
    if (!f) r.fail(g.line, what + " needs a 'function' (the family plugin's generator)");
    g.function = r.string(*f, what + ".function");
    if (!r.has_plugin)
      r.fail(g.line, what + ": a plugin generator needs the family's 'plugin' (its file)");
  }
  if (g.kind == "npy") {
    const toml::node* f = t.get("file");
    if (!f) r.fail(g.line, what + " needs a 'file'");
    g.file = (fs::path(r.dir()) / r.string(*f, what + ".file")).string();
    std::error_code ec;
    if (!fs::is_regular_file(g.file, ec)) r.fail(reader::line_of(*f), g.file + " does not exist");
  }
  return g;
}

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
    b.exact = read_generator(r, init ? *init : *exact, b.name + (init ? ".init" : ".exact"));
    b.random = init ? b.exact : read_generator(r, *random, b.name + ".random");
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

}  // namespace

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

}  // namespace kl::family_toml
