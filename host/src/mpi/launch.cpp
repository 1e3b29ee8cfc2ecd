// How the launcher started this process: read from the environment, with no MPI call, so that
// a kernlab without the MPI transport, or srun's tasks with no MPI plugin, can refuse to run the
// command once per rank (world::join).
#include "mpi/world.hpp"

#include <cstdlib>
#include <string>

namespace kl::mpi {
namespace {

// The variable as a number, or `fallback` when unset or not a number.
int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return *end == '\0' && n >= 0 && n < (1 << 24) ? static_cast<int>(n) : fallback;
}

}  // namespace

launch_info detect_launch() {
  launch_info out;
  int local = -1;
  if (std::getenv("OMPI_COMM_WORLD_SIZE")) {  // OpenMPI's mpirun
    out.source = "OMPI_COMM_WORLD_SIZE";
    out.size = env_int("OMPI_COMM_WORLD_SIZE", 0);
    out.rank = env_int("OMPI_COMM_WORLD_RANK", 0);
    local = env_int("OMPI_COMM_WORLD_LOCAL_RANK", -1);
  } else if (std::getenv("PMIX_RANK")) {  // srun --mpi=pmix (the size comes from Slurm)
    out.source = "PMIX_RANK";
    out.rank = env_int("PMIX_RANK", 0);
    out.size = env_int("SLURM_STEP_NUM_TASKS", env_int("SLURM_NTASKS", -1));
  } else if (std::getenv("PMI_SIZE")) {  // srun --mpi=pmi2, MPICH's hydra
    out.source = "PMI_SIZE";
    out.size = env_int("PMI_SIZE", 0);
    out.rank = env_int("PMI_RANK", 0);
  } else if (std::getenv("SLURM_STEP_NUM_TASKS")) {
    // srun with no MPI plugin (--mpi=none, Slurm's own MpiDefault): the tasks of a step, which
    // have no PMI to join one job with; world::join refuses them. A batch script or salloc's
    // shell has no SLURM_STEP_NUM_TASKS: only srun's tasks do.
    out.source = "SLURM_STEP_NUM_TASKS";
    out.size = env_int("SLURM_STEP_NUM_TASKS", 0);
    out.rank = env_int("SLURM_PROCID", 0);
  }
  if (local < 0) local = env_int("SLURM_LOCALID", env_int("MPI_LOCALRANKID", -1));
  out.local_rank = local;
  return out;
}

}  // namespace kl::mpi
