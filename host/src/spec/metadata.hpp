// The metadata header of a kernel source file (docs/kernel_contract.md).
#pragma once

#include "spec/variant.hpp"

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace kl {

/// A header that cannot be used. what() is "file:line: message", like a compiler's.
class metadata_error : public std::runtime_error {
 public:
  metadata_error(const std::string& file, int line, const std::string& message)
      : std::runtime_error(file + ":" + std::to_string(line) + ": " + message),
        file_(file),
        line_(line) {}
  const std::string& file() const { return file_; }
  int line() const { return line_; }

 private:
  std::string file_;
  int line_;
};

/// One item of a header's `points:`: `reduce_unrolling4(UNROLL=4) "a summary"`.
struct named_point {
  std::string name;
  /// A value for every tunable, in the header's `tune:` order (checked when the header is read).
  std::vector<std::pair<std::string, std::int64_t>> values;
  std::string summary;  ///< empty: the file's
  int line = 0;         ///< the `points:` line it was given on
};

struct parsed_header {
  variant_descriptor descriptor;
  std::map<std::string, int> key_lines;  ///< where each key was given, for later errors
  int header_line = 0;                   ///< the line of "/* kernlab"
  /// The points `points:` names, in the order given (the line of `points:` may repeat).
  std::vector<named_point> named_points;
  /// With `tune:`: one descriptor per point (expand_tunables), made and checked when the header
  /// is read; empty without tunables.
  std::vector<variant_descriptor> points;

  /// The line `key` was given on, or the header's line when it was not given.
  int line_of(const std::string& key) const {
    auto it = key_lines.find(key);
    return it == key_lines.end() ? header_line : it->second;
  }
};

/// Parses the header of `source`, read from `path`; the variant's name is the file's stem.
/// Checks syntax and every value that needs no family knowledge beyond `shape_names`, the
/// variables of the launch geometry (matmul's M, N, K; a data family's axes); throws
/// metadata_error.
parsed_header parse_header(const std::string& source, const std::string& path,
                           const std::vector<std::string>& shape_names = {"M", "N", "K"});

/// Checks every expression of a header (tile, shared_bytes, workspace, params, block_dims,
/// grid_dims) at every block it lists; throws metadata_error naming the key's line.
void check_expressions(parsed_header& header, const std::vector<std::string>& shape_names);

/// The values of one `tune:` item: "1, 2, 4", "1..8", "32..1024 pow2", "4..64 step 4".
/// Throws std::invalid_argument.
std::vector<std::int64_t> parse_tunable_values(const std::string& text);

/// A header with `tune:` as one header per point: the point's values become the first params
/// (so every family substitutes them like params), the blocks are those `require:` allows at
/// the point (points it allows at no block are left out), and the descriptor says which point
/// of which file it is (tunable_file, point, named_point). A point `points:` names takes that
/// name (and its summary, if it has one); any other is "my_kernel[ITEMS=4;UNROLL=2]". The named
/// points come first, in the order `points:` gives them, then the rest, the first tunable
/// varying slowest. A header without tunables is returned as it is. Throws metadata_error (too
/// many points, a requirement that does not evaluate, none left, a named point left out).
std::vector<parsed_header> expand_tunables(const parsed_header& header,
                                           const std::vector<std::string>& shape_names);

/// The stem of a path: "kernels_src/reduce/my_idea.cu" -> "my_idea".
std::string file_stem(const std::string& path);

}  // namespace kl
