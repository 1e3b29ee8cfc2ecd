// The sweep: list, compile or measure what the options select, print the tables, write --json
// and --csv, then, with --watch, re-run what each save changes.
#pragma once

#include "cli/options.hpp"

namespace kl::app {

/// Returns the exit code (exit_code_for the rows); throws usage_error, no_device_error and
/// io_error for main to report.
int sweep_command(const cli_options& opt, int argc, char** argv);

}  // namespace kl::app
