// kernlab started by mpirun or srun, one rank per GPU (docs/many_gpus.md, "MPI"). Rank 0, the
// coordinator, runs the command as it runs without MPI; each other rank's GPU is one more lane of
// its device pool (runner/device_pool.hpp): a row_executor whose run() sends the row job to that
// rank and waits for its record. The other ranks serve: they start the executor of their own GPU
// (the worker process, as usual), announce it, then run each row they are sent until rank 0 says
// stop. Rows carry their compiled image, so only rank 0 compiles; only rank 0 prints and writes
// files (results, journal, tuning store).
//
// A rank whose GPU is lost says so and its lane retires (its row runs elsewhere). A rank that
// stops answering (no heartbeat for `silence_s`) is treated the same; OpenMPI 4 usually ends the
// whole job when a rank dies, in which case `--resume` (the journal, the tuning store) continues.
//
// The MPI calls themselves are in libkernlab_mpi.so (transport_mpi.cpp, built when CMake finds
// MPI: option KERNLAB_MPI), which join() loads only when mpirun or srun started kernlab with
// several ranks; the kernlab binary never links libmpi. Without that library, such a start is
// refused with the reason, and everything else works as before.
#pragma once

#include "runner/device_pool.hpp"
#include "worker/executor.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kl::mpi {

/// What the launcher's environment says: the world's size (0 when kernlab was not started by
/// mpirun or srun) and this process's rank and local rank, and which variables said so
/// ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"; "SLURM_STEP_NUM_TASKS" for srun with no MPI
/// plugin, whose tasks cannot join one job).
struct launch_info {
  int size = 0;
  int rank = 0;
  int local_rank = -1;  ///< -1: the environment does not say
  std::string source;
};
launch_info detect_launch();

/// Rank 0's lanes: how long a rank may take to announce its GPU, and how long it may stay silent
/// while it runs a row before it counts as lost (it sends a heartbeat every second).
struct remote_options {
  double start_timeout_s = 300;
  double silence_s = 60;
};

class world {
 public:
  /// Joins the job (MPI_Init_thread) when started by mpirun or srun with two or more ranks;
  /// nullptr otherwise (one rank is a run like any other). The MPI library is the first of
  /// `transports` (paths of libkernlab_mpi.so) that exists; when none does, or it cannot be
  /// loaded, or srun started the ranks with no MPI plugin (--mpi=none), throws
  /// std::runtime_error saying why. At most one world per process.
  static std::unique_ptr<world> join(int& argc, char**& argv,
                                     const std::vector<std::string>& transports);
  /// The joined world, or nullptr.
  static world* current();
  /// Rank 0 first tells every rank still serving to stop; then MPI_Finalize, or, when a rank was
  /// lost (it may never reach MPI_Finalize), MPI_Abort with the exit code set_exit_code() gave.
  ~world();
  /// Rank 0: the command's exit code, for the launcher to return should the job end with
  /// MPI_Abort (a lost rank); mpirun and srun return it.
  void set_exit_code(int code);
  world(const world&) = delete;
  world& operator=(const world&) = delete;

  int rank() const;
  int size() const;
  /// This rank among the ranks of its host (MPI_Comm_split_type shared), and how many there are.
  int local_rank() const;
  int local_size() const;
  /// The GPU this rank's rows run on: its local rank modulo the GPUs it sees (`visible`; under
  /// Slurm with one GPU per task that is 0).
  int local_device(int visible) const;
  /// The host's name (MPI_Get_processor_name).
  const std::string& host() const;

  /// Rank 0: one lane per other rank, in rank order; each waits for its rank's announcement when
  /// the pool starts it. Throws std::logic_error on another rank.
  std::vector<device_pool::lane_factory> remote_lanes(const remote_options& opt = {});

  /// Where a serving rank journals the rows it runs: the run's journal (its rank_path() for this
  /// rank is written), appended to with --resume and emptied otherwise.
  struct rank_journal {
    std::string path;  ///< the run's journal; "" for none
    bool resume = false;
  };
  /// A rank other than 0: makes its executor with `make` (or, when that throws, announces why),
  /// runs the rows rank 0 sends until it says stop, then returns the exit code (0 when stopped
  /// as asked). Prints nothing. Each row that carries a journal key is journalled in this rank's
  /// file of `journal` (read once make() has returned: make may fill it in), opened at the first
  /// such row, so that `--resume` finds the rows this rank finished should rank 0 be lost.
  int serve(const std::function<std::unique_ptr<row_executor>()>& make,
            const rank_journal* journal = nullptr);

  /// Rank 0: every rank still serving stops (the destructor does it too). Waits a few seconds at
  /// most for each.
  void stop_all();

  struct impl;

 private:
  explicit world(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace kl::mpi
