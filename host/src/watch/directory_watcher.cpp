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

// A root as a clean absolute path: "kernels_src/" and "./kernels_src" are the same folder, whose
// parent and name are what the parent's events carry.
fs::path normal_root(const std::string& root) {
  fs::path p = fs::absolute(root).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  return p;
}

bool is_under(std::string path, std::string root) {
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                          path[root.size()] == '/');
}

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
    // The parents, for the roots' own fate. A parent that cannot be watched (no permission)
    // only costs that: the root is still watched while it stays in place.
    for (const auto& r : roots) {
      const std::string parent = normal_root(r).parent_path().string();
      const int wd = ::inotify_add_watch(
          fd_, parent.c_str(),
          IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_ONLYDIR | IN_MASK_ADD);
      if (wd >= 0) parents_[wd] = parent;
    }
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

directory_watcher::~directory_watcher() { ::close(fd_); }

std::vector<std::string> directory_watcher::take_notices() {
  std::vector<std::string> out;
  out.swap(notices_);
  return out;
}

void directory_watcher::drop_tree(const std::string& root) {
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    if (is_under(it->second, root)) {
      // A moved folder keeps its watch, now reporting from its new place under the old name:
      // remove it (unless it is also a root's parent, which stays).
      if (!parents_.count(it->first)) ::inotify_rm_watch(fd_, it->first);
      it = dirs_.erase(it);
    } else {
      ++it;
    }
  }
}

void directory_watcher::root_event(const std::string& parent, const std::string& name,
                                   std::uint32_t mask,
                                   std::map<std::string, file_events>& changed) {
  for (const auto& root : roots_) {
    const fs::path p = normal_root(root);
    if (p.parent_path().string() != parent || p.filename().string() != name) continue;
    if (mask & (IN_MOVED_FROM | IN_DELETE)) {
      drop_tree(root);
      notices_.push_back("kernels folder " + root +
                         " was moved away or deleted; watching for it to come back");
    } else if (mask & (IN_CREATE | IN_MOVED_TO)) {
      drop_tree(root);  // a folder renamed over the old one: the old watches are stale
      try {
        add_tree(root);
      } catch (const watch_error& e) {
        notices_.push_back(std::string(e.what()) + " (the folder came back but cannot be watched)");
        continue;
      }
      notices_.push_back("kernels folder " + root + " was replaced; watching it again");
      // Whatever is in it now may differ from what was there: every file counts as changed.
      std::error_code ec;
      changed[root].kept = true;
      for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
           it.increment(ec))
        if (it->is_regular_file(ec)) changed[it->path().string()].kept = true;
    }
  }
}

void directory_watcher::add_tree(const std::string& dir) {
  const int wd = ::inotify_add_watch(fd_, dir.c_str(), kMask | IN_MASK_ADD);
  if (wd < 0) {
    if (errno == ENOSPC)
      throw watch_error("cannot watch " + dir +
                        ": the inotify watch limit is reached "
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
        parents_.erase(ev->wd);
        continue;
      }
      if ((ev->mask & IN_ISDIR) && ev->len > 0) {
        if (const auto parent = parents_.find(ev->wd); parent != parents_.end()) {
          const std::size_t before = notices_.size();
          root_event(parent->second, ev->name, ev->mask, changed);
          if (notices_.size() != before) any = true;
        }
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
        for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::end(it);
             it.increment(ec))
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
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
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
