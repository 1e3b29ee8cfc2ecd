#include "runner/journal.hpp"

#include "core/errors.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace kl {

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
  // O_NOFOLLOW: a link planted where the journal goes does not redirect its writes. The file is
  // emptied only once it is known to be ours (never O_TRUNC on open).
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd_ < 0) throw io_error("journal " + path + ": " + std::strerror(errno));
  struct stat st {};
  std::string wrong;
  if (::fstat(fd_, &st) != 0)
    wrong = std::strerror(errno);
  else if (S_ISREG(st.st_mode) && st.st_uid != ::geteuid())
    wrong = "belongs to another user; not written";
  else if (fresh && S_ISREG(st.st_mode) && ::ftruncate(fd_, 0) != 0)
    wrong = std::strerror(errno);
  if (!wrong.empty()) {
    ::close(fd_);
    fd_ = -1;
    throw io_error("journal " + path + ": " + wrong);
  }
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
  std::ifstream in(path);
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
