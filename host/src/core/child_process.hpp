// The one way kernlab starts a program and ends it: the worker, the plugin probe, each file's
// compile child and the programs run to their end (ncu's import). posix_spawn with the descriptors
// it is given, kernlab's lifeline (core/lifeline.hpp), SIGPIPE back to its default in the child
// (kernlab itself ignores it: a child that dies must not kill kernlab on its next write), and a
// kill-and-reap when the object goes, so that no path out of its owner leaves a running child or a
// zombie behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kl {

/// A descriptor of kernlab's that the child gets as `child` (dup2 in the child; close-on-exec is
/// cleared on the copy). In order: a later entry may copy what an earlier one set ({1, 2}: the
/// child's stderr to where its stdout now goes).
struct child_fd {
  int parent;
  int child;
};

class child_process {
 public:
  child_process() = default;
  /// Starts argv[0] (looked up on PATH unless it holds a '/') with argv and `fds`. Throws
  /// std::runtime_error("cannot start ARGV0: why") when it cannot be started.
  child_process(const std::vector<std::string>& argv, const std::vector<child_fd>& fds);
  ~child_process() { kill_and_wait(); }
  child_process(child_process&& o) noexcept;
  child_process& operator=(child_process&& o) noexcept;
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  pid_t pid() const { return pid_; }
  /// Started and not yet reaped.
  bool running() const { return pid_ > 0; }
  /// The wait status once it exited (it is reaped then); nothing while it runs. Throws
  /// std::runtime_error when it cannot be waited for.
  std::optional<int> poll();
  /// poll() every `step` until it exited, `deadline` passed or `stop` says so.
  std::optional<int> wait_until(std::chrono::steady_clock::time_point deadline,
                                const std::function<bool()>& stop = {},
                                std::chrono::milliseconds step = std::chrono::milliseconds(1));
  /// SIGKILL if it still runs, then reaps it: its wait status (that of its own exit if it had
  /// already exited and was reaped).
  int kill_and_wait();

 private:
  pid_t pid_ = -1;
  int status_ = 0;
};

/// "exited with code 3" / "killed by signal 11 (Segmentation fault)" from a wait status.
std::string describe_exit(int status);

}  // namespace kl
