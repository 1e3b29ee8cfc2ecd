// The run's journal. Before each row, kernlab appends "start <key>" (and waits for it to reach
// the disk); after it, "done <key> <outcome>". If the machine or the driver goes down mid-sweep,
// `--resume` reads the journal, skips the rows that finished, and marks the row that was running
// as suspect instead of running it again blindly.
#pragma once

#include <map>
#include <set>
#include <string>

namespace kl {

class journal {
 public:
  /// Opens `path` for appending (creating its folder); `fresh` empties it first.
  journal(const std::string& path, bool fresh);
  ~journal();
  journal(const journal&) = delete;
  journal& operator=(const journal&) = delete;

  void started(const std::string& key);
  void finished(const std::string& key, const std::string& outcome);
  const std::string& path() const { return path_; }

  struct state {
    std::map<std::string, std::string> done;  ///< key -> outcome
    std::set<std::string> in_flight;          ///< started, never finished
  };
  /// What a journal file says; an absent file says nothing.
  static state read(const std::string& path);

 private:
  void append(const std::string& line, bool sync);
  std::string path_;
  int fd_ = -1;
};

/// The default journal: $XDG_CACHE_HOME/kernlab/journal.log, or ~/.cache/kernlab/journal.log.
std::string default_journal_path();

}  // namespace kl
