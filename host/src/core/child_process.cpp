#include "core/child_process.hpp"

#include "core/lifeline.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>

extern char** environ;

namespace kl {

child_process::child_process(const std::vector<std::string>& argv,
                             const std::vector<child_fd>& fds) {
  if (argv.empty()) throw std::runtime_error("cannot start a program: no command");
  // Once, before the first child: kernlab ignores SIGPIPE from then on.
  static const bool sigpipe_ignored = [] { return ::signal(SIGPIPE, SIG_IGN) != SIG_ERR; }();
  (void)sigpipe_ignored;

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (const auto& fd : fds) posix_spawn_file_actions_adddup2(&actions, fd.parent, fd.child);
  if (const int lifeline = lifeline_read_end(); lifeline >= 0)  // it ends when kernlab ends
    posix_spawn_file_actions_adddup2(&actions, lifeline, lifeline_fd);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  pid_ = pid;
}

child_process::child_process(child_process&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)), status_(o.status_) {}

child_process& child_process::operator=(child_process&& o) noexcept {
  if (this != &o) {
    kill_and_wait();
    pid_ = std::exchange(o.pid_, -1);
    status_ = o.status_;
  }
  return *this;
}

std::optional<int> child_process::poll() {
  if (pid_ <= 0) return status_;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    pid_ = -1;
    status_ = status;
    return status;
  }
  if (r < 0 && errno != EINTR)
    throw std::runtime_error(std::string("cannot wait for a child: ") + std::strerror(errno));
  return std::nullopt;
}

std::optional<int> child_process::wait_until(std::chrono::steady_clock::time_point deadline,
                                             const std::function<bool()>& stop,
                                             std::chrono::milliseconds step) {
  for (;;) {
    if (auto status = poll()) return status;
    if (std::chrono::steady_clock::now() >= deadline || (stop && stop())) return std::nullopt;
    std::this_thread::sleep_for(step);
  }
}

int child_process::kill_and_wait() {
  if (pid_ <= 0) return status_;  // never kill(-1): that would signal every process we may
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  status_ = status;
  return status;
}

std::string describe_exit(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "ended (wait status " + std::to_string(status) + ")";
}

}  // namespace kl
