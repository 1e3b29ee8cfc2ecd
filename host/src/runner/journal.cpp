#include "runner/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kl {

std::string default_journal_path() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/kernlab/journal.log";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.cache/kernlab/journal.log";
}

journal::journal(const std::string& path, bool fresh) : path_(path) {
  std::error_code ec;
  const auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (fresh ? O_TRUNC : 0), 0644);
  if (fd_ < 0) throw std::runtime_error("journal " + path + ": " + std::strerror(errno));
}

journal::~journal() {
  if (fd_ >= 0) ::close(fd_);
}

void journal::append(const std::string& line, bool sync) {
  const std::string text = line + "\n";
  // One write per line with O_APPEND: a line is never interleaved or half-written by us.
  if (::write(fd_, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    throw std::runtime_error("journal " + path_ + ": " + std::strerror(errno));
  // The "start" line must be on disk before the kernel runs: that is the point of the journal.
  if (sync) ::fdatasync(fd_);
}

void journal::started(const std::string& key) { append("start\t" + key, true); }

void journal::finished(const std::string& key, const std::string& outcome) {
  append("done\t" + key + "\t" + outcome, false);
}

journal::state journal::read(const std::string& path) {
  state s;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string what, key, outcome;
    if (!std::getline(fields, what, '\t') || !std::getline(fields, key, '\t')) continue;  // torn line
    if (what == "start") {
      s.in_flight.insert(key);
    } else if (what == "done" && std::getline(fields, outcome, '\t')) {
      s.in_flight.erase(key);
      s.done[key] = outcome;
    }
  }
  return s;
}

}  // namespace kl
