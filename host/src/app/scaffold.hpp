// `kernlab new family NAME` and `kernlab new variant FAMILY NAME`: files a user starts from, that
// compile, validate and are timed on their first run unchanged, so that the first thing a user
// changes is the idea itself.
#pragma once

#include "cli/options.hpp"

#include <string>
#include <utility>
#include <vector>

namespace kl::app {

/// Writes the skeleton the command words ask for into the first --kernels-dir of the command line
/// (`my_kernels` in the current folder when none is given), never over an existing file, and
/// prints what it wrote and the commands that run it, calling kernlab as `argv0` did. Throws
/// usage_error for a name that is not an identifier, one that exists, or an unknown family;
/// io_error when a file cannot be written.
int new_command(const cli_options& opt, const std::string& argv0);

/// The three files of a new family NAME (family.toml, reference.cu, simple.cu) by file name: one
/// axis N, y[i] = x[i] * x[i] + 1 in float32 and float64, a grid-stride variant and a copy
/// baseline. `run_line` is the command that runs it, quoted in family.toml's first comment.
std::vector<std::pair<std::string, std::string>> family_skeleton(const std::string& name,
                                                                 const std::string& run_line);

/// A variant NAME made from the kernel file `source` (its text) of variant `from`: the same
/// kernel with a comment that says where it came from, its header's `summary:` saying so too, and
/// its `order:` and `points:` lines left out (the copy comes after the family's sequence, and
/// named points would clash with the original's).
std::string variant_from(const std::string& source, const std::string& from,
                         const std::string& family, const std::string& name);

}  // namespace kl::app
