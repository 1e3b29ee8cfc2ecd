#include "spec/metadata.hpp"
#include "spec/header_text.hpp"

#include "spec/dtypes.hpp"
#include "spec/expression.hpp"
#include "spec/names.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <sstream>
#include <string_view>

namespace kl {

using header_text::header_integer;
using header_text::trim;

namespace {

const std::vector<std::string> known_keys = {
    "family", "entry",   "blocks", "tile",   "grid",        "bounds", "shared_bytes", "dtypes",
    "ops",    "summary", "order",  "output", "workspace",   "params", "block_dims",   "grid_dims",
    "tune",   "require", "points", "target", "tensor_maps", "scratch"};

// Names an expression already has, which a param may not take.
const std::vector<std::string> reserved_names = {"BLOCK", "TSIZE", "DTYPE", "GRID", "M",
                                                 "N",     "K",     "T",     "OP",   "sqrt"};

bool is_identifier(const std::string& s) {
  return !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_') &&
         std::all_of(s.begin(), s.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
         });
}

// The names below are checked by hand, not with std::regex: libstdc++'s matcher recurses once
// per character, so a long enough line (tens of KB) overflowed the stack (found by tests/fuzz).
bool ascii_lower(char c) { return c >= 'a' && c <= 'z'; }
bool ascii_alpha(char c) { return ascii_lower(c) || (c >= 'A' && c <= 'Z'); }
bool ascii_digit(char c) { return c >= '0' && c <= '9'; }
bool ascii_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }  // \t \n \v \f \r

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

// [A-Za-z0-9_][A-Za-z0-9_-]*
bool is_variant_name(const std::string& s) {
  return !s.empty() && s[0] != '-' && std::all_of(s.begin(), s.end(), [](char c) {
    return ascii_alpha(c) || ascii_digit(c) || c == '_' || c == '-';
  });
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

// Drops a trailing "# comment".
std::string strip_comment(const std::string& s) {
  const auto hash = s.find('#');
  return hash == std::string::npos ? s : s.substr(0, hash);
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
  if (!is_variant_name(d.name))
    throw metadata_error(path, 1,
                         "the file name '" + d.name +
                             "' cannot be a variant name (use letters, digits, '_' and '-')");

  // A UTF-8 byte-order mark, as some Windows editors write, is not part of the first line.
  constexpr std::string_view bom = "\xEF\xBB\xBF";
  std::istringstream in(std::string_view(source).substr(0, 3) == bom ? source.substr(3) : source);
  std::string raw;
  int line_no = 0;
  bool in_header = false, closed = false;
  while (std::getline(in, raw)) {
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
    bool ends_here = false;
    if (const auto close = line.find("*/"); close != std::string::npos) {
      ends_here = true;
      line = trim(line.substr(0, close));
    }
    line = trim(strip_comment(line));
    if (!line.empty()) {
      const auto colon = line.find(':');
      if (colon == std::string::npos)
        throw metadata_error(path, line_no, "expected 'key: value', got '" + line + "'");
      const std::string key = trim(line.substr(0, colon));
      const std::string value = trim(line.substr(colon + 1));
      if (std::find(known_keys.begin(), known_keys.end(), key) == known_keys.end()) {
        std::string msg = "unknown key '" + key + "'";
        const auto near = nearest_names(key, known_keys, 1);
        msg += near.empty() ? "" : " (did you mean '" + near[0] + "'?)";
        std::string all;
        for (const auto& k : known_keys) all += (all.empty() ? "" : ", ") + k;
        throw metadata_error(path, line_no, msg + "; known keys: " + all);
      }
      // `points:` alone may be given on several lines, each adding its items: one line per
      // named point keeps a header readable.
      if (auto prev = out.key_lines.find(key); prev != out.key_lines.end() && key != "points")
        throw metadata_error(path, line_no,
                             "key '" + key + "' repeated (first given on line " +
                                 std::to_string(prev->second) + ")");
      if (value.empty() && key != "summary")
        throw metadata_error(path, line_no, "key '" + key + "' has no value");
      out.key_lines.emplace(key, line_no);  // `points:`: its first line

      if (key == "family") {
        if (!is_family_name(value))
          throw metadata_error(path, line_no, "family '" + value + "' is not a family name");
        d.family = value;
      } else if (key == "entry") {
        if (!is_entry(value))
          throw metadata_error(path, line_no,
                               "entry '" + value +
                                   "' is not a function template-id like "
                                   "'my_kernel<BLOCK, T, OP>'");
        d.entry = value;
      } else if (key == "blocks") {
        for (const auto& item : split_list(value)) {
          std::size_t used = 0;
          long b = -1;
          try {
            b = std::stol(item, &used);
          } catch (const std::exception&) {
          }
          if (used != item.size() || b < 1 || b > 1024)
            throw metadata_error(path, line_no,
                                 "block size '" + item + "' is not an integer in 1..1024");
          if (std::count(d.blocks.begin(), d.blocks.end(), static_cast<unsigned>(b)))
            throw metadata_error(path, line_no, "block size " + item + " listed twice");
          d.blocks.push_back(static_cast<unsigned>(b));
        }
        // "blocks: ," has a value but no block size; an empty list would mean "the block size
        // does not apply", which is for plugins only (found by tests/fuzz).
        if (d.blocks.empty()) throw metadata_error(path, line_no, "blocks lists no block size");
      } else if (key == "tile") {
        d.tile = value;
      } else if (key == "grid") {
        if (value == "tiles")
          d.grid = grid_kind::tiles;
        else if (value == "resident")
          d.grid = grid_kind::resident;
        else
          throw metadata_error(path, line_no,
                               "grid must be 'tiles' or 'resident', not '" + value + "'");
      } else if (key == "bounds") {
        if (value == "padded")
          d.bounds = bounds_kind::padded;
        else if (value == "checked")
          d.bounds = bounds_kind::checked;
        else
          throw metadata_error(path, line_no,
                               "bounds must be 'padded' or 'checked', not '" + value + "'");
      } else if (key == "shared_bytes") {
        d.shared_bytes = value;
      } else if (key == "target") {
        // Only the architecture-specific targets: a plain sm_XY is what every file gets anyway
        // (the GPU's own), and naming one would compile for a GPU other than the one that runs.
        const bool ok = value.size() >= 5 && value.rfind("sm_", 0) == 0 && value.back() == 'a' &&
                        std::all_of(value.begin() + 3, value.end() - 1,
                                    [](char ch) { return ch >= '0' && ch <= '9'; });
        if (!ok)
          throw metadata_error(
              path, line_no,
              "target '" + value +
                  "': expected an architecture-specific target such as sm_90a "
                  "(a file is compiled for the GPU's own architecture without it)");
        d.target = value;
      } else if (key == "output") {
        if (value == "per_block")
          d.output = output_kind::per_block;
        else if (value == "single")
          d.output = output_kind::single;
        else
          throw metadata_error(path, line_no,
                               "output must be 'per_block' or 'single', not '" + value + "'");
      } else if (key == "workspace") {
        d.workspace = value;
      } else if (key == "tune") {
        // "ITEMS = 1, 2, 4, 8; UNROLL = 1..4; WIDTH = 32..1024 pow2; STEP = 4..64 step 4"
        for (const std::string& item : split_items(value)) {
          const auto eq = item.find('=');
          const std::string name = trim(item.substr(0, eq == std::string::npos ? 0 : eq));
          const std::string values = eq == std::string::npos ? "" : trim(item.substr(eq + 1));
          if (eq == std::string::npos || !is_identifier(name) || values.empty())
            throw metadata_error(
                path, line_no,
                "tune: '" + item +
                    "' is not 'NAME = values' (a list such as "
                    "1, 2, 4, or a range such as 1..8, 32..1024 pow2, 4..64 step 4)");
          if (std::count(reserved_names.begin(), reserved_names.end(), name) ||
              data_dtype_size(name) != 0)  // a require's constants (DTYPE == float32)
            throw metadata_error(path, line_no, "tune: '" + name + "' is a reserved name");
          for (const auto& t : d.tunables)
            if (t.first == name)
              throw metadata_error(path, line_no, "tune: '" + name + "' given twice");
          try {
            d.tunables.emplace_back(name, parse_tunable_values(values));
          } catch (const std::invalid_argument& e) {
            throw metadata_error(path, line_no, "tune: " + name + ": " + e.what());
          }
        }
        if (d.tunables.empty()) throw metadata_error(path, line_no, "tune lists no parameter");
      } else if (key == "points") {
        // "reduce_unrolling4(UNROLL=4) \"a summary\"; ...": names for points of the tunables.
        for (named_point& p : parse_points(value, path, line_no)) {
          for (const named_point& q : out.named_points)
            if (q.name == p.name)
              throw metadata_error(path, line_no,
                                   "points: '" + p.name + "' named twice (first on line " +
                                       std::to_string(q.line) + ")");
          out.named_points.push_back(std::move(p));
        }
      } else if (key == "require") {
        // "BLOCK * ITEMS <= 8192; UNROLL <= ITEMS": each must hold (be non-zero) for a point.
        for (const std::string& item : split_items(value)) d.requires.push_back(item);
        if (d.requires.empty()) throw metadata_error(path, line_no, "require lists no condition");
      } else if (key == "params") {
        // "TILE = sqrt(BLOCK); BK = 8": expressions hold no ';', so it separates the items.
        for (const std::string& item : split_items(value)) {
          const auto eq = item.find('=');
          const std::string name = trim(item.substr(0, eq == std::string::npos ? 0 : eq));
          const std::string text = eq == std::string::npos ? "" : trim(item.substr(eq + 1));
          if (eq == std::string::npos || !is_identifier(name) || text.empty())
            throw metadata_error(path, line_no,
                                 "params: '" + item + "' is not 'NAME = expression'");
          if (std::count(reserved_names.begin(), reserved_names.end(), name))
            throw metadata_error(path, line_no, "params: '" + name + "' is a reserved name");
          for (const auto& p : d.params)
            if (p.first == name)
              throw metadata_error(path, line_no, "params: '" + name + "' given twice");
          d.params.emplace_back(name, text);
        }
        if (d.params.empty()) throw metadata_error(path, line_no, "params lists no parameter");
      } else if (key == "tensor_maps") {
        // "A[M][K] box [128][64] swizzle 128; B[K][N] box [64][BN] swizzle 128"
        for (const std::string& item : split_items(value)) {
          try {
            d.tensor_maps.push_back(parse_tensor_map(item));
          } catch (const std::invalid_argument& e) {
            throw metadata_error(path, line_no,
                                 "tensor_maps: '" + item + "': " + e.what() +
                                     " (expected e.g. 'A[M][K] box [128][64] swizzle 128': the "
                                     "buffer's dimensions outermost first, the box in elements, "
                                     "and a swizzle of 0, 32, 64 or 128 bytes)");
          }
          for (std::size_t i = 0; i + 1 < d.tensor_maps.size(); ++i)
            if (d.tensor_maps[i].buffer == d.tensor_maps.back().buffer)
              throw metadata_error(path, line_no,
                                   "tensor_maps: " + d.tensor_maps.back().buffer + " given twice");
        }
        if (d.tensor_maps.empty())
          throw metadata_error(path, line_no, "tensor_maps lists no tensor map");
      } else if (key == "scratch") {
        // "T Ap[M * ceil_div(K, 8) * 8]; int32 arrivals[1]"
        for (const std::string& item : split_items(value)) {
          try {
            d.scratch.push_back(parse_scratch(item));
          } catch (const std::invalid_argument& e) {
            throw metadata_error(path, line_no,
                                 "scratch: '" + item + "': " + e.what() +
                                     " (expected e.g. 'T Ap[M * K]': T or a dtype name, a name, "
                                     "and the element count in [])");
          }
          for (std::size_t i = 0; i + 1 < d.scratch.size(); ++i)
            if (d.scratch[i].name == d.scratch.back().name)
              throw metadata_error(path, line_no,
                                   "scratch: " + d.scratch.back().name + " given twice");
        }
        if (d.scratch.empty()) throw metadata_error(path, line_no, "scratch lists no buffer");
      } else if (key == "block_dims" || key == "grid_dims") {
        // "TILE, TILE": x, y (and z), each an expression; commas outside parentheses separate
        // them, so "min(RESIDENT_BLOCKS, ceil_div(N, BLOCK))" is one dimension.
        std::vector<std::string> dims;
        std::string current;
        int depth = 0;
        for (char c : value + ",") {
          if (c == '(') ++depth;
          if (c == ')') --depth;
          if (c != ',' || depth > 0) {
            current += c;
            continue;
          }
          dims.push_back(trim(current));
          current.clear();
          if (dims.back().empty())
            throw metadata_error(path, line_no, key + " has an empty dimension");
        }
        if (dims.size() > 3)
          throw metadata_error(path, line_no, key + " has more than 3 dimensions (x, y, z)");
        (key == "block_dims" ? d.block_dims : d.grid_dims) = dims;
      } else if (key == "dtypes" || key == "ops") {
        // "dtypes: ," has a value but names nothing; read as "every one the family has" it
        // would silently widen the variant (found by tests/fuzz).
        std::vector<std::string> items = split_list(value);
        if (items.empty())
          throw metadata_error(
              path, line_no, key + " lists no " + (key == "dtypes" ? "element type" : "operation"));
        (key == "dtypes" ? d.dtypes : d.ops) = std::move(items);
      } else if (key == "summary") {
        d.summary = value;
      } else if (key == "order") {
        std::size_t used = 0;
        long o = -1;
        try {
          o = std::stol(value, &used);
        } catch (const std::exception&) {
        }
        if (used != value.size() || o < 0 || o > 1000000)
          throw metadata_error(path, line_no,
                               "order '" + value + "' is not an integer in 0..1000000");
        d.order = static_cast<int>(o);
      }
    }
    if (ends_here) {
      closed = true;
      break;
    }
  }

  if (!in_header)
    throw metadata_error(path, 1,
                         "no kernlab header: the file needs a '/* kernlab' block comment with "
                         "family, entry and blocks (see docs/kernel_contract.md)");
  if (!closed)
    throw metadata_error(path, out.header_line, "the kernlab header is never closed with '*/'");
  for (const char* required : {"family", "entry", "blocks"})
    if (!out.key_lines.count(required))
      throw metadata_error(
          path, out.header_line,
          std::string("the kernlab header lacks the required key '") + required + "'");

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
  // Each named point: a value for every tunable (put in the tune: order), each one of its values,
  // no unknown name, and no point named twice. Whether require allows it is expand_tunables'.
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
