// Other programs kernlab runs to their end (Nsight Compute's import of a report), and where to
// find a tool that comes with the CUDA toolkit.
#pragma once

#include <string>
#include <vector>

namespace kl::worker {

/// The folders of a PATH-like list ("a:b:c"); empty entries are left out. Null gives none.
std::vector<std::string> path_folders(const char* path);

/// The first of `folders` that holds an executable regular file called `name`; "" for none.
std::string find_program(const std::string& name, const std::vector<std::string>& folders);

/// How a program run to its end ended.
struct command_end {
  bool ok = false;  ///< exited with code 0
  std::string how;  ///< "exited with code 1", "killed by signal 9 (Killed)", "timed out after 60 s"
};

/// Runs argv (argv[0] looked up on PATH) with its stdout and stderr written to `output_path`
/// (opened as a log: core/file_write.hpp's open_appending), and waits for it, at most `timeout_s`
/// seconds: then it is killed. Throws io_error naming the output when it cannot be opened, and
/// std::runtime_error when the program cannot be started. It gets kernlab's lifeline like every
/// child (core/lifeline.hpp), which a program other than kernlab does not watch: it ends by
/// itself or at `timeout_s`.
command_end run_to_file(const std::vector<std::string>& argv, const std::string& output_path,
                        double timeout_s);

}  // namespace kl::worker
