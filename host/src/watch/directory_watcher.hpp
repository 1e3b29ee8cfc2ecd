// Waiting for saved files, with Linux inotify: the event source of --watch.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace kl {

/// inotify could not be set up (the message says for which folder and why).
class watch_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Watches folders and every folder below them (including those created later) for files that
/// are saved, created, renamed in or out, or removed. Each root's parent folder is watched too:
/// a root that is replaced (moved away and copied back, deleted and recreated, as editors and
/// `git checkout` do) is watched again once it reappears, and its files count as changed.
class directory_watcher {
 public:
  /// Throws watch_error when a root cannot be watched.
  explicit directory_watcher(const std::vector<std::string>& roots);
  ~directory_watcher();
  directory_watcher(const directory_watcher&) = delete;
  directory_watcher& operator=(const directory_watcher&) = delete;

  /// Waits up to `timeout` (negative: forever) for a change, then keeps collecting until `quiet`
  /// passes without one: an editor's save is several events (vim writes a new file and renames
  /// the old one away; others write a temporary file and rename it over the original), and one
  /// save must make one round. Returns the changed paths, sorted and unique; empty on timeout.
  /// Editors' scratch files (dot files, name~, *.swp, *.swx, vim's "4913") are not reported,
  /// nor files that appeared and went again while the save was collected (temporaries).
  std::vector<std::string> wait(std::chrono::milliseconds timeout,
                                std::chrono::milliseconds quiet = std::chrono::milliseconds(150));

  /// What happened to the roots themselves since the last call, one line each ("kernels folder
  /// X was replaced; watching it again"), for the session to print on stderr.
  std::vector<std::string> take_notices();

 private:
  /// What happened to one path while a save was collected.
  struct file_events {
    bool appeared = false;  ///< created or renamed in
    bool gone = false;      ///< its last event removed it or renamed it away
    bool kept = false;      ///< report it whatever happened (a new folder's files, lost events)
  };
  void add_tree(const std::string& dir);
  /// Stops watching `root` and every folder below it (it was moved away or deleted).
  void drop_tree(const std::string& root);
  /// An event in a root's parent folder about the entry `name`: the root going or coming back.
  void root_event(const std::string& parent, const std::string& name, std::uint32_t mask,
                  std::map<std::string, file_events>& changed);
  /// Reads the pending events into `changed`; false when there were none.
  bool drain(std::map<std::string, file_events>& changed);

  int fd_ = -1;
  std::vector<std::string> roots_;
  std::map<int, std::string> dirs_;     // watch descriptor -> folder
  std::map<int, std::string> parents_;  // watch descriptor -> a root's parent folder
  std::vector<std::string> notices_;
};

/// True for names editors use for swap, backup and probe files.
bool is_scratch_file(const std::string& name);

}  // namespace kl
