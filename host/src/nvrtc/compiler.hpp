// Runtime compilation of one kernel file with NVRTC.
//
// One program per file, one name expression per configuration (template instantiation), compiled
// straight to a CUBIN for one architecture. A compile error is an ordinary outcome for a lab whose
// users edit kernels, so it comes back as data (the whole log, diagnostics in file:line form and
// the options used), never as an exception. Misuse of NVRTC itself throws nvrtc_error.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace kl::nvrtc {

/// Per-function resources from ptxas' report (-Xptxas -v), known without a GPU.
struct resource_usage {
  int registers = 0;
  long static_shared_bytes = 0;
  long stack_frame_bytes = 0;
  long spill_store_bytes = 0;
  long spill_load_bytes = 0;
};

/// One compiler message, pointing into the user's file.
struct diagnostic {
  std::string file;
  int line = 0;
  std::string severity;  ///< "error" or "warning"
  std::string message;
  /// The source line and the caret under the column, as NVRTC prints them below the message
  /// ("    int y = x + 1;\n            ^"); "" when the log has none.
  std::string context;
  /// "kernels_src/reduce/my_idea.cu:12: error: identifier "x" is undefined"
  std::string to_string() const;
};

struct compile_request {
  std::string source;                         ///< the file's text
  std::string path;                           ///< shown in every diagnostic
  std::vector<std::string> name_expressions;  ///< e.g. "reduce5<256, int, kl::sum<int>>"
  std::string arch = "sm_90";
  std::vector<std::string> include_dirs;
  std::vector<std::string> pre_includes;  ///< headers included before the source
  std::vector<std::string> extra_options;
};

struct compile_result {
  bool ok = false;
  std::string path;  ///< the compiled file, as diagnostics name it
  std::string cubin;
  std::map<std::string, std::string> lowered_names;  ///< name expression -> mangled name
  std::map<std::string, resource_usage> resources;   ///< name expression -> ptxas report
  std::string log;
  std::vector<std::string> options;
  std::vector<diagnostic> diagnostics;
  double milliseconds = 0;

  /// The errors, one per line, or the log's first lines when no diagnostic could be parsed.
  std::string error_summary() const;
};

class nvrtc_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

compile_result compile(const compile_request& request);

/// The NVRTC options compile() passes for a request, in order (the compile cache's key hashes
/// exactly these).
std::vector<std::string> options_for(const compile_request& request);

/// "13.0"
std::string version();

/// Diagnostics from an NVRTC log ("path(line): error: text").
std::vector<diagnostic> parse_diagnostics(const std::string& log);

/// ptxas' per-function report from an NVRTC log, keyed by mangled name.
std::map<std::string, resource_usage> parse_ptxas_report(const std::string& log);

}  // namespace kl::nvrtc
