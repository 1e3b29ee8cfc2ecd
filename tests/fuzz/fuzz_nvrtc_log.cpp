// libFuzzer target: NVRTC's compile log read back as diagnostics and ptxas' resource report
// (nvrtc/log_parser.cpp). The log is user-controlled text: a kernel's lines, #warning texts and
// name expressions come back in it, at any length.
//
// The bytes are a log. The parsers may throw nothing; what they return must keep their promises
// (checked below): a diagnostic names a file, a line number and one of the two severities, and
// comes from one line of the log.
#include "nvrtc/compiler.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

[[noreturn]] void broken_promise(const std::string& what) {
  std::fprintf(stderr, "fuzz_nvrtc_log: %s\n", what.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kl::nvrtc::compile_result r;
  r.path = "fuzz.cu";
  r.log.assign(reinterpret_cast<const char*>(data), size);
  r.diagnostics = kl::nvrtc::parse_diagnostics(r.log);
  for (const auto& d : r.diagnostics) {
    if (d.file.empty()) broken_promise("a diagnostic without a file");
    if (d.line < 0) broken_promise("line " + std::to_string(d.line));
    if (d.severity != "error" && d.severity != "warning")
      broken_promise("severity '" + d.severity + "'");
    if (d.file.find('\n') != std::string::npos || d.message.find('\n') != std::string::npos)
      broken_promise("a diagnostic spans lines");
    const std::string line = d.to_string();
    if (line.size() > r.log.size() + 16) broken_promise("a diagnostic longer than the log");
  }
  const std::string summary = r.error_summary();
  if (!r.log.empty() && summary.empty() && r.log.find_first_not_of('\n') != std::string::npos)
    broken_promise("no summary of a log with text");

  for (const auto& [name, usage] : kl::nvrtc::parse_ptxas_report(r.log)) {
    if (name.empty() || name.find_first_of("'\n") != std::string::npos)
      broken_promise("entry name '" + name + "'");
    if (usage.registers < 0 || usage.static_shared_bytes < 0 || usage.stack_frame_bytes < 0 ||
        usage.spill_store_bytes < 0 || usage.spill_load_bytes < 0)
      broken_promise("a negative resource for " + name);
  }
  return 0;
}
