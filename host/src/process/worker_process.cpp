#include "process/worker_process.hpp"

#include "core/file_write.hpp"
#include "core/lifeline.hpp"
#include "core/unique_fd.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace kl::worker {

std::string describe_exit(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "ended (status " + std::to_string(status) + ")";
}

worker_process::worker_process(const std::vector<std::string>& argv, const std::string& log_path) {
  // The log is opened here, by the rules of every log (never through a link, never someone
  // else's file emptied): an io_error naming it rather than a child that cannot start.
  const unique_fd log =
      log_path.empty() ? unique_fd() : open_appending("log", log_path, existing::empty);
  int down[2], up[2];  // main -> child, child -> main
  if (pipe2(down, O_CLOEXEC) != 0 || pipe2(up, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot create the worker's pipes: ") +
                             std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // The log first: it may itself be fd 3 or 4, which the pipes' copies take next.
  posix_spawn_file_actions_adddup2(&actions, log ? log.get() : STDERR_FILENO, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  // dup2 clears O_CLOEXEC on the copies, so exactly fds 3 and 4 survive the exec.
  posix_spawn_file_actions_adddup2(&actions, down[0], child_in_fd);
  posix_spawn_file_actions_adddup2(&actions, up[1], child_out_fd);
  if (const int lifeline = lifeline_read_end(); lifeline >= 0)  // it ends when kernlab ends
    posix_spawn_file_actions_adddup2(&actions, lifeline, lifeline_fd);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int rc = posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(down[0]);
  ::close(up[1]);
  to_child_ = down[1];
  from_child_ = up[0];
  if (rc != 0) {
    ::close(to_child_);
    ::close(from_child_);
    throw std::runtime_error("cannot start the worker " + argv[0] + ": " + std::strerror(rc));
  }
  // A worker that dies must not kill kernlab with SIGPIPE on the next write.
  signal(SIGPIPE, SIG_IGN);
}

worker_process::~worker_process() {
  stop();
  if (to_child_ >= 0) ::close(to_child_);
  if (from_child_ >= 0) ::close(from_child_);
}

std::string worker_process::stop() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    ended_ = describe_exit(status);
    pid_ = -1;
  }
  return ended_;
}

std::string worker_process::wait_for_exit(int grace_ms) {
  if (pid_ > 0) {
    int status = 0;
    for (int i = 0; i < grace_ms / 10; ++i) {
      const pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        ended_ = describe_exit(status);
        pid_ = -1;
        return ended_;
      }
      usleep(10000);
    }
    return stop();
  }
  return ended_;
}

}  // namespace kl::worker
