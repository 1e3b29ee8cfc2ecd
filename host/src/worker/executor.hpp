// Where rows run. In kernlab itself (--in-process: fastest, but a faulting kernel poisons the
// context for every later row), or in a worker process that is restarted when a kernel crashes
// it or hangs it past the watchdog: then only that row is lost.
#pragma once

#include "cuda/device.hpp"
#include "exec/row.hpp"
#include "families/family.hpp"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace kl {

/// Thrown by row_executor::run() when its GPU can take no more rows: the worker could not be
/// started again after a crash or a hang (the device fell off the bus, the driver lost it). The
/// row did not run, so another GPU may take it. A crash or a hang of the row itself is the
/// record's outcome, never this.
class device_lost_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class row_executor {
 public:
  virtual ~row_executor() = default;
  virtual const cuda::device_info& device() = 0;
  virtual std::string clock_status() = 0;
  /// Why --energy measures nothing where rows run ("" when it can).
  virtual std::string energy_status() = 0;
  virtual timing_stats launch_floor(const timing_options& opt) = 0;
  /// The row's record; a crash or a hang is the record's outcome, never an exception. Throws
  /// device_lost_error when the GPU can run nothing more.
  virtual result_record run(const row_job& job) = 0;
  /// How many workers were started (1 if nothing went wrong; 0 in process).
  virtual int workers_started() const { return 0; }
  /// Asks the worker to exit and returns at once; the destructor waits for it. A pool asks each
  /// of its workers before it destroys any, so that they tear their contexts down side by side
  /// rather than one after another. Nothing to do for rows run in process.
  virtual void request_exit() {}
  /// Makes the row's problem (inputs, reference) where the row will run, before it runs: a spread
  /// executor has every worker make it at once (worker/spread_executor.hpp). Any failure is left
  /// for the row to report. Nothing to do in process, where the row makes it.
  virtual void prepare(const row_job&) {}
  /// Why a row's placements run in fewer worker processes than asked for (--placement-workers):
  /// "" when they run in as many (worker/spread_executor.hpp).
  virtual std::string spread_status() { return ""; }
  /// A family's own measurement (exec/family_jobs.hpp, a family's "pipeline"), run where rows
  /// run. Throws std::runtime_error when it fails, crashes the worker or hangs it.
  virtual nlohmann::json run_family_job(const std::string& family, const std::string& name,
                                        const nlohmann::json& args) = 0;
};

/// A GPU's description as a worker's ready message carries it (and an MPI rank's, mpi/), and back.
nlohmann::json device_to_json(const cuda::device_info& d);
cuda::device_info device_from_json(const nlohmann::json& j);

/// Rows on GPU `ordinal`, in this process (its context is current on the calling thread only).
std::unique_ptr<row_executor> make_in_process_executor(const family_registry& families,
                                                       int ordinal = 0);

/// How long past --kernel-timeout a launch may still report a fault before its row is a hang:
/// as long again as the time-out, at least 10 s and at most 30 s. An H200's driver has taken
/// more than 8 s to report a far out-of-bounds write (Xid 13 or 31) that it most often reports
/// at once.
double fault_grace_for(double kernel_timeout_s);

struct worker_options {
  std::vector<std::string> command;  ///< e.g. {"/path/kernlab", "--worker"}
  double kernel_timeout_s = 10;      ///< a launch that runs longer is a hang...
  /// ...unless the worker reports a fault (a sticky CUDA error) within this many seconds more:
  /// a far out-of-bounds write can take the driver longer than the watchdog to report, and its
  /// row is CRASHED with the CUDA error, not TIMEOUT. A launch that finishes then is TIMEOUT.
  double fault_grace_s = 10;
  std::string log_path;  ///< the worker's stdout and stderr go here ("" = kernlab's stderr)
  /// How long a worker asked to shut down may take to exit (a sanitizer writes its report then).
  double shutdown_grace_s = 2;
};

std::unique_ptr<row_executor> make_isolated_executor(const worker_options& opt);

/// The worker's side: `kernlab --worker [--device N]` runs this on GPU `ordinal` and returns
/// its exit code.
int worker_main(const family_registry& families, int ordinal = 0);

}  // namespace kl
