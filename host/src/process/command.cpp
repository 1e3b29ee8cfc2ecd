#include "process/command.hpp"

#include "core/child_process.hpp"
#include "core/file_write.hpp"
#include "core/unique_fd.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>

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
  child_process child(argv, {{output.get(), STDOUT_FILENO}, {STDOUT_FILENO, STDERR_FILENO}});
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeout_s));
  try {
    if (const auto status = child.wait_until(deadline, {}, std::chrono::milliseconds(10)))
      return {WIFEXITED(*status) && WEXITSTATUS(*status) == 0, describe_exit(*status)};
  } catch (const std::runtime_error& e) {
    return {false, std::string("lost: ") + e.what()};
  }
  child.kill_and_wait();
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", timeout_s);
  return {false, std::string("did not finish in ") + seconds + " s and was killed"};
}

}  // namespace kl::worker
