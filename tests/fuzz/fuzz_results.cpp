// libFuzzer target: the readers of results files. The bytes are parsed as JSON and go where
// `kernlab compare` and `kernlab plot` take a file: records_from_results (which checks the format
// and every record), then, for what it accepts, compare (the document against itself, and against
// a second document when the input holds a NUL byte: the bytes after it), plot and CSV. These may
// throw a std::exception (a clear error for the user); a crash, a hang or a sanitizer finding is
// a bug. Promises checked: compare matches every record of a document with itself, and plot gives
// one SVG document.
#include "report/exports.hpp"
#include "report/results_json.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

namespace {

[[noreturn]] void broken_promise(const std::string& what) {
  std::fprintf(stderr, "fuzz_results: %s\n", what.c_str());
  std::abort();
}

// The document as `kernlab compare` and `plot` load it, or nothing when they would refuse it.
bool load(const std::string& text, nlohmann::json& out) {
  out = nlohmann::json::parse(text, nullptr, false);
  if (out.is_discarded()) return false;
  try {
    kl::records_from_results(out);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = bytes.find('\0');
  nlohmann::json first, second;
  if (!load(bytes.substr(0, nul), first)) return 0;
  const bool two = nul != std::string::npos && load(bytes.substr(nul + 1), second);

  std::ostringstream out;
  try {
    const kl::compare_summary s = kl::compare_results(first, first, out);
    if (s.only_old != 0 || s.only_new != 0 || s.faster != 0 || s.slower != 0 ||
        s.outcome_changed != 0)
      broken_promise("a document compared with itself has differences");
  } catch (const std::exception&) {
  }
  if (two) {
    try {
      kl::compare_results(first, second, out);
    } catch (const std::exception&) {
    }
  }
  std::ostringstream svg;
  try {
    kl::write_svg(first, svg);
    const std::string text = svg.str();
    if (text.rfind("<svg", 0) != 0 || text.find("</svg>\n") != text.size() - 7)
      broken_promise("plot wrote something that is not one SVG document");
  } catch (const std::exception&) {
  }
  std::ostringstream csv;
  try {
    kl::write_csv(first, csv);
  } catch (const std::exception&) {
  }
  return 0;
}
