// The commands that are not a sweep: `kernlab compare` and `kernlab plot` over results files,
// `kernlab cache info|clear|prune`, and `kernlab --worker`, the child that runs rows.
#pragma once

#include "cli/options.hpp"
#include "mpi/world.hpp"

#include <string>
#include <vector>

namespace kl::app {

/// `kernlab compare OLD NEW` and `kernlab plot RESULTS`: they read results files and need no GPU
/// or kernels. Returns the exit code (compare: 1 when a row regressed).
int results_command(const cli_options& opt);

/// `kernlab cache info`, `kernlab cache clear` and `kernlab cache prune`.
int cache_command(const cli_options& opt);

/// `kernlab --worker [--kernels-dir DIR]... [--include DIR]...`: builds the same families as the
/// kernlab that started it, then runs its rows.
int worker_entry(int argc, char** argv);

/// Where libkernlab_mpi.so, the MPI transport, may be: $KERNLAB_MPI_TRANSPORT, beside the kernlab
/// binary (the build tree), its ../lib/kernlab/ (installed).
std::vector<std::string> mpi_transports();

/// A rank other than 0 under mpirun or srun: parses the same command line, starts the worker of
/// its GPU (its local rank's) and runs the rows rank 0 sends until told to stop. Prints nothing;
/// what goes wrong (a usage error, no GPU) is told to rank 0, which reports it.
int serve_rank(int argc, char** argv, mpi::world& world);

}  // namespace kl::app
