// --pipeline: the end-to-end measurement of a family with a [pipeline] (qam256's), with one kernel
// file at one block size, in place of the sweep.
#pragma once

#include "cli/options.hpp"
#include "families/family.hpp"
#include "runner/runner.hpp"

namespace kl::app {

/// The file is compiled as a sweep compiles it (cache included); the pipeline runs where rows
/// run (the worker process, or in process), once per --size. Returns the exit code.
int pipeline_mode(const cli_options& opt, const family_registry& families, const run_request& req,
                  int argc, char** argv);

}  // namespace kl::app
