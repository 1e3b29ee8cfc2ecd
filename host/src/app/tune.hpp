// `kernlab tune`: a kernel file's tuning space searched by a strategy, point by point on the GPU,
// each result kept in the tuning store; the evaluated points' table, the best configuration per
// problem, the baseline beside it, and the exports.
#pragma once

#include "cli/options.hpp"
#include "families/family.hpp"
#include "registry/registry.hpp"
#include "runner/runner.hpp"

#include <vector>

namespace kl::app {

/// Returns the exit code: 0 when every tune found a configuration that passed and no point gave
/// a wrong result or crashed (points that do not compile or cannot run on this device are part of
/// a search, not failures), 1 otherwise. Throws usage_error, no_device_error and io_error.
int tune_command(const cli_options& opt, int argc, char** argv);

/// `tune --compile-only` and `tune --resources` (tune_compile.cpp): every point of the `sources`'
/// spaces in `req` compiled, none run; the compile table or the resources, and --json/--csv.
/// Returns 1 when a point does not compile; usage_error for an output that needs measurements.
int compile_tune_points(const cli_options& opt, const family_registry& families, run_request req,
                        std::vector<const registry_entry*> sources, int argc, char** argv);

}  // namespace kl::app
