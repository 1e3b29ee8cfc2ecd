#include "runner/runner.hpp"

#include "core/errors.hpp"
#include "core/file_read.hpp"
#include "core/file_write.hpp"
#include "core/interrupt.hpp"
#include "core/json_text.hpp"
#include "cuda/resources.hpp"
#include "nvrtc/hash.hpp"
#include "plugin_host/plugin_loader.hpp"
#include "record/record_json.hpp"
#include "runner/compile_stage.hpp"
#include "runner/device_pool.hpp"
#include "runner/journal.hpp"
#include "runner/profile_pass.hpp"
#include "worker/executor.hpp"
#include "worker/spread_executor.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>

namespace kl {
namespace {

// A finished row's record from the journal; std::nullopt when the journal has none for it (an
// older journal) or the line was cut short when the machine went down.
std::optional<result_record> resumed_record(const std::string& line) {
  if (line.empty()) return std::nullopt;
  try {
    return record_from_json(nlohmann::json::parse(line));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The rows queued and not yet read back, in request order: a record decided here (a skip, a
// compile error, a resumed row, a sanitized row), or a ticket of the pool; and where each group
// (dtype, op and size) ends.
struct slot {
  std::vector<result_record> decided;
  std::optional<std::size_t> ticket;
  std::optional<row_job> job;  // --profile: the job of a row that ran
  std::string progress;        // what the progress line says of it
  bool counts = true;          // one of rows_total
  bool group_end = false;
};

// With --sanitize, a variant's rows run in workers of their own under each tool: each tool's
// worker, and the log it writes.
struct sanitizer_workers {
  std::vector<std::pair<std::string, std::unique_ptr<row_executor>>> workers;
  std::vector<std::pair<std::string, std::string>> logs;  // tool, path
  bool empty() const { return workers.empty(); }
};

// The device's attributes need no context: the context lives where the kernels run (the worker,
// or row_runner in process), so a crash can never touch this process's GPU state.
sweep_result probe_device(const run_request& request, const std::vector<int>& ordinals,
                          bool injected) {
  sweep_result out;
  try {
    if (injected) {
      out.arch = request.fallback_arch;
    } else {
      cuda::driver::get();
      out.device = cuda::query_device(ordinals.front());
      out.arch = out.device->arch();
    }
  } catch (const cuda::no_device_error& e) {
    out.no_device_reason = e.why();
    out.arch = request.fallback_arch;
  }
  return out;
}

// One sweep, in phases: the device is probed when it is made; then either compile() alone, or
// start_pool(), open_journal(), queue_rows() and finish(). The members are what the phases
// share; they are declared in the order the phases make them, so they go in the reverse order.
class sweep_run {
 public:
  sweep_run(const family_registry& families, const run_request& request,
            const progress_callback& progress, const row_callback& row,
            const group_callback& on_group)
      : families_(families),
        request_(request),
        progress_(progress),
        row_(row),
        on_group_(on_group),
        ordinals_(request.devices.empty() ? std::vector<int>{0} : request.devices),
        injected_(static_cast<bool>(request.executor_factory)),  // the tests' fake GPUs
        out_(probe_device(request, ordinals_, injected_)),
        // 1. Compile: one program per file, on CPU threads, consumed in request order below, so
        // the first file's rows are timed while the others still compile. One image per file
        // serves every GPU: they share the architecture, and each worker loads the image it is
        // sent.
        compiles_(families, request, out_.arch) {
    compiles_.stop_on_interrupt(true);  // Ctrl-C: the compiles under way stop, their children die
  }

  // Whether the sweep stops after compiling: --compile-only, or no device to run rows on.
  bool compiles_only() const { return request_.compile_only || (!out_.device && !injected_); }

  sweep_result compile() {
    std::size_t i = 0;
    for (const registry_entry* e : request_.variants) {
      if (e->descriptor.origin != origin_kind::source) continue;
      if (!interrupt_requested()) compiles_.get(e);
      if (interrupt_requested()) break;
      if (progress_) progress_("compiling", ++i, request_.variants.size(), e->descriptor.name);
    }
    // Interrupted: the files not started are dropped (compile_stage's destructor), and nothing
    // is reported of a stage cut short.
    out_.interrupted = interrupt_requested();
    if (!out_.interrupted) compiles_.finish(out_);
    return std::move(out_);
  }

  // 2. Run. Rows go to an executor per GPU: a worker process (a crash or a hang costs one row and
  // a restart) or, with in_process, kernlab itself. With several GPUs each row goes to the first
  // GPU free (runner/device_pool.hpp); the records are read back in request order, so the
  // groups, the journal's results and the callbacks come out as with one.
  void start_pool() {
    const bool sanitizing = !request_.sanitize.empty();
    if (sanitizing && ordinals_.size() + request_.remote_lanes.size() > 1)
      throw std::invalid_argument(
          "--sanitize runs on one GPU: give --device N, not --devices (nor several MPI ranks)");
    pool_owner_ = std::make_unique<device_pool>(lanes_for(families_, request_));
    pool_ = pool_owner_.get();
    if (injected_) out_.device = pool_->devices().front();
    pool_->stop_on_interrupt(true);  // Ctrl-C: no queued row starts on any GPU
    out_.devices = pool_->devices();
    row_executor& first = pool_->executor(0);
    out_.clock_monitor_status = first.clock_status();
    out_.energy_status = first.energy_status();
    for (std::size_t i = 0; i < pool_->size(); ++i)
      if (std::string why = pool_->executor(i).spread_status(); !why.empty())
        out_.warnings.push_back(
            (pool_->size() > 1 ? "GPU " + std::to_string(out_.devices[i].ordinal) + ": " : "") +
            why);
    out_.launch_floor = first.launch_floor(request_.timing);
  }

  void open_journal() {
    if (!request_.journal_path.empty()) {
      if (request_.resume)
        resumed_ = journal::read_with_ranks(request_.journal_path);
      else
        journal::remove_ranks(request_.journal_path);  // the run before's (MPI)
      try {
        log_ = std::make_unique<journal>(request_.journal_path, !request_.resume);
      } catch (const io_error& e) {
        out_.warnings.push_back(std::string(e.what()) +
                                "; the run goes on without a journal, so it cannot be resumed");
      }
    }
    pool_->on_start([this](std::size_t ticket, std::size_t) {
      std::lock_guard<std::mutex> lock(journal_lock_);
      if (log_) log_->started(key_of_.at(ticket));
    });
    pool_->on_finish([this](std::size_t ticket, std::size_t, const result_record& r) {
      std::lock_guard<std::mutex> lock(journal_lock_);
      if (log_) log_->finished(key_of_.at(ticket), outcome_name(r.status), json_text(to_json(r)));
    });
  }

  void queue_rows() {
    for (const registry_entry* e : request_.variants)
      if (const family* f = families_.find(e->descriptor.family))
        rows_total_ +=
            configs_for(*f, request_).size() * blocks_for(e->descriptor, request_).size();
    // With several GPUs, rows are queued this far ahead of the one read back, so that no GPU
    // waits while the front row runs; the bound keeps the compiled images queued with them in
    // check.
    lookahead_ = pool_->threaded() ? 4 * pool_->size() : 0;

    std::vector<std::string> family_order;
    for (const registry_entry* e : request_.variants)
      if (std::find(family_order.begin(), family_order.end(), e->descriptor.family) ==
          family_order.end())
        family_order.push_back(e->descriptor.family);

    for (const auto& family_name : family_order) {
      if (out_.interrupted) break;
      const family* fam = families_.find(family_name);
      if (!fam) {
        queue_unusable_family(family_name);
        continue;
      }
      for (const problem_config& config : configs_for(*fam, request_)) {
        if (out_.interrupted) break;
        for (const registry_entry* e : request_.variants) {
          if (out_.interrupted) break;
          if (e->descriptor.family != family_name) continue;
          queue_variant(*e, *fam, config);
        }
        end_group();
      }
    }
  }

  sweep_result finish() {
    // The rows still queued: with Ctrl-C, those that never started come back without a record.
    drain(0);
    out_.workers_started = pool_->workers_started();
    const auto lost = pool_->lost();
    for (std::size_t i = 0; i < lost.size(); ++i)
      if (!lost[i].empty())
        out_.warnings.push_back("GPU " + std::to_string(out_.devices[i].ordinal) +
                                " left the run: " + lost[i] + "; the other GPUs took its rows");
    // After an interrupt the files still queued are dropped (compile_stage's destructor), not
    // waited for: the results then list no sources; nor is anything profiled.
    if (!out_.interrupted) {
      if (!request_.profiler.empty()) {
        // The timing workers' contexts go before ncu's worker makes its own.
        pool_ = nullptr;
        pool_owner_.reset();
        profile_rows(families_, request_, std::move(to_profile_), out_, progress_);
      }
      compiles_.finish(out_);
    }
    return std::move(out_);
  }

 private:
  // The journal is written from the thread that runs each row (one per GPU): under a lock. A
  // journal that stops working (a full disk) is dropped with one warning; the rows go on.
  void journal_check() {
    std::lock_guard<std::mutex> lock(journal_lock_);
    if (!log_ || log_->failure().empty()) return;
    out_.warnings.push_back(log_->failure());
    log_.reset();
  }

  void end_group() {
    slot end;
    end.group_end = true;
    pending_.push_back(std::move(end));
    drain(lookahead_);
  }

  // Reads back the rows at the front until at most `keep` are queued (with one GPU, none: each
  // row runs as soon as it is queued, as rows always did), then the finished ones after them.
  void drain(std::size_t keep) {
    while (!pending_.empty()) {
      slot& s = pending_.front();
      if (pending_.size() <= keep && s.ticket && !pool_->ready(*s.ticket)) break;
      if (s.group_end) {
        if (on_group_) on_group_(group_, *out_.device, out_);
        for (auto& r : group_) out_.results.push_back(std::move(r));
        group_.clear();
        pending_.pop_front();
        continue;
      }
      // Before take(): with one GPU that is when the row runs, so the line names the row running.
      if (s.counts && progress_) progress_("running", ++rows_done_, rows_total_, s.progress);
      std::vector<result_record> records = s.ticket ? pool_->take(*s.ticket) : std::move(s.decided);
      // A queued row that never started: Ctrl-C cancelled it (on a GPU's thread, maybe).
      if (s.ticket && records.empty()) out_.interrupted = true;
      for (auto& r : records) {
        // Its index in out.results once this group is added to them.
        if (s.job && !request_.profiler.empty() && r.timed())
          to_profile_.push_back({out_.results.size() + group_.size(), *s.job});
        if (row_) row_(r, out_);
        group_.push_back(std::move(r));
      }
      if (s.ticket) {
        std::lock_guard<std::mutex> lock(journal_lock_);
        key_of_.erase(*s.ticket);
      }
      pending_.pop_front();
      journal_check();
    }
  }

  // A family whose description cannot be used: each variant is one failed row, with the
  // description's error (file:line).
  void queue_unusable_family(const std::string& family_name) {
    for (const registry_entry* e : request_.variants) {
      if (e->descriptor.family != family_name) continue;
      result_record r;
      r.variant = e->descriptor;
      r.status = outcome::failed;
      r.message = e->error.empty() ? "unknown family '" + family_name + "'" : e->error;
      slot s;
      s.decided.push_back(std::move(r));
      s.counts = false;
      pending_.push_back(std::move(s));
    }
    end_group();
  }

  sanitizer_workers start_sanitizers(const variant_descriptor& v) {
    sanitizer_workers out;
    for (const auto& tool : request_.sanitize) {
      const std::string path =
          sanitizer_log_path(request_.journal_path, sanitizer_folder_, tool, v.name);
      // API errors are not the kernel's and kernlab checks every return code itself; one is
      // expected on every launch (the parameter check asks the driver for the parameter past
      // the last, cuda/tensor_map.cpp), which the sanitizer would count against every row.
      out.workers.emplace_back(
          tool, make_executor(families_, request_,
                              {request_.sanitizer, "--tool", tool, "--print-limit", "20",
                               "--report-api-errors", "no"},
                              path));
      out.logs.emplace_back(tool, path);
    }
    return out;
  }

  // The sanitizers' verdicts: their workers shut down, then their logs are read. `ran`: per
  // sanitized row, whether it was run (under the sanitizers).
  static void add_verdicts(sanitizer_workers& sanitizers, std::vector<slot>& sanitized,
                           const std::vector<bool>& ran) {
    for (std::size_t i = 0; i < sanitizers.workers.size(); ++i) {
      sanitizers.workers[i].second.reset();
      const std::string verdict =
          sanitizer_verdict(sanitizers.logs[i].first, sanitizers.logs[i].second);
      for (std::size_t k = 0; k < sanitized.size(); ++k) {
        auto& row = sanitized[k].decided.front();
        // A row that never ran (a compile error, a skip) has no verdict: "clean" would claim a
        // check that did not happen.
        if (!ran[k]) continue;
        row.sanitizer += (row.sanitizer.empty() ? "" : ", ") + verdict;
        if (verdict != sanitizers.logs[i].first + ": clean") row.sanitizer_findings = true;
      }
    }
  }

  // Every block's row of one variant for one configuration.
  void queue_variant(const registry_entry& e, const family& fam, const problem_config& config) {
    const auto& v = e.descriptor;
    sanitizer_workers sanitizers = start_sanitizers(v);
    // Sanitized rows are decided here, then given their verdicts, before they are queued.
    std::vector<slot> sanitized;
    std::vector<bool> ran;  // per sanitized row: it was run (under the sanitizers)
    for (unsigned block : blocks_for(v, request_)) {
      // Ctrl-C: no new row starts; the finished ones are reported and written.
      if (interrupt_requested()) {
        out_.interrupted = true;
        pool_->cancel();
        break;
      }
      slot s;
      s.progress = v.name + (block ? " block " + std::to_string(block) : std::string()) + ", " +
                   config.describe();
      bool ran_now = false;
      if (!decide_row(e, fam, config, block, sanitizers, s, ran_now)) break;
      if (sanitizers.empty()) {
        pending_.push_back(std::move(s));
        drain(lookahead_);
      } else {
        ran.push_back(ran_now);
        sanitized.push_back(std::move(s));
      }
    }
    add_verdicts(sanitizers, sanitized, ran);
    for (auto& s : sanitized) pending_.push_back(std::move(s));
    drain(lookahead_);
  }

  // One row: decided here when that needs no GPU (a skip, a compile error, a resumed row), else
  // queued on the pool, or run under the sanitizers. `ran_now`: it was run. False: Ctrl-C stopped
  // its compile, and the variant's rows stop.
  bool decide_row(const registry_entry& e, const family& fam, const problem_config& config,
                  unsigned block, sanitizer_workers& sanitizers, slot& s, bool& ran_now) {
    const auto& v = e.descriptor;
    result_record r;
    r.variant = v;
    r.config = config;
    r.block = block;
    auto settle = [&](outcome o, const std::string& why) {
      r.status = o;
      r.message = why;
    };
    const std::string key = journal_key(e, block, config);
    // Decisions that need no GPU are made here; everything else runs in the executor.
    if (auto verdict = decide_before_compile(e, block, config, *out_.device)) {
      settle(verdict->first, verdict->second);
    } else if (v.origin == origin_kind::source && compiles_.get(&e).stopped) {
      // Ctrl-C stopped its compile: like a row that never started, it is not reported.
      out_.interrupted = true;
      pool_->cancel();
      return false;
    } else if (v.origin == origin_kind::source && !compiles_.get(&e).error.empty()) {
      settle(outcome::failed, compiles_.get(&e).error);
    } else if (resumed_.in_flight.count(key)) {
      settle(outcome::suspect,
             "was running when the run being resumed stopped (the machine or "
             "the driver went down?); not run again: run it alone to check");
    } else if (auto done = resumed_.done.find(key); done != resumed_.done.end()) {
      if (auto earlier = resumed_record(done->second.record)) {
        // The numbers the row had when it finished, under today's descriptor.
        r = std::move(*earlier);
        r.variant = v;
        r.config = config;
        r.block = block;
        r.resumed = true;
      } else {
        settle(outcome::skipped,
               "finished (" + done->second.outcome + ") in the run being resumed");
      }
    } else {
      row_job job;
      if (v.origin == origin_kind::source) {
        job = source_job(fam, v, block, config, compiles_.get(&e));
      } else {
        job.variant = v;
        job.config = config;
        job.block = block;
      }
      job.timing = request_.timing;
      if (log_) job.journal_key = key;  // another rank (MPI) journals it too
      ran_now = true;
      if (!request_.profiler.empty()) s.job = job;
      run_row(std::move(job), key, v, sanitizers, s, r);
    }
    if (!s.ticket) s.decided.push_back(std::move(r));
    return true;
  }

  // A row that runs: queued on the pool, or without it under each sanitizer, its record in `r`.
  void run_row(row_job job, const std::string& key, const variant_descriptor& v,
               sanitizer_workers& sanitizers, slot& s, result_record& r) {
    if (sanitizers.empty()) {
      // Queued: the pool's threads journal it as it starts and finishes. The lock is held until
      // its key is known, which a GPU taking it at once must wait for.
      std::lock_guard<std::mutex> lock(journal_lock_);
      const std::size_t ticket =
          pool_->submit(std::move(job), is_baseline_row(v, request_.baseline));
      key_of_[ticket] = key;
      s.ticket = ticket;
      return;
    }
    {
      std::lock_guard<std::mutex> lock(journal_lock_);
      if (log_) log_->started(key);
    }
    journal_check();
    for (auto& [tool, x] : sanitizers.workers) r = x->run(job);
    {
      std::lock_guard<std::mutex> lock(journal_lock_);
      if (log_) log_->finished(key, outcome_name(r.status), json_text(to_json(r)));
    }
    journal_check();
  }

  const family_registry& families_;
  const run_request& request_;
  const progress_callback& progress_;
  const row_callback& row_;
  const group_callback& on_group_;
  const std::vector<int> ordinals_;
  const bool injected_;
  sweep_result out_;
  compile_stage compiles_;
  std::unique_ptr<device_pool> pool_owner_;
  device_pool* pool_ = nullptr;
  std::unique_ptr<journal> log_;
  journal::state resumed_;
  std::mutex journal_lock_;
  std::map<std::size_t, std::string> key_of_;  // ticket -> journal key, while it runs
  std::size_t rows_total_ = 0, rows_done_ = 0;
  std::size_t lookahead_ = 0;
  // --profile: the rows that passed, with their jobs, for the pass after the sweep.
  std::vector<profile_target> to_profile_;
  std::string sanitizer_folder_;  // --sanitize without a journal: the logs' private folder
  std::deque<slot> pending_;
  std::vector<result_record> group_;  // the rows of the group being read back
};

}  // namespace

sweep_result runner::run(const group_callback& on_group) {
  sweep_run sweep(families_, request_, progress_, row_, on_group);
  if (sweep.compiles_only()) return sweep.compile();
  sweep.start_pool();
  sweep.open_journal();
  sweep.queue_rows();
  return sweep.finish();
}

}  // namespace kl
