// A child process that kernlab talks to in frames: the worker that runs kernels (started once,
// restarted only after it dies or hangs) and the probe that reads a plugin's table. A layer of its
// own, below every user of it. Frames travel on dedicated pipes (the child's fds 3 and 4), never on
// stdout, so that nothing a kernel, plugin or library prints can corrupt the protocol; the child's
// stdout goes to kernlab's stderr.
#pragma once

#include "core/child_process.hpp"
#include "process/protocol.hpp"

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace kl::worker {

/// The child's ends of the pipes.
constexpr int child_in_fd = 3;
constexpr int child_out_fd = 4;

class worker_process {
 public:
  /// Starts argv[0] (looked up on PATH) with argv; its stdout and stderr go to `log_path`, or to
  /// kernlab's stderr when that is "". Throws io_error naming the log when it cannot be opened
  /// as a log (core/file_write.hpp's open_appending: a link, someone else's file), and
  /// std::runtime_error if the child cannot be started. The child gets kernlab's lifeline
  /// (core/lifeline.hpp): kernlab's own binary ends with kernlab.
  explicit worker_process(const std::vector<std::string>& argv, const std::string& log_path = "");
  ~worker_process();
  worker_process(const worker_process&) = delete;
  worker_process& operator=(const worker_process&) = delete;

  void send(const message& m) { write_message(to_child_, m); }
  /// The next message, or nothing if `timeout_ms` passes first. Throws protocol_error when the
  /// child has gone (its pipe closed).
  std::optional<message> receive(int timeout_ms) { return read_message(from_child_, timeout_ms); }

  /// Kills the child (SIGKILL) if it still runs, reaps it, and says how it ended.
  std::string stop();
  /// Waits up to `grace_ms` for the child to exit (its pipe closed, or it was asked to), then
  /// kills it; says how it ended ("exited with code 3", "killed by signal 11 (Segmentation
  /// fault)").
  std::string wait_for_exit(int grace_ms = 2000);
  pid_t pid() const { return child_.pid(); }

 private:
  child_process child_;
  int to_child_ = -1, from_child_ = -1;
  std::string ended_;
};

using kl::describe_exit;

}  // namespace kl::worker
