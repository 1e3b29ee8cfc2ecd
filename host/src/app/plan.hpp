// From the options to a sweep: the variants they reach (the registry) and the request the runner
// carries out, checked against the families; and the reproducibility block of --json.
#pragma once

#include "cli/options.hpp"
#include "families/family.hpp"
#include "mpi/world.hpp"
#include "nvrtc/compile_cache.hpp"
#include "registry/registry.hpp"
#include "report/results_json.hpp"
#include "runner/runner.hpp"

#include <memory>

namespace kl::app {

/// Every variant the options can reach: the kernel folders' files, then the plugins (probed in a
/// child process, never loaded here).
std::unique_ptr<registry> load_registry(const cli_options& opt, const family_registry& families);

/// `kernlab --worker` with the options' kernel and include folders: the command of each GPU's
/// worker process.
std::vector<std::string> worker_command(const cli_options& opt);

/// Under mpirun or srun: the GPU this rank runs on (mpi::world::local_device over the GPUs it
/// sees; 0 without a driver). Throws usage_error for the options that pick GPUs or need one
/// (--device, --devices, --sanitize, --profile, --pipeline).
int mpi_device(const cli_options& opt, const mpi::world& world);

/// The sweep the options describe, over `reg`'s variants. Throws usage_error for a selection, a
/// block, a dtype, an op or a size that does not fit the variants.
run_request make_request(const cli_options& opt, const registry& reg,
                         const family_registry& families,
                         std::shared_ptr<const nvrtc::compile_cache> cache);

/// The reproducibility block of --json: the command, the versions, the seed and the timing.
run_context context_of(const cli_options& opt, const run_request& req, int argc, char** argv);

}  // namespace kl::app
