#include "spec/metadata.hpp"
#include "spec/header_keys.hpp"
#include "spec/header_text.hpp"

#include "spec/expression.hpp"
#include "spec/names.hpp"

#include <algorithm>
#include <sstream>
#include <string_view>

namespace kl {

using header_text::trim;

namespace {

// Drops a trailing "# comment".
std::string strip_comment(const std::string& s) {
  const auto hash = s.find('#');
  return hash == std::string::npos ? s : s.substr(0, hash);
}

[[noreturn]] void unknown_key(const std::string& key, const std::string& path, int line_no) {
  std::vector<std::string> known;
  for (const header_keys::key_description& k : header_keys::keys()) known.push_back(k.name);
  std::string msg = "unknown key '" + key + "'";
  const auto near = nearest_names(key, known, 1);
  msg += near.empty() ? "" : " (did you mean '" + near[0] + "'?)";
  std::string all;
  for (const auto& k : known) all += (all.empty() ? "" : ", ") + k;
  throw metadata_error(path, line_no, msg + "; known keys: " + all);
}

// One "key: value" line of the header (its comment and "*/" cut off, not empty): the key looked
// up in the table, checked for how it may be given, and its value read by the key's reader.
void read_key(const std::string& line, const std::string& path, int line_no, parsed_header& out) {
  const auto colon = line.find(':');
  if (colon == std::string::npos)
    throw metadata_error(path, line_no, "expected 'key: value', got '" + line + "'");
  const std::string key = trim(line.substr(0, colon));
  const std::string value = trim(line.substr(colon + 1));
  const header_keys::key_description* k = header_keys::find_key(key);
  if (!k) unknown_key(key, path, line_no);
  if (auto prev = out.key_lines.find(key);
      prev != out.key_lines.end() && !k->is(header_keys::repeatable))
    throw metadata_error(
        path, line_no,
        "key '" + key + "' repeated (first given on line " + std::to_string(prev->second) + ")");
  if (value.empty() && !k->is(header_keys::may_be_empty))
    throw metadata_error(path, line_no, "key '" + key + "' has no value");
  out.key_lines.emplace(key, line_no);  // a repeatable key: its first line
  k->read({path, line_no, key, value}, out);
}

// Walks the lines of `source` to the end of its "/* kernlab" header, reading each key into `out`.
void read_header_lines(const std::string& source, const std::string& path, parsed_header& out) {
  // A UTF-8 byte-order mark, as some Windows editors write, is not part of the first line.
  constexpr std::string_view bom = "\xEF\xBB\xBF";
  std::istringstream in(std::string_view(source).substr(0, 3) == bom ? source.substr(3) : source);
  std::string raw;
  int line_no = 0;
  bool in_header = false, closed = false;
  while (!closed && std::getline(in, raw)) {
    ++line_no;
    std::string line = trim(raw);
    if (!in_header) {
      if (line == "/* kernlab" || line.rfind("/* kernlab ", 0) == 0 || line == "/*kernlab") {
        in_header = true;
        out.header_line = line_no;
      }
      continue;
    }
    // The header ends at "*/", which may follow the last entry on the same line.
    if (const auto close = line.find("*/"); close != std::string::npos) {
      closed = true;
      line = trim(line.substr(0, close));
    }
    line = trim(strip_comment(line));
    if (!line.empty()) read_key(line, path, line_no, out);
  }
  if (!in_header)
    throw metadata_error(path, 1,
                         "no kernlab header: the file needs a '/* kernlab' block comment with "
                         "family, entry and blocks (see docs/kernel_contract.md)");
  if (!closed)
    throw metadata_error(path, out.header_line, "the kernlab header is never closed with '*/'");
}

// The checks that span keys, once the whole header is read: the required keys, and the keys that
// need tune:.
void check_across_keys(const parsed_header& out, const std::string& path) {
  const variant_descriptor& d = out.descriptor;
  for (const header_keys::key_description& k : header_keys::keys())
    if (k.is(header_keys::required) && !out.key_lines.count(k.name))
      throw metadata_error(
          path, out.header_line,
          std::string("the kernlab header lacks the required key '") + k.name + "'");

  for (const auto& [name, text] : d.params)
    for (const auto& t : d.tunables)
      if (t.first == name)
        throw metadata_error(path, out.line_of("params"),
                             "params: '" + name + "' is also a tunable (tune:)");
  if (!d.requires.empty() && d.tunables.empty())
    throw metadata_error(path, out.line_of("require"),
                         "require constrains tunables: the header has no 'tune:'");
  if (!out.named_points.empty() && d.tunables.empty())
    throw metadata_error(path, out.line_of("points"),
                         "points names points of the tunables: the header has no 'tune:'");
  for (const define_spec& m : d.defines)
    if (!m.value && std::none_of(d.tunables.begin(), d.tunables.end(),
                                 [&](const auto& t) { return t.first == m.name; }))
      throw metadata_error(path, out.line_of("defines"),
                           "defines: '" + m.name +
                               "' is not a tunable of this file (tune:); a constant is '" + m.name +
                               " = value'");
}

// Each named point: a value for every tunable (put in the tune: order), each one of its values, no
// unknown name, and no point named twice. Whether require allows it is expand_tunables'.
void check_named_points(parsed_header& out, const std::string& path) {
  const variant_descriptor& d = out.descriptor;
  std::string tunable_names;
  for (const auto& [name, values] : d.tunables)
    tunable_names += (tunable_names.empty() ? "" : ", ") + name;
  for (std::size_t i = 0; i < out.named_points.size(); ++i) {
    named_point& p = out.named_points[i];
    const auto fail = [&](const std::string& why) {
      throw metadata_error(path, p.line, "points: " + p.name + ": " + why);
    };
    if (p.name == d.name)
      fail("a point cannot take the file's name (--variant " + d.name +
           " selects every point of the file)");
    // (Plain loops, not structured bindings: C++17 lets no lambda capture one; clang refuses.)
    for (const auto& given : p.values)
      if (std::none_of(d.tunables.begin(), d.tunables.end(),
                       [&](const auto& t) { return t.first == given.first; }))
        fail("'" + given.first + "' is not a tunable (the tunables: " + tunable_names + ")");
    std::vector<std::pair<std::string, std::int64_t>> ordered;
    for (const auto& tunable : d.tunables) {
      const std::string& name = tunable.first;
      const std::vector<std::int64_t>& values = tunable.second;
      const auto given = std::find_if(p.values.begin(), p.values.end(),
                                      [&](const auto& v) { return v.first == name; });
      if (given == p.values.end())
        fail("no value for " + name + " (a named point gives every tunable: " + tunable_names +
             ")");
      if (std::find(values.begin(), values.end(), given->second) == values.end()) {
        std::string allowed;
        for (std::int64_t v : values) allowed += (allowed.empty() ? "" : ", ") + std::to_string(v);
        fail(name + "=" + std::to_string(given->second) + " is not one of its values (" + allowed +
             ")");
      }
      ordered.push_back(*given);
    }
    p.values = std::move(ordered);
    for (std::size_t j = 0; j < i; ++j)
      if (out.named_points[j].values == p.values)
        fail("the same point as '" + out.named_points[j].name + "' (line " +
             std::to_string(out.named_points[j].line) + ")");
  }
}

}  // namespace

std::string file_stem(const std::string& path) {
  const auto slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  const auto dot = base.find_last_of('.');
  return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

parsed_header parse_header(const std::string& source, const std::string& path,
                           const std::vector<std::string>& shape_names) {
  if (source.find('\0') != std::string::npos)
    throw metadata_error(path, 1, "not a text file (it contains NUL bytes)");

  parsed_header out;
  variant_descriptor& d = out.descriptor;
  d.origin = origin_kind::source;
  d.origin_path = path;
  d.name = file_stem(path);
  if (!header_keys::is_variant_name(d.name))
    throw metadata_error(path, 1,
                         "the file name '" + d.name +
                             "' cannot be a variant name (use letters, digits, '_' and '-')");

  read_header_lines(source, path, out);
  check_across_keys(out, path);
  check_named_points(out, path);
  if (!d.tunables.empty()) {
    for (const parsed_header& p : expand_tunables(out, shape_names))  // checks every point
      out.points.push_back(p.descriptor);
    return out;
  }
  check_expressions(out, shape_names);
  return out;
}

void check_expressions(parsed_header& out, const std::vector<std::string>& shape_names) {
  variant_descriptor& d = out.descriptor;
  const std::string& path = d.origin_path;
  // Expressions must evaluate for every block size the variant claims (GRID, known only when
  // the pass is planned, is tried as 1 and as a large grid).
  struct expr_key {
    const char* key;
    const std::string* text;
    long min_value;
  };
  // The variables of one instantiation: BLOCK, TSIZE, then the params in order (each may use
  // those before it), then sample values of the shape's variables for the launch geometry.
  const auto variables = [&](unsigned b, std::int64_t dim) {
    std::map<std::string, std::int64_t> vars = {{"BLOCK", b}, {"TSIZE", 4}};
    for (const auto& [name, text] : d.params) {
      try {
        vars[name] = evaluate(text, vars);  // compile-time constants: no M, N, K
      } catch (const expression_error& e) {
        throw metadata_error(path, out.line_of("params"), "params: " + name + ": " + e.what());
      }
    }
    for (const auto& dim_name : shape_names) vars[dim_name] = dim;
    return vars;
  };
  for (unsigned b : d.blocks)
    for (std::int64_t dim : {1, 4097}) {
      const auto vars = variables(b, dim);
      std::int64_t threads = 1;
      for (const auto& [key, dims] :
           {std::pair<const char*, const std::vector<std::string>*>{"block_dims", &d.block_dims},
            {"grid_dims", &d.grid_dims}})
        for (const auto& text : *dims) {
          std::int64_t v = 0;
          try {
            v = evaluate(text, vars);
          } catch (const expression_error& e) {
            throw metadata_error(path, out.line_of(key), std::string(key) + ": " + e.what());
          }
          if (v < 1)
            throw metadata_error(path, out.line_of(key),
                                 std::string(key) + " '" + text + "' is " + std::to_string(v) +
                                     " for BLOCK=" + std::to_string(b));
          if (std::string(key) == "block_dims") threads *= std::min<std::int64_t>(v, 1 << 20);
        }
      if (!d.block_dims.empty() && threads != b)
        throw metadata_error(path, out.line_of("block_dims"),
                             "block_dims give " + std::to_string(threads) + " threads for BLOCK=" +
                                 std::to_string(b) + " (their product must be the block size)");
    }
  for (const auto& [key, text, min_value] :
       {expr_key{"tile", &d.tile, 1}, expr_key{"shared_bytes", &d.shared_bytes, 0},
        expr_key{"workspace", &d.workspace, 0}}) {
    if (text->empty()) continue;
    const int at = out.line_of(key);
    for (unsigned b : d.blocks)
      for (std::int64_t grid : {1, 65536}) {
        std::int64_t v = 0;
        try {
          // Each expression gets the variables the launch gives it (docs/kernel_contract.md):
          // shared_bytes the params and the shape (matmul's M, N, K; the registry refuses the
          // shape for a 1-D family), tile and workspace BLOCK, TSIZE and the params, workspace
          // GRID too. So `tile: K` is an unknown variable, not matmul's K (found by tests/fuzz).
          const std::string k(key);
          std::map<std::string, std::int64_t> vars = variables(b, 4097);
          if (k != "shared_bytes")
            for (const auto& dim_name : shape_names) vars.erase(dim_name);
          if (k == "workspace") vars["GRID"] = grid;
          v = evaluate(*text, vars);
        } catch (const expression_error& e) {
          throw metadata_error(path, at, std::string(key) + ": " + e.what());
        }
        if (v < min_value)
          throw metadata_error(path, at,
                               std::string(key) + " '" + *text + "' is " + std::to_string(v) +
                                   " for BLOCK=" + std::to_string(b));
      }
  }
}

}  // namespace kl
