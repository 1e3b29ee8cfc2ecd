// The compile stage of a sweep: every kernel file compiled on a pool of CPU threads, through the
// compile cache, while the runner validates and times the files that are ready.
#pragma once

#include "nvrtc/cache_key.hpp"
#include "parallel/thread_pool.hpp"
#include "runner/runner.hpp"

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kl {

/// The NVRTC request for a source variant: one name expression per configuration (block size,
/// dtype, op) the run request will run, each also listed in `instances` if given. Empty
/// name_expressions: the variant runs nothing here.
nvrtc::compile_request make_compile_request(const family& fam, const registry_entry& e,
                                            const run_request& request, const std::string& arch,
                                            std::vector<instantiation>* instances = nullptr);

/// The NVRTC request for a data family's reference kernel: one name expression per dtype and op
/// the run request asks of the family, each also listed in `instances` if given.
nvrtc::compile_request make_reference_request(const family& fam, const run_request& request,
                                              const std::string& arch,
                                              std::vector<instantiation>* instances = nullptr);

class compile_stage {
 public:
  /// Queues every source variant of `request`, then its references, on request.compile_jobs
  /// threads (one per
  /// hardware thread when 0, never more than there are files), the biggest files first (after
  /// the first file, unless compile_only). get() hands them out in any order.
  ///
  /// With `shared`, the files are queued on that pool instead (behind what it holds already), so
  /// that stages made one after the other compile one after the other on the same threads. The
  /// owner must then destroy the pool, or get() every file, before the stage: a queued task
  /// writes into the stage.
  compile_stage(const family_registry& families, const run_request& request, std::string arch,
                thread_pool* shared = nullptr);
  /// Waits for the compiles under way; drops those not started.
  ~compile_stage();
  compile_stage(const compile_stage&) = delete;
  compile_stage& operator=(const compile_stage&) = delete;

  /// Ctrl-C (core/interrupt.hpp) stops the compiles under way, killing their children: their
  /// records say `stopped`. Off by default (a tune lets its batch in flight finish).
  void stop_on_interrupt(bool on) { stop_on_interrupt_ = on; }

  /// Waits until `e` (a source variant of the request) is compiled, and returns its record.
  const compile_record& get(const registry_entry* e);
  /// Whether `e` is one of the request's variants.
  bool holds(const registry_entry* e) const { return index_.count(e) != 0; }

  /// Waits for every file, then moves the records (in request order), the summary and the
  /// cache warnings into `out`, and adds this run's counts to the cache's counters.
  void finish(sweep_result& out);

 private:
  struct slot {
    compile_record record;
    bool queued = false;     ///< false for a header error, or a file with nothing to compile
    std::future<void> done;  ///< valid until someone waited for it
    std::chrono::steady_clock::time_point finished;
  };
  void compile_one(slot& s, const nvrtc::compile_request& request);
  void warn(const std::string& message);

  std::shared_ptr<const nvrtc::compile_cache> cache_;
  bool want_keys_ = false;
  std::vector<std::string> compile_command_;  // empty: NVRTC in this process
  double compile_timeout_s_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::vector<slot> slots_;  // sized once before any task starts: tasks write into their slot
  std::map<const registry_entry*, std::size_t> index_;
  nvrtc::include_scanner scanner_;
  std::atomic<std::size_t> stores_{0}, corrupt_{0};
  std::atomic<bool> stop_on_interrupt_{false};  // read by the compile threads
  std::mutex warnings_mutex_;
  std::vector<std::string> warnings_;
  bool store_failed_ =
      false;  // under warnings_mutex_: one warning for a folder that is not writable
  unsigned jobs_ = 0;
  // Last: destroyed first, so no task outlives the slots and the scanner it uses.
  std::unique_ptr<thread_pool> own_pool_;
  thread_pool* pool_ = nullptr;  // own_pool_, or the caller's
};

}  // namespace kl
