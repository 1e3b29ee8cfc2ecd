#include "runner/journal.hpp"

#include "core/errors.hpp"
#include "core/file_read.hpp"
#include "core/file_write.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace kl {
namespace {

// What --resume reads of a journal (or of a rank's file) at most: thousands of rows' records.
constexpr std::uint64_t max_journal_bytes = std::uint64_t{1} << 30;

}  // namespace

std::string default_journal_path() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/kernlab/journal.log";
  const char* home = std::getenv("HOME");
  if (!home || !*home) return "";  // never a shared folder such as /tmp: see journal()
  return std::string(home) + "/.cache/kernlab/journal.log";
}

journal::journal(const std::string& path, bool fresh) : path_(path) {
  std::error_code ec;
  const auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  // A link planted where the journal goes does not redirect its writes; the file is emptied only
  // once it is known to be ours (never O_TRUNC on open); a FIFO there holds nothing up.
  fd_ = open_appending("journal", path, fresh ? existing::empty : existing::keep, 0600).release();
}

journal::~journal() {
  if (fd_ >= 0) ::close(fd_);
}

void journal::append(const std::string& line, bool sync) {
  if (fd_ < 0) return;  // failed before: the run goes on without the journal
  const std::string text = line + "\n";
  // One write per line with O_APPEND: a line is never interleaved or half-written by us.
  // The "start" line must be on disk before the kernel runs: that is the point of the journal.
  errno = 0;
  const bool ok = ::write(fd_, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  (!sync || ::fdatasync(fd_) == 0);
  if (ok) return;
  const int err = errno;
  failure_ = "journal " + path_ + ": " + (err ? std::strerror(err) : "short write") +
             "; the run goes on without the journal, so --resume cannot resume the rest of it";
  ::close(fd_);
  fd_ = -1;
}

void journal::started(const std::string& key) { append("start\t" + key, true); }

void journal::finished(const std::string& key, const std::string& outcome,
                       const std::string& record) {
  // A record is one line: JSON escapes every control character inside strings.
  append("done\t" + key + "\t" + outcome + (record.empty() ? "" : "\t" + record), false);
}

namespace {

// Whether `name` is `base` + ".rank" + digits: a rank's file of journal `base`.
bool is_rank_file(const std::string& name, const std::string& base) {
  const std::string prefix = base + ".rank";
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return false;
  return name.find_first_not_of("0123456789", prefix.size()) == std::string::npos;
}

// The rank files beside journal `path`.
std::vector<std::filesystem::path> rank_files(const std::string& path) {
  std::vector<std::filesystem::path> out;
  const std::filesystem::path p(path);
  const auto dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (is_rank_file(it->path().filename().string(), p.filename().string()))
      out.push_back(it->path());
  return out;
}

}  // namespace

std::string journal::rank_path(const std::string& path, int rank) {
  return path + ".rank" + std::to_string(rank);
}

void journal::remove_ranks(const std::string& path) {
  std::error_code ec;
  for (const auto& f : rank_files(path)) std::filesystem::remove(f, ec);
}

journal::state journal::read_with_ranks(const std::string& path) {
  state s = read(path);
  for (const auto& f : rank_files(path))
    for (auto& [key, row] : read(f.string()).done) {
      s.in_flight.erase(key);
      s.done[key] = std::move(row);
    }
  return s;
}

journal::state journal::read(const std::string& path) {
  state s;
  const file_read text = read_regular_file(path, max_journal_bytes, symlinks::refuse);
  if (text.status == read_status::absent) return s;  // no run before this one
  if (!text.ok()) throw io_error("journal " + path + ": " + text.why + "; cannot be resumed");
  std::istringstream in(text.bytes);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string what, key, outcome, record;
    if (!std::getline(fields, what, '\t') || !std::getline(fields, key, '\t'))
      continue;  // torn line
    if (what == "start") {
      s.in_flight.insert(key);
    } else if (what == "done" && std::getline(fields, outcome, '\t')) {
      std::getline(fields, record);  // the rest of the line; absent in older journals
      s.in_flight.erase(key);
      s.done[key] = {outcome, record};
    }
  }
  return s;
}

}  // namespace kl
