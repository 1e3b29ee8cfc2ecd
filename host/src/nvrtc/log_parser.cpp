// NVRTC's log read back as data: diagnostics in file:line form and ptxas' resource report.
//
// The log is user-controlled text (a kernel's own lines, a 40 KB #warning, a 200 KB template
// argument echoed back), so it is scanned by hand, in one pass per line, never with std::regex:
// libstdc++'s matcher recurses once per character and overflowed the stack on lines of tens of
// KB (SIGSEGV). Kept apart from compiler.cpp so tests/fuzz can build it without NVRTC.
#include "nvrtc/compiler.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

namespace kl::nvrtc {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The number spelled by line[from, to) (digits only); nothing for an empty run or one that does
// not fit (a line number of 30 digits is not a diagnostic).
template <typename Int>
std::optional<Int> number_in(std::string_view line, std::size_t from, std::size_t to) {
  Int value = 0;
  if (from >= to) return std::nullopt;
  const auto [end, ec] = std::from_chars(line.data() + from, line.data() + to, value);
  if (ec != std::errc() || end != line.data() + to) return std::nullopt;
  return value;
}

// Reads "<digits><text>" at `pos`: the number, with `pos` moved past the text; nothing (and
// `pos` unchanged) when the line does not continue so.
std::optional<long> number_then(std::string_view line, std::size_t& pos, std::string_view text) {
  std::size_t end = pos;
  while (end < line.size() && is_digit(line[end])) ++end;
  if (line.substr(end, text.size()) != text) return std::nullopt;
  const auto value = number_in<long>(line, pos, end);
  if (value) pos = end + text.size();
  return value;
}

// The number made of the digits right before `pos`, e.g. "30" in "Used 30 registers" for the pos
// of " registers"; `begin` is set to its first digit.
std::optional<long> number_before(std::string_view line, std::size_t pos, std::size_t& begin) {
  begin = pos;
  while (begin > 0 && is_digit(line[begin - 1])) --begin;
  return number_in<long>(line, begin, pos);
}

// The first "<digits><text>" in the line: its number, or nothing.
std::optional<long> first_number_before(std::string_view line, std::string_view text) {
  std::size_t begin = 0;
  for (auto at = line.find(text); at != std::string_view::npos; at = line.find(text, at + 1))
    if (const auto value = number_before(line, at, begin)) return value;
  return std::nullopt;
}

// "(12): error: text" (or "catastrophic error", "warning", each optionally with " #20-D") at
// `open`, the position of the '('. Fills line, severity and message.
bool parse_tail(std::string_view line, std::size_t open, diagnostic& d) {
  std::size_t close = open + 1;
  while (close < line.size() && is_digit(line[close])) ++close;
  if (line.substr(close, 3) != "): ") return false;
  const auto number = number_in<int>(line, open + 1, close);
  if (!number) return false;
  std::string_view rest = line.substr(close + 3);
  std::string severity;
  for (std::string_view s : {"catastrophic error", "error", "warning"})
    if (rest.substr(0, s.size()) == s) {
      severity = s == "warning" ? "warning" : "error";
      rest.remove_prefix(s.size());
      break;
    }
  if (severity.empty()) return false;
  if (rest.substr(0, 2) == " #") {  // an error number: [0-9A-Za-z-]+
    std::size_t i = 2;
    auto word = [](char c) {
      const char lower = static_cast<char>(c | 0x20);
      return is_digit(c) || (lower >= 'a' && lower <= 'z') || c == '-';
    };
    while (i < rest.size() && word(rest[i])) ++i;
    if (i > 2 && rest.substr(i, 2) == ": ") rest.remove_prefix(i);
  }
  if (rest.substr(0, 2) != ": ") return false;
  d.line = *number;
  d.severity = severity;
  d.message = std::string(rest.substr(2));
  return true;
}

}  // namespace

std::string diagnostic::to_string() const {
  return file + ":" + std::to_string(line) + ": " + severity + ": " + message;
}

std::string compile_result::error_summary() const {
  // The compiled file's errors first, then the headers', each file's in the order of its lines
  // (NVRTC reports a template's errors where it instantiates it, after later lines' errors),
  // each with its source line and caret.
  std::vector<const diagnostic*> errors;
  for (const auto& d : diagnostics)
    if (d.severity == "error") errors.push_back(&d);
  std::stable_sort(errors.begin(), errors.end(), [&](const diagnostic* a, const diagnostic* b) {
    if ((a->file == path) != (b->file == path)) return a->file == path;
    if (a->file != b->file) return a->file < b->file;
    return a->line < b->line;
  });
  std::ostringstream out;
  for (const diagnostic* d : errors)
    out << d->to_string() << "\n" << d->context << (d->context.empty() ? "" : "\n");
  if (out.tellp() > 0) return out.str();
  // No parsable diagnostic (a ptxas or linker error): its "error   :" and "fatal   :" lines,
  // which ptxas writes after every function's resource report; else the start of the log.
  const auto says_error = [](std::string_view line) {
    for (const std::string_view word : {"error", "fatal"})
      for (std::size_t at = line.find(word); at != std::string_view::npos;
           at = line.find(word, at + 1)) {
        const std::size_t next = line.find_first_not_of(' ', at + word.size());
        if (next != std::string_view::npos && line[next] == ':') return true;
      }
    return false;
  };
  std::istringstream in(log);
  std::string line;
  std::vector<std::string> head;
  int shown = 0;
  while (std::getline(in, line)) {
    if (head.size() < 10) head.push_back(line);
    if (shown < 10 && says_error(line)) {
      out << line << "\n";
      ++shown;
    }
  }
  if (shown == 0)
    for (const auto& l : head) out << l << "\n";
  return out.str();
}

std::vector<diagnostic> parse_diagnostics(const std::string& log) {
  // NVRTC writes "path(12): error: text" (and "error #20-D: text" with error numbers on). The
  // path may itself hold "(3): ", so the last '(' that starts a valid tail wins, as a greedy
  // "(.+)\((\d+)\): ..." would choose. Each try stops at the first character that does not fit,
  // and the digits it reads end at the next '(', so a line costs linear time.
  // NVRTC prints the source line and a caret under the column below each message: the two lines
  // right after a diagnostic, when the second is a caret alone, are its context.
  std::vector<diagnostic> out;
  std::istringstream in(log);
  std::string text, source;  // `source`: the line after a diagnostic, maybe its source line
  enum { other, after_diagnostic, after_source } state = other;
  while (std::getline(in, text)) {
    const std::string_view line = text;
    const std::size_t caret = line.find_first_not_of(' ');
    if (state == after_source && caret != std::string_view::npos && line[caret] == '^' &&
        line.find_first_not_of(' ', caret + 1) == std::string_view::npos) {
      out.back().context = source + "\n" + text;
      state = other;
      continue;
    }
    diagnostic d;
    bool found = false;
    for (std::size_t open = line.rfind('('); open != std::string_view::npos && open > 0;
         open = line.rfind('(', open - 1)) {
      if (!parse_tail(line, open, d)) continue;
      d.file = std::string(line.substr(0, open));
      out.push_back(std::move(d));
      found = true;
      break;
    }
    if (found) {
      state = after_diagnostic;
    } else if (state == after_diagnostic) {
      source = text;
      state = after_source;
    } else {
      state = other;
    }
  }
  return out;
}

std::map<std::string, resource_usage> parse_ptxas_report(const std::string& log) {
  // ptxas info    : Compiling entry function '_Z1kv' for 'sm_90'
  // ptxas         .     8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
  // ptxas info    : Used 30 registers, used 1 barriers, 1024 bytes smem
  constexpr std::string_view entry = "Compiling entry function '";
  constexpr std::string_view frame = " bytes stack frame, ";
  std::map<std::string, resource_usage> out;
  std::istringstream in(log);
  std::string text, current;
  while (std::getline(in, text)) {
    const std::string_view line = text;
    bool is_entry = false;
    for (auto at = line.find(entry); at != std::string_view::npos; at = line.find(entry, at + 1)) {
      const std::size_t name = at + entry.size();
      const std::size_t quote = line.find('\'', name);
      if (quote == std::string_view::npos) break;  // no later occurrence can close either
      if (quote == name) continue;                 // '': not a name
      current = std::string(line.substr(name, quote - name));
      out[current];
      is_entry = true;
      break;
    }
    if (is_entry || current.empty()) continue;
    bool is_frame = false;
    for (auto at = line.find(frame); at != std::string_view::npos && !is_frame;
         at = line.find(frame, at + 1)) {
      std::size_t begin = 0, pos = at + frame.size();
      const auto stack = number_before(line, at, begin);
      const auto stores = stack ? number_then(line, pos, " bytes spill stores, ") : std::nullopt;
      const auto loads = stores ? number_then(line, pos, " bytes spill loads") : std::nullopt;
      if (!loads) continue;
      auto& r = out[current];
      r.stack_frame_bytes = *stack;
      r.spill_store_bytes = *stores;
      r.spill_load_bytes = *loads;
      is_frame = true;
    }
    if (is_frame) continue;
    // "Used 30 registers": the digits must follow "Used ".
    for (auto at = line.find(" registers"); at != std::string_view::npos;
         at = line.find(" registers", at + 1)) {
      std::size_t begin = 0;
      const auto registers = number_before(line, at, begin);
      if (!registers || *registers > 65536 || begin < 5 || line.substr(begin - 5, 5) != "Used ")
        continue;
      auto& r = out[current];
      r.registers = static_cast<int>(*registers);
      if (const auto smem = first_number_before(line, " bytes smem")) r.static_shared_bytes = *smem;
      break;
    }
  }
  return out;
}

}  // namespace kl::nvrtc
