// A family.toml's sections that say what a variant is checked and measured against
// (spec/family_toml.hpp): the reference ([reference]: a kernel, or a function of the family
// plugin), the comparison rule ([compare], [compare.random]) and the baseline ([baseline]).
#include "spec/family_toml.hpp"

#include "core/file_read.hpp"

#include <filesystem>

namespace fs = std::filesystem;

namespace kl::family_toml {
namespace {

// The most read of a reference kernel (a kernel file's bound, 16 MiB).
constexpr std::uint64_t max_reference_bytes = std::uint64_t{16} << 20;

// A reference kernel's text, read as every file kernlab did not write (core/file_read.hpp); ""
// when it cannot be (the caller says so, naming it).
std::string read_text(const std::string& path) {
  return read_regular_file(path, max_reference_bytes).bytes;
}

}  // namespace

void spec_reader::reference() {
  // The reference kernel.
  const toml::node* ref = root.get("reference");
  if (!ref) r.fail(1, "'[reference]' is missing (the kernel whose result the variants must match)");
  const toml::table& rt = r.table(*ref, "reference");
  s.reference.line = reader::line_of(*ref);
  r.only_keys(rt,
              {"file", "entry", "plugin", "type", "block", "block_dims", "grid_dims", "expected"},
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
  if (const toml::node* n = rt.get("expected")) expected(*n);
}

void spec_reader::expected(const toml::node& n) {
  // Expected values from files: each an out or inout buffer's, in the type the reference writes.
  const toml::table& et = r.table(n, "reference.expected");
  for (const auto& [key, value] : et) {
    const std::string name(key.str());
    const int line = reader::line_of(value);
    const buffer_spec* b = s.buffer(name);
    if (!b) r.fail(line, "[reference] expected: no buffer '" + name + "'");
    if (!b->is_output())
      r.fail(line, "[reference] expected: buffer " + name +
                       " is not an out or inout buffer (only what the variants write is compared)");
    const std::string path = (fs::path(dir) / r.string(value, "expected." + name)).string();
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) r.fail(line, path + " does not exist");
    s.reference.expected[name] = path;
  }
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
    if (c.rule == "bound" && !s.reference.expected.empty())
      r.fail(line,
             "rule bound needs the magnitudes the reference writes beside its result; with "
             "[reference] expected it has none for those buffers (use tolerance or ulp)");
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

void spec_reader::baseline() {
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
}

}  // namespace kl::family_toml
