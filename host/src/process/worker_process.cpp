#include "process/worker_process.hpp"

#include "core/file_write.hpp"
#include "core/unique_fd.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace kl::worker {

worker_process::worker_process(const std::vector<std::string>& argv, const std::string& log_path) {
  // The log is opened here, by the rules of every log (never through a link, never someone
  // else's file emptied): an io_error naming it rather than a child that cannot start.
  const unique_fd log =
      log_path.empty() ? unique_fd() : open_appending("log", log_path, existing::empty);
  int down[2], up[2];  // main -> child, child -> main
  if (pipe2(down, O_CLOEXEC) != 0 || pipe2(up, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot create the worker's pipes: ") +
                             std::strerror(errno));
  unique_fd to_read(down[0]), to_write(down[1]), from_read(up[0]), from_write(up[1]);
  // The log first: it may itself be fd 3 or 4, which the pipes' copies take next. dup2 clears
  // O_CLOEXEC on the copies, so exactly fds 3 and 4 survive the exec.
  try {
    child_ = child_process(argv, {{log ? log.get() : STDERR_FILENO, STDOUT_FILENO},
                                  {STDOUT_FILENO, STDERR_FILENO},
                                  {to_read.get(), child_in_fd},
                                  {from_write.get(), child_out_fd}});
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("the worker: ") + e.what());
  }
  to_child_ = to_write.release();
  from_child_ = from_read.release();
}

worker_process::~worker_process() {
  stop();
  if (to_child_ >= 0) ::close(to_child_);
  if (from_child_ >= 0) ::close(from_child_);
}

std::string worker_process::stop() {
  if (child_.running()) ended_ = describe_exit(child_.kill_and_wait());
  return ended_;
}

std::string worker_process::wait_for_exit(int grace_ms) {
  if (!child_.running()) return ended_;
  const auto status =
      child_.wait_until(std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms), {},
                        std::chrono::milliseconds(10));
  if (!status) return stop();
  ended_ = describe_exit(*status);
  return ended_;
}

}  // namespace kl::worker
