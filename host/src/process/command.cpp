#include "process/command.hpp"

#include "core/file_write.hpp"
#include "core/lifeline.hpp"
#include "core/unique_fd.hpp"
#include "process/worker_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace kl::worker {

std::vector<std::string> path_folders(const char* path) {
  std::vector<std::string> out;
  if (!path) return out;
  std::string folder;
  for (const char* p = path;; ++p) {
    if (*p == ':' || *p == '\0') {
      if (!folder.empty()) out.push_back(folder);
      folder.clear();
      if (*p == '\0') break;
    } else {
      folder += *p;
    }
  }
  return out;
}

std::string find_program(const std::string& name, const std::vector<std::string>& folders) {
  for (const auto& folder : folders) {
    if (folder.empty()) continue;
    const std::string path = folder + (folder.back() == '/' ? "" : "/") + name;
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0)
      return path;
  }
  return "";
}

command_end run_to_file(const std::vector<std::string>& argv, const std::string& output_path,
                        double timeout_s) {
  // Opened here, by the rules of every log (never through a link, never someone else's file
  // emptied), as the worker's log is.
  const unique_fd output = open_appending("output", output_path, existing::empty);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, output.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  if (const int lifeline = lifeline_read_end(); lifeline >= 0)
    posix_spawn_file_actions_adddup2(&actions, lifeline, lifeline_fd);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return {WIFEXITED(status) && WEXITSTATUS(status) == 0, describe_exit(status)};
    if (r < 0 && errno != EINTR) return {false, std::string("lost: ") + std::strerror(errno)};
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%g", timeout_s);
      return {false, std::string("did not finish in ") + seconds + " s and was killed"};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace kl::worker
