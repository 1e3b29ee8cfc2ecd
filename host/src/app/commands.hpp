// The commands that are not a sweep: `kernlab compare` and `kernlab plot` over results files,
// `kernlab cache info|clear|prune`, and `kernlab --worker`, the child that runs rows.
#pragma once

#include "cli/options.hpp"

namespace kl::app {

/// `kernlab compare OLD NEW` and `kernlab plot RESULTS`: they read results files and need no GPU
/// or kernels. Returns the exit code (compare: 1 when a row regressed).
int results_command(const cli_options& opt);

/// `kernlab cache info`, `kernlab cache clear` and `kernlab cache prune`.
int cache_command(const cli_options& opt);

/// `kernlab --worker [--kernels-dir DIR]... [--include DIR]...`: builds the same families as the
/// kernlab that started it, then runs its rows.
int worker_entry(int argc, char** argv);

}  // namespace kl::app
