// Waiting for saved files, with Linux inotify: the event source of --watch.
#pragma once

#include <chrono>
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
/// are saved, created, renamed in or out, or removed.
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

 private:
  /// What happened to one path while a save was collected.
  struct file_events {
    bool appeared = false;  ///< created or renamed in
    bool gone = false;      ///< its last event removed it or renamed it away
    bool kept = false;      ///< report it whatever happened (a new folder's files, lost events)
  };
  void add_tree(const std::string& dir);
  /// Reads the pending events into `changed`; false when there were none.
  bool drain(std::map<std::string, file_events>& changed);

  int fd_ = -1;
  std::vector<std::string> roots_;
  std::map<int, std::string> dirs_;  // watch descriptor -> folder
};

/// True for names editors use for swap, backup and probe files.
bool is_scratch_file(const std::string& name);

}  // namespace kl
