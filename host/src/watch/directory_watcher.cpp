#include "watch/directory_watcher.hpp"

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace fs = std::filesystem;

namespace kl {
namespace {

// Saves (close after writing), files and folders appearing or going by rename or otherwise.
// IN_MODIFY is left out on purpose: it fires for every write() of a save in progress.
constexpr std::uint32_t kMask =
    IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_ONLYDIR;

std::string errno_text() { return std::strerror(errno); }

}  // namespace

bool is_scratch_file(const std::string& name) {
  auto ends_with = [&](const char* s) {
    const std::size_t n = std::strlen(s);
    return name.size() >= n && name.compare(name.size() - n, n, s) == 0;
  };
  return name.empty() || name[0] == '.' || name.back() == '~' || ends_with(".swp") ||
         ends_with(".swx") || name == "4913";
}

directory_watcher::directory_watcher(const std::vector<std::string>& roots) : roots_(roots) {
  fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) throw watch_error("inotify_init1: " + errno_text());
  try {
    for (const auto& r : roots) add_tree(r);
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

directory_watcher::~directory_watcher() { ::close(fd_); }

void directory_watcher::add_tree(const std::string& dir) {
  const int wd = ::inotify_add_watch(fd_, dir.c_str(), kMask);
  if (wd < 0) {
    if (errno == ENOSPC)
      throw watch_error("cannot watch " + dir + ": the inotify watch limit is reached "
                        "(raise fs.inotify.max_user_watches)");
    throw watch_error("cannot watch " + dir + ": " + errno_text());
  }
  dirs_[wd] = dir;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::end(it); it.increment(ec))
    if (it->is_directory(ec) && !it->is_symlink(ec)) add_tree(it->path().string());
}

bool directory_watcher::drain(std::map<std::string, file_events>& changed) {
  // Aligned for inotify_event; room for many events at once.
  alignas(inotify_event) char buf[64 * 1024];
  bool any = false;
  for (;;) {
    const ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return any;
      throw watch_error("reading inotify events: " + errno_text());
    }
    if (n == 0) return any;
    for (ssize_t at = 0; at < n;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(buf + at);
      at += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
      if (ev->mask & IN_Q_OVERFLOW) {
        // Events were lost: say every root changed, so the next round looks at everything.
        for (const auto& r : roots_) changed[r].kept = true;
        any = true;
        continue;
      }
      if (ev->mask & IN_IGNORED) {  // the folder went away
        dirs_.erase(ev->wd);
        continue;
      }
      const auto dir = dirs_.find(ev->wd);
      if (dir == dirs_.end() || ev->len == 0) continue;
      const std::string name = ev->name;
      if (is_scratch_file(name)) continue;
      const std::string path = (fs::path(dir->second) / name).string();
      if ((ev->mask & IN_ISDIR) && (ev->mask & (IN_CREATE | IN_MOVED_TO))) {
        // A new folder (a family, an include subfolder): watch it, and count what is already in it.
        std::error_code ec;
        try {
          add_tree(path);
        } catch (const watch_error&) {
          // gone again already, or the watch limit: its files are still seen by a rescan
        }
        for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::end(it); it.increment(ec))
          if (it->is_regular_file(ec)) changed[it->path().string()].kept = true;
      }
      file_events& f = changed[path];
      if (ev->mask & (IN_CREATE | IN_MOVED_TO)) f.appeared = true;
      f.gone = (ev->mask & (IN_DELETE | IN_MOVED_FROM)) != 0;
      any = true;
    }
  }
}

std::vector<std::string> directory_watcher::wait(std::chrono::milliseconds timeout,
                                                 std::chrono::milliseconds quiet) {
  using clock = std::chrono::steady_clock;
  std::map<std::string, file_events> changed;
  pollfd p{fd_, POLLIN, 0};
  const bool forever = timeout.count() < 0;
  const auto deadline = clock::now() + (forever ? std::chrono::milliseconds(0) : timeout);
  // Wait for the first change (events on scratch files alone do not count); then until nothing
  // more happens for `quiet`.
  for (;;) {
    int wait_ms = static_cast<int>(quiet.count());
    if (changed.empty()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
      wait_ms = forever ? -1 : static_cast<int>(std::max<long long>(0, left.count()));
    }
    const int rc = ::poll(&p, 1, wait_ms);
    if (rc < 0) {
      if (errno == EINTR) continue;
      throw watch_error("poll on inotify: " + errno_text());
    }
    if (rc == 0) break;  // the timeout (nothing yet), or `quiet` (the save is complete)
    drain(changed);
  }
  std::vector<std::string> out;
  for (const auto& [path, f] : changed)
    // A file that appeared and went again within one save is an editor's temporary (sed -i
    // writes one and renames it over the original); one that was there before and went is news.
    if (f.kept || !(f.appeared && f.gone)) out.push_back(path);
  return out;  // sorted: a map's order
}

}  // namespace kl
