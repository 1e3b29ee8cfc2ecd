// The keys of a kernel file's header, one reader each, and their table (spec/header_keys.hpp).
#include "spec/header_keys.hpp"
#include "spec/header_text.hpp"

#include "spec/dtypes.hpp"
#include "spec/names.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <exception>
#include <system_error>

namespace kl::header_keys {

using header_text::header_integer;
using header_text::trim;

namespace {

// Names an expression already has, which a param may not take.
const std::vector<std::string> reserved_names = {"BLOCK", "TSIZE", "DTYPE", "GRID", "M",
                                                 "N",     "K",     "T",     "OP",   "sqrt"};

// The names below are checked by hand, not with std::regex: libstdc++'s matcher recurses once
// per character, so a long enough line (tens of KB) overflowed the stack (found by tests/fuzz).
bool ascii_lower(char c) { return c >= 'a' && c <= 'z'; }
bool ascii_alpha(char c) { return ascii_lower(c) || (c >= 'A' && c <= 'Z'); }
bool ascii_digit(char c) { return c >= '0' && c <= '9'; }
bool ascii_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }  // \t \n \v \f \r

}  // namespace

bool is_variant_name(const std::string& s) {
  return !s.empty() && s[0] != '-' && std::all_of(s.begin(), s.end(), [](char c) {
    return ascii_alpha(c) || ascii_digit(c) || c == '_' || c == '-';
  });
}

namespace {

// "A[M][K] box [128][64] swizzle 128" (the swizzle may be left out: none).
tensor_map_spec parse_tensor_map(const std::string& item) {
  tensor_map_spec t;
  std::size_t at = 0;
  const auto skip = [&] {
    while (at < item.size() && (item[at] == ' ' || item[at] == '\t')) ++at;
  };
  // One or more "[expression]" groups (brackets never nest in an expression).
  const auto groups = [&](const char* what) {
    std::vector<std::string> out;
    for (skip(); at < item.size() && item[at] == '['; skip()) {
      const auto close = item.find(']', at);
      if (close == std::string::npos || item.find('[', at + 1) < close)
        throw std::invalid_argument(std::string("an unclosed [ in ") + what);
      out.push_back(trim(item.substr(at + 1, close - at - 1)));
      if (out.back().empty()) throw std::invalid_argument(std::string("an empty [] in ") + what);
      at = close + 1;
    }
    if (out.empty() || out.size() > 5)
      throw std::invalid_argument(std::string(what) + " needs 1 to 5 dimensions, each in []");
    return out;
  };
  const auto word = [&] {
    skip();
    std::size_t end = at;
    while (end < item.size() &&
           (std::isalnum(static_cast<unsigned char>(item[end])) || item[end] == '_'))
      ++end;
    std::string w = item.substr(at, end - at);
    at = end;
    return w;
  };
  t.buffer = word();
  if (!is_identifier(t.buffer)) throw std::invalid_argument("no buffer name first");
  t.dims = groups("the buffer's dimensions");
  if (word() != "box") throw std::invalid_argument("no 'box [..]' after the dimensions");
  t.box = groups("the box");
  if (t.box.size() != t.dims.size())
    throw std::invalid_argument("the box has " + std::to_string(t.box.size()) +
                                " dimensions, the buffer " + std::to_string(t.dims.size()));
  skip();
  if (at < item.size()) {
    if (word() != "swizzle") throw std::invalid_argument("'" + item.substr(at) + "' after the box");
    const std::string n = word();
    if (n != "0" && n != "32" && n != "64" && n != "128")
      throw std::invalid_argument("swizzle '" + n + "' is not 0, 32, 64 or 128");
    t.swizzle = static_cast<unsigned>(std::stoul(n));
    skip();
    if (at < item.size())
      throw std::invalid_argument("'" + item.substr(at) + "' after the swizzle");
  }
  return t;
}

// [a-z][a-z0-9_]*
bool is_family_name(const std::string& s) {
  return !s.empty() && ascii_lower(s[0]) && std::all_of(s.begin(), s.end(), [](char c) {
    return ascii_lower(c) || ascii_digit(c) || c == '_';
  });
}

// [A-Za-z_][A-Za-z0-9_:]*\s*(<.*>)? -- a name, then nothing or "<...>" (one line).
bool is_entry(const std::string& s) {
  if (s.empty() || !(ascii_alpha(s[0]) || s[0] == '_')) return false;
  std::size_t i = 1;
  while (i < s.size() && (ascii_alpha(s[i]) || ascii_digit(s[i]) || s[i] == '_' || s[i] == ':'))
    ++i;
  while (i < s.size() && ascii_space(s[i])) ++i;
  if (i == s.size()) return true;
  if (s[i] != '<' || s.size() - i < 2 || s.back() != '>') return false;
  return std::none_of(s.begin() + static_cast<std::ptrdiff_t>(i), s.end(),
                      [](char c) { return c == '\n' || c == '\r'; });
}

// "T Ap[M * ceil_div(K, 8) * 8]": a type word, a name and one [count expression].
scratch_spec parse_scratch(const std::string& item) {
  scratch_spec sc;
  const auto space = item.find_first_of(" \t");
  if (space == std::string::npos) throw std::invalid_argument("no type first");
  sc.type = item.substr(0, space);
  const std::string rest = trim(item.substr(space));
  const auto open = rest.find('[');
  if (open == std::string::npos || rest.back() != ']')
    throw std::invalid_argument("no [count] after the name");
  sc.name = trim(rest.substr(0, open));
  sc.count = trim(rest.substr(open + 1, rest.size() - open - 2));
  if (!is_identifier(sc.type)) throw std::invalid_argument("'" + sc.type + "' is not a type");
  if (!is_identifier(sc.name)) throw std::invalid_argument("'" + sc.name + "' is not a name");
  if (sc.count.empty() || sc.count.find_first_of("[]") != std::string::npos)
    throw std::invalid_argument("the count is not one expression in []");
  return sc;
}

// The non-empty items of a ';'-separated value (params, tune, require), trimmed: expressions
// hold no ';'.
std::vector<std::string> split_items(const std::string& value) {
  std::vector<std::string> out;
  std::string rest = value;
  while (!rest.empty()) {
    const auto semi = rest.find(';');
    const std::string item = trim(rest.substr(0, semi));
    rest = semi == std::string::npos ? "" : rest.substr(semi + 1);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// The items of one `points:` line: `name(NAME=v, NAME=v) "summary"; ...`, each checked for its
// form alone (the tunables it must match may come later in the header). Throws metadata_error.
std::vector<named_point> parse_points(const std::string& value, const std::string& path, int line) {
  const std::string form =
      " is not 'name(NAME=value, ...)', optionally followed by a \"quoted summary\"";
  std::vector<named_point> out;
  std::size_t pos = 0;
  auto skip_space = [&] {
    while (pos < value.size() && ascii_space(value[pos])) ++pos;
  };
  for (;;) {
    skip_space();
    while (pos < value.size() && value[pos] == ';') {  // empty items, as split_items allows
      ++pos;
      skip_space();
    }
    if (pos >= value.size()) break;
    const std::size_t start = pos;
    // The item's text, for messages: up to its ';' outside quotes.
    auto item_text = [&] {
      std::size_t end = start;
      bool quoted = false;
      for (; end < value.size() && (quoted || value[end] != ';'); ++end)
        if (value[end] == '"') quoted = !quoted;
      return trim(value.substr(start, end - start));
    };
    auto fail = [&](const std::string& why) {
      throw metadata_error(path, line, "points: '" + item_text() + "'" + why);
    };
    named_point p;
    p.line = line;
    const auto open = value.find('(', pos);
    if (open == std::string::npos ||
        value.substr(pos, open - pos).find_first_of(";\"") != std::string::npos)
      fail(form);
    p.name = trim(value.substr(pos, open - pos));
    if (!is_variant_name(p.name))
      fail(": '" + p.name + "' cannot be a variant name (use letters, digits, '_' and '-')");
    const auto close = value.find(')', open);
    if (close == std::string::npos ||
        value.substr(open, close - open).find(';') != std::string::npos)
      fail(form);
    const std::string inner = value.substr(open + 1, close - open - 1);
    std::size_t from = 0;
    while (from <= inner.size()) {
      const auto comma = std::min(inner.find(',', from), inner.size());
      const std::string assignment = trim(inner.substr(from, comma - from));
      from = comma + 1;
      if (assignment.empty() && comma == inner.size() && p.values.empty()) break;  // "name()"
      const auto eq = assignment.find('=');
      const std::string name = trim(assignment.substr(0, eq == std::string::npos ? 0 : eq));
      std::int64_t v = 0;
      if (eq == std::string::npos || !is_identifier(name) ||
          !header_integer(trim(assignment.substr(eq + 1)), v))
        fail(": '" + assignment + "' is not 'NAME=value' (a tunable and an integer)");
      for (const auto& [given, unused] : p.values)
        if (given == name) fail(": " + name + " given twice");
      p.values.emplace_back(name, v);
    }
    pos = close + 1;
    skip_space();
    if (pos < value.size() && value[pos] == '"') {
      const auto end = value.find('"', pos + 1);
      if (end == std::string::npos)
        fail(": the summary has no closing '\"' (and '#' starts a comment, even in quotes)");
      p.summary = trim(value.substr(pos + 1, end - pos - 1));
      if (p.summary.empty()) fail(": an empty summary (leave the quotes out to use the file's)");
      pos = end + 1;
      skip_space();
    }
    if (pos < value.size() && value[pos] != ';') fail(form);
    out.push_back(std::move(p));
  }
  if (out.empty()) throw metadata_error(path, line, "points lists no point");
  return out;
}

// ---- One reader per key; the table of keys() names them. ----

void read_family(const key_line& k, parsed_header& h) {
  if (!is_family_name(k.value)) k.fail("family '" + k.value + "' is not a family name");
  h.descriptor.family = k.value;
}

void read_entry(const key_line& k, parsed_header& h) {
  if (!is_entry(k.value))
    k.fail("entry '" + k.value +
           "' is not a function template-id like "
           "'my_kernel<BLOCK, T, OP>'");
  h.descriptor.entry = k.value;
}

void read_blocks(const key_line& k, parsed_header& h) {
  std::vector<unsigned>& blocks = h.descriptor.blocks;
  for (const auto& item : split_list(k.value)) {
    std::size_t used = 0;
    long b = -1;
    try {
      b = std::stol(item, &used);
    } catch (const std::exception&) {
    }
    if (used != item.size() || b < 1 || b > 1024)
      k.fail("block size '" + item + "' is not an integer in 1..1024");
    if (std::count(blocks.begin(), blocks.end(), static_cast<unsigned>(b)))
      k.fail("block size " + item + " listed twice");
    blocks.push_back(static_cast<unsigned>(b));
  }
  // "blocks: ," has a value but no block size; an empty list would mean "the block size does not
  // apply", which is for plugins only (found by tests/fuzz).
  if (blocks.empty()) k.fail("blocks lists no block size");
}

// A value kept as it is written: an expression (tile, shared_bytes, workspace), checked when the
// whole header is read (check_expressions), or the summary.
template <std::string variant_descriptor::*field>
void read_text(const key_line& k, parsed_header& h) {
  h.descriptor.*field = k.value;
}

// One of two words: "grid must be 'tiles' or 'resident', not 'x'".
template <typename E>
E one_of(const key_line& k, const char* a, E a_value, const char* b, E b_value) {
  if (k.value == a) return a_value;
  if (k.value == b) return b_value;
  k.fail(k.key + " must be '" + a + "' or '" + b + "', not '" + k.value + "'");
}

void read_grid(const key_line& k, parsed_header& h) {
  h.descriptor.grid = one_of(k, "tiles", grid_kind::tiles, "resident", grid_kind::resident);
}

void read_bounds(const key_line& k, parsed_header& h) {
  h.descriptor.bounds = one_of(k, "padded", bounds_kind::padded, "checked", bounds_kind::checked);
}

void read_output(const key_line& k, parsed_header& h) {
  h.descriptor.output =
      one_of(k, "per_block", output_kind::per_block, "single", output_kind::single);
}

// "dtypes: ," has a value but names nothing; read as "every one the family has" it would
// silently widen the variant (found by tests/fuzz).
std::vector<std::string> listed(const key_line& k, const char* what) {
  std::vector<std::string> items = split_list(k.value);
  if (items.empty()) k.fail(k.key + " lists no " + what);
  return items;
}

void read_dtypes(const key_line& k, parsed_header& h) {
  h.descriptor.dtypes = listed(k, "element type");
}

void read_ops(const key_line& k, parsed_header& h) { h.descriptor.ops = listed(k, "operation"); }

void read_order(const key_line& k, parsed_header& h) {
  std::size_t used = 0;
  long o = -1;
  try {
    o = std::stol(k.value, &used);
  } catch (const std::exception&) {
  }
  if (used != k.value.size() || o < 0 || o > 1000000)
    k.fail("order '" + k.value + "' is not an integer in 0..1000000");
  h.descriptor.order = static_cast<int>(o);
}

// "TILE = sqrt(BLOCK); BK = 8": expressions hold no ';', so it separates the items.
void read_params(const key_line& k, parsed_header& h) {
  auto& params = h.descriptor.params;
  for (const std::string& item : split_items(k.value)) {
    const auto eq = item.find('=');
    const std::string name = trim(item.substr(0, eq == std::string::npos ? 0 : eq));
    const std::string text = eq == std::string::npos ? "" : trim(item.substr(eq + 1));
    if (eq == std::string::npos || !is_identifier(name) || text.empty())
      k.fail("params: '" + item + "' is not 'NAME = expression'");
    if (std::count(reserved_names.begin(), reserved_names.end(), name))
      k.fail("params: '" + name + "' is a reserved name");
    for (const auto& p : params)
      if (p.first == name) k.fail("params: '" + name + "' given twice");
    params.emplace_back(name, text);
  }
  if (params.empty()) k.fail("params lists no parameter");
}

// "TILE, TILE": x, y (and z), each an expression; commas outside parentheses separate them, so
// "min(RESIDENT_BLOCKS, ceil_div(N, BLOCK))" is one dimension.
template <std::vector<std::string> variant_descriptor::*field>
void read_dims(const key_line& k, parsed_header& h) {
  std::vector<std::string> dims;
  std::string current;
  int depth = 0;
  for (char c : k.value + ",") {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c != ',' || depth > 0) {
      current += c;
      continue;
    }
    dims.push_back(trim(current));
    current.clear();
    if (dims.back().empty()) k.fail(k.key + " has an empty dimension");
  }
  if (dims.size() > 3) k.fail(k.key + " has more than 3 dimensions (x, y, z)");
  h.descriptor.*field = dims;
}

// "ITEMS = 1, 2, 4, 8; UNROLL = 1..4; WIDTH = 32..1024 pow2; STEP = 4..64 step 4"
void read_tune(const key_line& k, parsed_header& h) {
  auto& tunables = h.descriptor.tunables;
  for (const std::string& item : split_items(k.value)) {
    const auto eq = item.find('=');
    const std::string name = trim(item.substr(0, eq == std::string::npos ? 0 : eq));
    const std::string values = eq == std::string::npos ? "" : trim(item.substr(eq + 1));
    if (eq == std::string::npos || !is_identifier(name) || values.empty())
      k.fail("tune: '" + item +
             "' is not 'NAME = values' (a list such as "
             "1, 2, 4, or a range such as 1..8, 32..1024 pow2, 4..64 step 4)");
    if (std::count(reserved_names.begin(), reserved_names.end(), name) ||
        data_dtype_size(name) != 0)  // a require's constants (DTYPE == float32)
      k.fail("tune: '" + name + "' is a reserved name");
    for (const auto& t : tunables)
      if (t.first == name) k.fail("tune: '" + name + "' given twice");
    try {
      tunables.emplace_back(name, parse_tunable_values(values));
    } catch (const std::invalid_argument& e) {
      k.fail("tune: " + name + ": " + e.what());
    }
  }
  if (tunables.empty()) k.fail("tune lists no parameter");
}

// "BLOCK * ITEMS <= 8192; UNROLL <= ITEMS": each must hold (be non-zero) for a point.
void read_require(const key_line& k, parsed_header& h) {
  for (const std::string& item : split_items(k.value)) h.descriptor.requires.push_back(item);
  if (h.descriptor.requires.empty()) k.fail("require lists no condition");
}

// "reduce_unrolling4(UNROLL=4) \"a summary\"; ...": names for points of the tunables. Whether
// they match the tunables is checked once the whole header is read.
void read_points(const key_line& k, parsed_header& h) {
  for (named_point& p : parse_points(k.value, k.path, k.line)) {
    for (const named_point& q : h.named_points)
      if (q.name == p.name)
        k.fail("points: '" + p.name + "' named twice (first on line " + std::to_string(q.line) +
               ")");
    h.named_points.push_back(std::move(p));
  }
}

// Only the architecture-specific targets: a plain sm_XY is what every file gets anyway (the GPU's
// own), and naming one would compile for a GPU other than the one that runs.
void read_target(const key_line& k, parsed_header& h) {
  const std::string& value = k.value;
  const bool ok = value.size() >= 5 && value.rfind("sm_", 0) == 0 && value.back() == 'a' &&
                  std::all_of(value.begin() + 3, value.end() - 1,
                              [](char ch) { return ch >= '0' && ch <= '9'; });
  if (!ok)
    k.fail("target '" + value +
           "': expected an architecture-specific target such as sm_90a "
           "(a file is compiled for the GPU's own architecture without it)");
  h.descriptor.target = value;
}

// "use_shared_mem; tile_size_x; block_size_y = 1": tunables passed to the preprocessor, and
// constants. Whether each name is a tunable is checked once the whole header is read.
void read_defines(const key_line& k, parsed_header& h) {
  auto& defines = h.descriptor.defines;
  for (const std::string& item : split_items(k.value)) {
    define_spec d{item, std::nullopt};
    if (const auto eq = item.find('='); eq != std::string::npos) {
      d.name = trim(item.substr(0, eq));
      const std::string text = trim(item.substr(eq + 1));
      std::int64_t v = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (text.empty() || ec != std::errc() || end != text.data() + text.size())
        k.fail("defines: '" + item + "': the value of a constant is a whole number (NAME = 4)");
      d.value = v;
    }
    if (!is_identifier(d.name))
      k.fail("defines: '" + item +
             "' is not NAME (a tunable, passed with the point's value) or NAME = value");
    for (const define_spec& e : defines)
      if (e.name == d.name) k.fail("defines: " + d.name + " given twice");
    defines.push_back(std::move(d));
  }
  if (defines.empty()) k.fail("defines lists no macro");
}

// "A[M][K] box [128][64] swizzle 128; B[K][N] box [64][BN] swizzle 128"
void read_tensor_maps(const key_line& k, parsed_header& h) {
  auto& maps = h.descriptor.tensor_maps;
  for (const std::string& item : split_items(k.value)) {
    try {
      maps.push_back(parse_tensor_map(item));
    } catch (const std::invalid_argument& e) {
      k.fail("tensor_maps: '" + item + "': " + e.what() +
             " (expected e.g. 'A[M][K] box [128][64] swizzle 128': the "
             "buffer's dimensions outermost first, the box in elements, "
             "and a swizzle of 0, 32, 64 or 128 bytes)");
    }
    for (std::size_t i = 0; i + 1 < maps.size(); ++i)
      if (maps[i].buffer == maps.back().buffer)
        k.fail("tensor_maps: " + maps.back().buffer + " given twice");
  }
  if (maps.empty()) k.fail("tensor_maps lists no tensor map");
}

// "T Ap[M * ceil_div(K, 8) * 8]; int32 arrivals[1]"
void read_scratch(const key_line& k, parsed_header& h) {
  auto& scratch = h.descriptor.scratch;
  for (const std::string& item : split_items(k.value)) {
    try {
      scratch.push_back(parse_scratch(item));
    } catch (const std::invalid_argument& e) {
      k.fail("scratch: '" + item + "': " + e.what() +
             " (expected e.g. 'T Ap[M * K]': T or a dtype name, a name, "
             "and the element count in [])");
    }
    for (std::size_t i = 0; i + 1 < scratch.size(); ++i)
      if (scratch[i].name == scratch.back().name)
        k.fail("scratch: " + scratch.back().name + " given twice");
  }
  if (scratch.empty()) k.fail("scratch lists no buffer");
}

}  // namespace

const std::vector<key_description>& keys() {
  using vd = variant_descriptor;
  static const std::vector<key_description> table = {
      {"family", read_family, required},
      {"entry", read_entry, required},
      {"blocks", read_blocks, required},
      {"tile", read_text<&vd::tile>, 0},
      {"grid", read_grid, 0},
      {"bounds", read_bounds, 0},
      {"shared_bytes", read_text<&vd::shared_bytes>, 0},
      {"dtypes", read_dtypes, 0},
      {"ops", read_ops, 0},
      {"summary", read_text<&vd::summary>, may_be_empty},
      {"order", read_order, 0},
      {"output", read_output, 0},
      {"workspace", read_text<&vd::workspace>, 0},
      {"params", read_params, 0},
      {"block_dims", read_dims<&vd::block_dims>, 0},
      {"grid_dims", read_dims<&vd::grid_dims>, 0},
      {"tune", read_tune, 0},
      {"require", read_require, 0},
      // One line per named point keeps a header readable.
      {"points", read_points, repeatable},
      {"target", read_target, 0},
      {"defines", read_defines, 0},
      {"tensor_maps", read_tensor_maps, 0},
      {"scratch", read_scratch, 0},
  };
  return table;
}

const key_description* find_key(const std::string& name) {
  for (const key_description& k : keys())
    if (name == k.name) return &k;
  return nullptr;
}

}  // namespace kl::header_keys
