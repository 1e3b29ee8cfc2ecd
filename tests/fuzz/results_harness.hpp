// What both results fuzz targets (fuzz_results: bytes; fuzz_results_structure: results files
// mutated as JSON) do with an input: what `kernlab compare` and `kernlab plot` do with a file.
// The bytes are written to a file on tmpfs (one name per process) and read through the real
// entry point, read_results_file (size and nesting bounded), then records_from_results (which
// checks the format and every record). For a file it accepts: compare (the document against
// itself, and against a second document when the input holds a NUL byte: the bytes after it),
// the three pictures (bars, --roofline, --timeline) and CSV. A crash, a hang or a sanitizer
// finding is a bug, and so is a broken promise:
// - reading throws kl::io_error alone (exit code 4, naming the file);
// - compare throws nothing for files the reader accepted (an exception is exit code 1, which CI
//   reads as a regression), and matches every record of a document with itself;
// - a picture is one SVG document, the timeline within its cap; it may refuse a file
//   (std::exception, exit code 4 naming the file).
#pragma once

#include "core/errors.hpp"
#include "report/exports.hpp"
#include "report/results_json.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace fuzz {

[[noreturn]] inline void broken_promise(const std::string& what) {
  std::fprintf(stderr, "fuzz_results: %s\n", what.c_str());
  std::abort();
}

inline const std::string& results_path(int which) {
  static const std::string dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  static const std::string paths[2] = {
      dir + "/kernlab-fuzz-results-" + std::to_string(getpid()) + "-a.json",
      dir + "/kernlab-fuzz-results-" + std::to_string(getpid()) + "-b.json"};
  return paths[which];
}

// Makes the paths first, so that they are destroyed after the files are removed.
struct remove_at_exit {
  remove_at_exit() { results_path(0); }
  ~remove_at_exit() {
    std::remove(results_path(0).c_str());
    std::remove(results_path(1).c_str());
  }
};
inline remove_at_exit cleanup;

// The document as `kernlab compare` and `plot` load it, or nothing when they refuse it.
inline bool load(const std::string& text, int which, nlohmann::json& out) {
  const std::string& path = results_path(which);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  try {
    out = kl::read_results_file(path);
  } catch (const kl::io_error& e) {
    if (std::string(e.what()).rfind(path + ": ", 0) != 0)
      broken_promise("a read error that does not name the file: " + std::string(e.what()));
    return false;
  }
  try {
    kl::records_from_results(out);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// A picture, at most `most` bytes, or a refusal (exit code 4, naming the file).
template <typename Draw>
void draw(const nlohmann::json& doc, std::size_t most, const char* which, Draw picture) {
  std::ostringstream os;
  try {
    picture(doc, os);
  } catch (const std::exception&) {
    return;
  }
  const std::string svg = os.str();
  if (svg.rfind("<svg", 0) != 0 || svg.find("</svg>\n") != svg.size() - 7)
    broken_promise(std::string(which) + " wrote something that is not one SVG document");
  if (svg.size() > most)
    broken_promise(std::string(which) + " wrote " + std::to_string(svg.size()) + " bytes");
}

inline void check_results_readers(const std::string& bytes) {
  const std::size_t nul = bytes.find('\0');
  nlohmann::json first, second;
  if (!load(bytes.substr(0, nul), 0, first)) return;
  const bool two = nul != std::string::npos && load(bytes.substr(nul + 1), 1, second);

  std::ostringstream out;
  try {
    const kl::compare_summary s = kl::compare_results(first, first, out);
    if (s.only_old != 0 || s.only_new != 0 || s.faster != 0 || s.slower != 0 ||
        s.outcome_changed != 0)
      broken_promise("a document compared with itself has differences");
    if (two) kl::compare_results(first, second, out);
  } catch (const std::exception& e) {
    broken_promise("compare threw for files the reader accepted: " + std::string(e.what()));
  }
  // The bars and the roofline grow with the records (a few hundred bytes of SVG for a record's
  // few hundred bytes); the timeline stops at its cap, past it by one row at most.
  const std::size_t linear = 1000 + 1000 * bytes.size();
  draw(first, linear, "plot", [](const auto& d, auto& os) { kl::write_svg(d, os); });
  draw(first, linear, "plot --roofline",
       [](const auto& d, auto& os) { kl::write_roofline_svg(d, os); });
  draw(first, kl::timeline_max_svg_bytes + (4u << 20), "plot --timeline",
       [](const auto& d, auto& os) { kl::write_timeline_svg(d, os); });
  std::ostringstream csv;
  try {
    kl::write_csv(first, csv);
  } catch (const std::exception&) {
  }
}

}  // namespace fuzz
