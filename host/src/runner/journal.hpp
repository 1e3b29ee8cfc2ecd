// The run's journal. Before each row, kernlab appends "start <key>" (and waits for it to reach
// the disk); after it, "done <key> <outcome> <record>", the record being the row's results-file
// record on one line. If the machine or the driver goes down mid-sweep (or Ctrl-C stops it),
// `--resume` reads the journal, reports the rows that finished with the numbers they had,
// and marks the row that was running as suspect instead of running it again blindly. The key is the
// row's configuration_key() with the seed and the hash of the variant's source (or plugin file), so
// a kernel edited since is run again.
//
// Under MPI the rows rank 0 sends to another rank are journalled there too, in the file of that
// rank (`<journal>.rank<N>`, rank_path()): when rank 0 is lost mid-run, the rows the others
// finished but could not report are found there by `--resume` (read_with_ranks()), instead of
// being marked suspect. A fresh run removes the rank files of the one before (remove_ranks()).
//
// The journal is a help, never a reason to lose a run: a failed append (a full disk) closes it
// and leaves a warning (failure()); the sweep goes on without it.
#pragma once

#include <map>
#include <set>
#include <string>

namespace kl {

class journal {
 public:
  /// Opens `path` for appending (creating its folder); `fresh` empties it first. A symbolic link
  /// is not followed, a FIFO that no process reads is not waited for, and a file that belongs to
  /// another user is never emptied or written: throws io_error naming the file.
  journal(const std::string& path, bool fresh);
  ~journal();
  journal(const journal&) = delete;
  journal& operator=(const journal&) = delete;

  void started(const std::string& key);
  /// `record`: the row's record as one line of JSON ("" for none: journals written before
  /// records were kept have none).
  void finished(const std::string& key, const std::string& outcome, const std::string& record);
  const std::string& path() const { return path_; }
  /// "" while every append worked; after the first that failed, what happened and what it means
  /// (later appends do nothing).
  const std::string& failure() const { return failure_; }

  struct finished_row {
    std::string outcome;
    std::string record;  ///< one line of JSON, or "" when the journal has none for the row
  };
  struct state {
    std::map<std::string, finished_row> done;  ///< key -> how it finished
    std::set<std::string> in_flight;           ///< started, never finished
  };
  /// What a journal file says; an absent file says nothing. One that is not a regular file (a
  /// link, a FIFO) or is over 1 GiB cannot be resumed from: throws io_error naming it.
  static state read(const std::string& path);
  /// What `path` says, with the rows that the ranks' files beside it (rank_path(path, N)) say
  /// finished: a row rank 0 saw start on another rank and never saw finish is done when that
  /// rank's file says so.
  static state read_with_ranks(const std::string& path);
  /// The journal of rank `rank` (an MPI rank other than 0) of a run whose journal is `path`.
  static std::string rank_path(const std::string& path, int rank);
  /// Removes the ranks' files beside `path` (a fresh run: they belong to the run before).
  static void remove_ranks(const std::string& path);

 private:
  void append(const std::string& line, bool sync);
  std::string path_;
  int fd_ = -1;
  std::string failure_;
};

/// The default journal: $XDG_CACHE_HOME/kernlab/journal.log, or ~/.cache/kernlab/journal.log;
/// "" when neither XDG_CACHE_HOME nor HOME is set (then there is no journal unless --journal).
std::string default_journal_path();

}  // namespace kl
