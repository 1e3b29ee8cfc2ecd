// The compile cache's key: a hash of everything that can change what NVRTC makes of a request.
//
// In the key: the source text and its path (diagnostics and -lineinfo name it), every NVRTC
// option (architecture, include folders, pre-includes, extras), the name expressions (the
// template instantiations), the NVRTC version, and every header the file reaches: its name as
// written, where it was found, and, for the kernels' own headers, its content. Headers of the
// CUDA toolkit are not read: the NVRTC version and the toolkit's include folder (an -I option)
// already say which toolkit they come from, and reading cuda_fp16.h and its dozen companions on
// every run would cost more than the cache saves on small files. Modification times are never
// used: a saved-but-unchanged file keeps its key, and a restored old file gets its old key back.
#pragma once

#include "nvrtc/compiler.hpp"
#include "nvrtc/hash.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace kl::nvrtc {

/// Deeper #include nesting is an error: GCC's and Clang's limit, far past any real header tree.
constexpr std::size_t kMaxIncludeDepth = 200;
/// A larger header is refused: the scanner reads each header whole, and so does NVRTC.
constexpr std::uintmax_t kMaxHeaderBytes = std::uintmax_t{16} << 20;

/// A header the scanner cannot follow (nested too deep, too large, a FIFO or a device); the
/// message names the file.
class scan_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One header a compile reaches, as the scanner resolved it.
struct header_dependency {
  std::string spelled;   ///< as written: "kernlab/reduce.cuh"
  std::string includer;  ///< the file whose #include names it; "" for a --pre-include
  std::string path;      ///< where it was found, physically (canonical); "" when it was not
  bool toolkit = false;  ///< under a toolkit include folder: named in the key, never read
  digest128 content;     ///< the content hash of a kernels' header
};

/// Follows #include directives from a kernel file through the headers it reaches, searching as
/// NVRTC does: "..." beside the including file, then the include folders in order; <...> the
/// include folders only; a --pre-include the working folder, then the include folders. Like
/// NVRTC, it resolves a `..` after a symlinked folder physically (the link target's parent).
/// A folder is not a header (the search goes on, as NVRTC's does); a FIFO or a device where a
/// header is looked for, a header over kMaxHeaderBytes, or one nested more than kMaxIncludeDepth
/// deep makes scan() throw scan_error naming it. (A FIFO is an error rather than "not found":
/// NVRTC would open it and wait for a writer until --compile-timeout.)
///
/// It does not evaluate #if, so it may follow an include a condition leaves out: that header's
/// edits then change the key too (a needless miss, never a wrong hit). A computed include
/// (`#include MACRO`) cannot be followed, so then every file under the non-toolkit include
/// folders goes into the key instead.
///
/// Thread-safe. It remembers every header it read, so the files of one sweep that share a header
/// read it once; it sees the files as they were when it first read them, so each sweep (and each
/// --watch round) makes a new one.
class include_scanner {
 public:
  /// Headers under `toolkit_dirs` (the CUDA include folder) are located but never read.
  explicit include_scanner(std::vector<std::string> toolkit_dirs = {});
  ~include_scanner();
  include_scanner(const include_scanner&) = delete;
  include_scanner& operator=(const include_scanner&) = delete;

  /// The headers the request's pre-includes and source reach, depth first, in include order.
  /// Throws scan_error.
  std::vector<header_dependency> scan(const compile_request& request);

 private:
  struct file_info;
  std::shared_ptr<const file_info> read(const std::string& path);
  bool is_toolkit(const std::string& physical_path) const;

  std::vector<std::string> toolkit_dirs_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const file_info>> files_;
};

/// The cache key of a request whose headers were scanned: 32 hex digits name its entry.
digest128 make_key(const compile_request& request, const std::vector<header_dependency>& headers);

/// Scans the request's headers, then makes its key.
digest128 make_key(const compile_request& request, include_scanner& scanner);

}  // namespace kl::nvrtc
