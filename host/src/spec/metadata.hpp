// The metadata header of a kernel source file (docs/kernel_contract.md).
#pragma once

#include "spec/variant.hpp"

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

struct parsed_header {
  variant_descriptor descriptor;
  std::map<std::string, int> key_lines;  ///< where each key was given, for later errors
  int header_line = 0;                   ///< the line of "/* kernlab"

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

/// The stem of a path: "kernels_src/reduce/my_idea.cu" -> "my_idea".
std::string file_stem(const std::string& path);

}  // namespace kl
