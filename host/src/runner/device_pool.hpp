// Rows spread over the GPUs of one host (--devices): one executor per GPU (a worker process with
// a context of its own), each driven by a thread of its own that takes the next queued row when
// it finishes one, so a fast GPU takes more rows than a slow one. Each row is measured entirely
// on the GPU that took it; its record names that GPU. Records come back by ticket, so the caller
// reads them in the order it queued the rows, whatever order they finished in.
//
// A crash or a hang costs the row its worker ran (the executor restarts the worker). A GPU that
// can take no rows at all any more (row_executor::run throws device_lost_error) leaves the pool:
// the row it was about to run goes back to the front of the queue for the others, so every row
// still runs exactly once. When no GPU is left, the rows not run fail with the reason.
//
// A lane need not be a GPU of this host: under MPI (mpi/), rank 0 sees each other rank's GPU as
// one more lane, whose executor sends the row to that rank and waits for its record; the
// scheduling, the every-GPU rows and the retiring of a lost lane are the same.
//
// A row may be for one GPU model only (a tune over GPUs of several models searches each model
// apart, since medians of different models are not comparable): only the lanes of that model
// take it, and when every one of them has left, the model's rows fail with the reason while the
// other models' go on.
//
// With one GPU there are no threads: a row runs in the caller's thread when take() asks for it,
// exactly as rows ran before --devices (an in-process executor's context is current there).
#pragma once

#include "worker/executor.hpp"

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace kl {

class device_pool {
 public:
  /// Makes GPU `ordinal`'s executor; called once per GPU, from the pool's constructor.
  using executor_factory = std::function<std::unique_ptr<row_executor>(int ordinal)>;
  /// Makes one lane's executor (a GPU of this host, or another rank's GPU under MPI).
  using lane_factory = std::function<std::unique_ptr<row_executor>()>;
  /// Called from the thread that runs the row (any thread), so what it touches must be locked:
  /// a row starts on a GPU (its index in devices()), or finished there with its record.
  using start_callback = std::function<void(std::size_t ticket, std::size_t gpu)>;
  using finish_callback =
      std::function<void(std::size_t ticket, std::size_t gpu, const result_record&)>;

  /// Starts one executor per ordinal (their workers start side by side). Throws what a factory
  /// throws (cuda::no_device_error, a worker that cannot start), naming the GPU when there are
  /// several.
  device_pool(const std::vector<int>& ordinals, const executor_factory& make);
  /// One lane per factory, in that order; what a factory throws is thrown as it is (it names its
  /// lane itself).
  explicit device_pool(const std::vector<lane_factory>& lanes);
  ~device_pool();
  device_pool(const device_pool&) = delete;
  device_pool& operator=(const device_pool&) = delete;

  std::size_t size() const { return lanes_.size(); }
  /// Whether rows run on threads of their own (more than one GPU) or in the caller's thread.
  bool threaded() const { return lanes_.size() > 1; }
  /// The GPUs, in the order of the ordinals given.
  const std::vector<cuda::device_info>& devices() const { return devices_; }
  /// GPU i's executor, for what is asked of it before rows run (its launch floor, clock and
  /// energy status). Only while no row is queued: a lane's thread uses it then.
  row_executor& executor(std::size_t i) { return *lanes_.at(i).executor; }

  void on_start(start_callback cb) { on_start_ = std::move(cb); }
  /// Ctrl-C (core/interrupt.hpp) cancels the queued rows as a GPU comes to take one, as a sweep
  /// wants (no new row starts); a tune lets its batch in flight finish instead.
  void stop_on_interrupt(bool on) { stop_on_interrupt_ = on; }
  void on_finish(finish_callback cb) { on_finish_ = std::move(cb); }

  /// Queues a row and returns its ticket (0, 1, 2 ... in the order queued). Rows start in that
  /// order. `every_gpu`: the row runs once on each GPU still in the pool (a baseline, so that
  /// every GPU's rows have their own to compare with); its ticket then has a record per GPU.
  /// `model` (a cuda::device_info name, "" for any): only GPUs of that model run it (with
  /// every_gpu, each of them); when none is in the pool, the row fails with the reason.
  std::size_t submit(row_job job, bool every_gpu = false, const std::string& model = "");
  /// The ticket's records, waiting for them (with one GPU, running the queued rows up to it):
  /// one, or one per GPU for an every_gpu row, in GPU order; none for a row that never started
  /// because of cancel(). Each ticket is taken once.
  std::vector<result_record> take(std::size_t ticket);
  /// Whether take(ticket) would return without waiting (with one GPU: only once it has run).
  bool ready(std::size_t ticket);
  /// No queued row starts any more (Ctrl-C); those running finish. take() of a row that did not
  /// start returns no record.
  void cancel();
  /// These rows, if not started yet, never start (a batch the caller no longer wants); take()
  /// then returns no record for them. The others run and are taken as usual.
  void withdraw(const std::vector<std::size_t>& tickets);

  /// Workers started over every GPU (one per GPU when nothing went wrong).
  int workers_started() const;
  /// The GPUs that left the pool, each with why ("" for those still in it), by GPU index.
  std::vector<std::string> lost() const;
  /// How many rows each GPU ran (an every_gpu row counts on each), by GPU index.
  std::vector<std::size_t> rows_run() const;

 private:
  struct lane {
    std::unique_ptr<row_executor> executor;
    std::deque<std::size_t> own;  // every_gpu tickets this GPU has still to run
    bool alive = true;
    std::string lost;
    std::size_t rows = 0;
    std::thread thread;
  };
  struct task {
    row_job job;
    bool every_gpu = false;
    std::string model;           // "" for any GPU
    std::size_t parts_left = 1;  // every_gpu: GPUs that have still to run it
    bool started = false, done = false, cancelled = false;
    std::vector<std::pair<std::size_t, result_record>> records;  // (GPU, record)
  };

  // Makes the executors, side by side when there are several; names[i] prefixes lane i's error
  // ("" for none).
  void start(const std::vector<lane_factory>& lanes, const std::vector<std::string>& names);
  void lane_loop(std::size_t i);
  // Runs `t` on lane i outside the lock; false when the GPU is lost (then it is marked so).
  bool run_on(std::size_t i, std::size_t ticket, std::unique_lock<std::mutex>& lock);
  // A lane left the pool: its own parts are done without it; with no lane left, every row not
  // done fails with `why`.
  void retire(std::size_t i, const std::string& why);
  void fail_everything_left(const std::string& why);
  // Every lane of `model` has left (the last for `why`): its queued rows fail.
  void fail_model_left(const std::string& model, const std::string& why);
  // Whether lane i takes rows for `model` ("" takes any lane).
  bool serves(std::size_t i, const std::string& model) const {
    return model.empty() || devices_[i].name == model;
  }
  // The queue of rows for `model` ("": the shared one).
  std::deque<std::size_t>& queue_for(const std::string& model) {
    return model.empty() ? queue_ : model_queues_[model];
  }
  void cancel_locked();
  // Takes the tickets in `which` (all when null) out of the queues, as not started.
  void drop_queued(const std::set<std::size_t>* which);
  void finish_part(std::size_t ticket);
  bool any_alive() const;

  std::vector<lane> lanes_;
  std::vector<cuda::device_info> devices_;
  start_callback on_start_;
  finish_callback on_finish_;
  mutable std::mutex m_;
  std::condition_variable work_, done_;
  std::map<std::size_t, task> tasks_;                            // tickets not taken yet
  std::deque<std::size_t> queue_;                                // shared: one-GPU rows not started
  std::map<std::string, std::deque<std::size_t>> model_queues_;  // rows for one model only
  std::size_t next_ticket_ = 0;
  bool stopping_ = false, cancelled_ = false;
  bool stop_on_interrupt_ = false;
};

}  // namespace kl
