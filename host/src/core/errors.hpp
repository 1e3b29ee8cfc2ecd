#pragma once
// Errors that every layer may throw and that `main` maps to an exit code of their own. The lowest
// layer: it includes nothing of kernlab.
#include <stdexcept>
#include <string>

namespace kl {

// A file kernlab must read or write could not be (missing, unreadable, a folder, a full disk, a
// malformed results file), or a tool it starts failed. The message names the file or the tool.
// Exit code 4: distinct from 1 (a variant failed) and 2 (a usage error).
class io_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The exit codes of the kernlab command, in one place.
namespace exit_code {
inline constexpr int ok = 0;          // every row passed (skips allowed)
inline constexpr int row_failed = 1;  // a variant failed, crashed, timed out or was wrong
inline constexpr int usage = 2;       // a bad option, value or selection
inline constexpr int no_device = 3;   // a run that needs a GPU found no driver or device
inline constexpr int io = 4;          // a file or a tool failed (io_error)
}  // namespace exit_code

}  // namespace kl
