// --sanitize: where each tool's log goes, and the verdict its summary lines give.
#include "runner/runner.hpp"

#include "core/file_read.hpp"
#include "core/file_write.hpp"

#include <cctype>
#include <sstream>
#include <string>

namespace kl {
namespace {

// The most read of a sanitizer's log (for its verdict).
constexpr std::uint64_t max_sanitizer_log_bytes = std::uint64_t{256} << 20;

// "478" from "478 errors..." at `pos`; -1 when no number starts there.
long leading_count(const std::string& s, std::size_t pos) {
  while (pos < s.size() && s[pos] == ' ') ++pos;
  std::size_t end = pos;
  while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end]))) ++end;
  return end == pos ? -1 : std::stol(s.substr(pos, end - pos));
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

std::string plural(long n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

sanitizer_summary parse_sanitizer_log(std::istream& in) {
  // The summary lines, as compute-sanitizer writes them:
  //   ========= ERROR SUMMARY: 478 errors
  //   ========= ERROR SUMMARY: 378 errors were not printed. Use --print-limit option to adjust ...
  //   ========= RACECHECK SUMMARY: 96 hazards displayed (96 errors, 0 warnings)
  // The second line repeats the first's prefix: only a count followed by nothing but "error(s)"
  // is the total.
  sanitizer_summary s;
  std::string line;
  while (std::getline(in, line)) {
    if (!starts_with(line, "========= ")) continue;
    std::string text = line.substr(10);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.pop_back();
    if (starts_with(text, "ERROR SUMMARY:")) {
      const std::size_t at = std::string("ERROR SUMMARY:").size();
      const long n = leading_count(text, at);
      if (n < 0) continue;
      const std::string rest = text.substr(text.find_first_of("0123456789", at));
      const std::string words = rest.substr(rest.find_first_not_of("0123456789"));
      if (words == " error" || words == " errors")
        s.errors = n;
      else if (starts_with(words, " error") && words.find("not printed") != std::string::npos)
        s.not_printed = n;
    } else if (starts_with(text, "RACECHECK SUMMARY:")) {
      s.hazards = leading_count(text, std::string("RACECHECK SUMMARY:").size());
      const auto open = text.find('(');
      if (open != std::string::npos) {
        s.hazard_errors = leading_count(text, open + 1);
        const auto comma = text.find(',', open);
        if (comma != std::string::npos) s.hazard_warnings = leading_count(text, comma + 1);
      }
    } else if (s.first.empty()) {
      for (const char* word : {"Invalid", "Race", "hazard", "Error"})
        if (text.find(word) != std::string::npos) {
          s.first = text;
          break;
        }
    }
  }
  return s;
}

std::string sanitizer_log_path(const std::string& journal_path, std::string& folder,
                               const std::string& tool, const std::string& variant) {
  if (!journal_path.empty()) return journal_path + "." + tool + "." + variant + ".log";
  if (folder.empty()) folder = make_private_folder("kernlab-sanitize-");
  return folder + "/" + tool + "-" + variant + ".log";
}

std::string sanitizer_verdict(const std::string& tool, const std::string& path) {
  std::istringstream in(read_regular_file(path, max_sanitizer_log_bytes).bytes);
  const sanitizer_summary s = parse_sanitizer_log(in);
  if (s.errors < 0 && s.hazards < 0) return tool + ": no summary (see " + path + ")";
  if (s.errors <= 0 && s.hazards <= 0) return tool + ": clean";
  // The count first, then what explains it: racecheck's split, the errors not printed, the first.
  std::string count, notes;
  if (s.hazards > 0) {
    count = plural(s.hazards, "hazard");
    if (s.hazard_errors >= 0)
      notes = plural(s.hazard_errors, "error") + ", " +
              plural(std::max(0L, s.hazard_warnings), "warning");
  } else {
    count = plural(s.errors, "error");
  }
  if (s.not_printed > 0)
    notes += (notes.empty() ? "" : "; ") + std::to_string(s.not_printed) + " not printed";
  if (!s.first.empty()) notes += (notes.empty() ? "" : "; ") + std::string("first: ") + s.first;
  return tool + ": " + count + (notes.empty() ? "" : " (" + notes + ")") + " [" + path + "]";
}

}  // namespace kl
