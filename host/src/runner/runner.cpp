#include "runner/runner.hpp"

#include "core/errors.hpp"
#include "core/file_read.hpp"
#include "core/file_write.hpp"
#include "core/interrupt.hpp"
#include "core/json_text.hpp"
#include "cuda/resources.hpp"
#include "exec/record_json.hpp"
#include "nvrtc/hash.hpp"
#include "plugin_host/plugin_loader.hpp"
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

}  // namespace

sweep_result runner::run(const group_callback& on_group) {
  sweep_result out;
  const std::vector<int> ordinals =
      request_.devices.empty() ? std::vector<int>{0} : request_.devices;
  // The device's attributes need no context: the context lives where the kernels run (the
  // worker, or row_runner in process), so a crash can never touch this process's GPU state.
  const bool injected = static_cast<bool>(request_.executor_factory);  // the tests' fake GPUs
  try {
    if (injected) {
      out.arch = request_.fallback_arch;
    } else {
      cuda::driver::get();
      out.device = cuda::query_device(ordinals.front());
      out.arch = out.device->arch();
    }
  } catch (const cuda::no_device_error& e) {
    out.no_device_reason = e.why();
    out.arch = request_.fallback_arch;
  }

  // 1. Compile: one program per file, on CPU threads, consumed in request order below, so the
  // first file's rows are timed while the others still compile. One image per file serves every
  // GPU: they share the architecture, and each worker loads the image it is sent.
  compile_stage compiles(families_, request_, out.arch);
  compiles.stop_on_interrupt(true);  // Ctrl-C: the compiles under way stop, their children die
  if (request_.compile_only || (!out.device && !injected)) {
    std::size_t i = 0;
    for (const registry_entry* e : request_.variants) {
      if (e->descriptor.origin != origin_kind::source) continue;
      if (!interrupt_requested()) compiles.get(e);
      if (interrupt_requested()) break;
      if (progress_) progress_("compiling", ++i, request_.variants.size(), e->descriptor.name);
    }
    // Interrupted: the files not started are dropped (compile_stage's destructor), and nothing
    // is reported of a stage cut short.
    out.interrupted = interrupt_requested();
    if (!out.interrupted) compiles.finish(out);
    return out;
  }

  // 2. Run. Rows go to an executor per GPU: a worker process (a crash or a hang costs one row and
  // a restart) or, with in_process, kernlab itself. With several GPUs each row goes to the first
  // GPU free (runner/device_pool.hpp); the records are read back in request order, so the
  // groups, the journal's results and the callbacks come out as with one.
  const bool sanitizing = !request_.sanitize.empty();
  if (sanitizing && ordinals.size() + request_.remote_lanes.size() > 1)
    throw std::invalid_argument(
        "--sanitize runs on one GPU: give --device N, not --devices (nor several MPI ranks)");
  auto pool_owner = std::make_unique<device_pool>(lanes_for(families_, request_));
  device_pool& pool = *pool_owner;
  if (injected) out.device = pool.devices().front();
  pool.stop_on_interrupt(true);  // Ctrl-C: no queued row starts on any GPU
  const cuda::device_info& device = *out.device;
  out.devices = pool.devices();
  row_executor& first = pool.executor(0);
  out.clock_monitor_status = first.clock_status();
  out.energy_status = first.energy_status();
  for (std::size_t i = 0; i < pool.size(); ++i)
    if (std::string why = pool.executor(i).spread_status(); !why.empty())
      out.warnings.push_back(
          (pool.size() > 1 ? "GPU " + std::to_string(out.devices[i].ordinal) + ": " : "") + why);
  out.launch_floor = first.launch_floor(request_.timing);

  std::unique_ptr<journal> log;
  journal::state resumed;
  if (!request_.journal_path.empty()) {
    if (request_.resume)
      resumed = journal::read_with_ranks(request_.journal_path);
    else
      journal::remove_ranks(request_.journal_path);  // the run before's (MPI)
    try {
      log = std::make_unique<journal>(request_.journal_path, !request_.resume);
    } catch (const io_error& e) {
      out.warnings.push_back(std::string(e.what()) +
                             "; the run goes on without a journal, so it cannot be resumed");
    }
  }
  // The journal is written from the thread that runs each row (one per GPU): under a lock. A
  // journal that stops working (a full disk) is dropped with one warning; the rows go on.
  std::mutex journal_lock;
  auto journal_check = [&] {
    std::lock_guard<std::mutex> lock(journal_lock);
    if (!log || log->failure().empty()) return;
    out.warnings.push_back(log->failure());
    log.reset();
  };
  std::map<std::size_t, std::string> key_of;  // ticket -> journal key, while it runs
  pool.on_start([&](std::size_t ticket, std::size_t) {
    std::lock_guard<std::mutex> lock(journal_lock);
    if (log) log->started(key_of.at(ticket));
  });
  pool.on_finish([&](std::size_t ticket, std::size_t, const result_record& r) {
    std::lock_guard<std::mutex> lock(journal_lock);
    if (log) log->finished(key_of.at(ticket), outcome_name(r.status), json_text(to_json(r)));
  });

  std::size_t rows_total = 0, rows_done = 0;
  for (const registry_entry* e : request_.variants)
    if (const family* f = families_.find(e->descriptor.family))
      rows_total += configs_for(*f, request_).size() * blocks_for(e->descriptor, request_).size();

  // --profile: the rows that passed, with their jobs, for the pass after the sweep.
  std::vector<profile_target> to_profile;
  std::string sanitizer_folder;  // --sanitize without a journal: the logs' private folder

  // The rows queued and not yet read back, in request order: a record decided here (a skip, a
  // compile error, a resumed row, a sanitized row), or a ticket of the pool; and where each
  // group (dtype, op and size) ends.
  struct slot {
    std::vector<result_record> decided;
    std::optional<std::size_t> ticket;
    std::optional<row_job> job;  // --profile: the job of a row that ran
    std::string progress;        // what the progress line says of it
    bool counts = true;          // one of rows_total
    bool group_end = false;
  };
  std::deque<slot> pending;
  std::vector<result_record> group;  // the rows of the group being read back
  // Reads back the rows at the front until at most `keep` are queued (with one GPU, none: each
  // row runs as soon as it is queued, as rows always did), then the finished ones after them.
  auto drain = [&](std::size_t keep) {
    while (!pending.empty()) {
      slot& s = pending.front();
      if (pending.size() <= keep && s.ticket && !pool.ready(*s.ticket)) break;
      if (s.group_end) {
        if (on_group) on_group(group, device, out);
        for (auto& r : group) out.results.push_back(std::move(r));
        group.clear();
        pending.pop_front();
        continue;
      }
      // Before take(): with one GPU that is when the row runs, so the line names the row running.
      if (s.counts && progress_) progress_("running", ++rows_done, rows_total, s.progress);
      std::vector<result_record> records = s.ticket ? pool.take(*s.ticket) : std::move(s.decided);
      // A queued row that never started: Ctrl-C cancelled it (on a GPU's thread, maybe).
      if (s.ticket && records.empty()) out.interrupted = true;
      for (auto& r : records) {
        // Its index in out.results once this group is added to them.
        if (s.job && !request_.profiler.empty() && r.timed())
          to_profile.push_back({out.results.size() + group.size(), *s.job});
        if (row_) row_(r, out);
        group.push_back(std::move(r));
      }
      if (s.ticket) {
        std::lock_guard<std::mutex> lock(journal_lock);
        key_of.erase(*s.ticket);
      }
      pending.pop_front();
      journal_check();
    }
  };
  // With several GPUs, rows are queued this far ahead of the one read back, so that no GPU waits
  // while the front row runs; the bound keeps the compiled images queued with them in check.
  const std::size_t lookahead = pool.threaded() ? 4 * pool.size() : 0;

  std::vector<std::string> family_order;
  for (const registry_entry* e : request_.variants)
    if (std::find(family_order.begin(), family_order.end(), e->descriptor.family) ==
        family_order.end())
      family_order.push_back(e->descriptor.family);

  for (const auto& family_name : family_order) {
    if (out.interrupted) break;
    const family* fam = families_.find(family_name);
    if (!fam) {
      // A family whose description cannot be used: each variant is one failed row, with the
      // description's error (file:line).
      for (const registry_entry* e : request_.variants) {
        if (e->descriptor.family != family_name) continue;
        result_record r;
        r.variant = e->descriptor;
        r.status = outcome::failed;
        r.message = e->error.empty() ? "unknown family '" + family_name + "'" : e->error;
        slot s;
        s.decided.push_back(std::move(r));
        s.counts = false;
        pending.push_back(std::move(s));
      }
      slot end;
      end.group_end = true;
      pending.push_back(std::move(end));
      drain(lookahead);
      continue;
    }
    for (const problem_config& config : configs_for(*fam, request_)) {
      if (out.interrupted) break;
      for (const registry_entry* e : request_.variants) {
        if (out.interrupted) break;
        if (e->descriptor.family != family_name) continue;
        const auto& v = e->descriptor;
        // With --sanitize, each variant's rows run in workers of their own under each tool.
        std::vector<std::pair<std::string, std::unique_ptr<row_executor>>> sanitizers;
        std::vector<std::pair<std::string, std::string>> sanitizer_logs;
        for (const auto& tool : request_.sanitize) {
          const std::string path =
              sanitizer_log_path(request_.journal_path, sanitizer_folder, tool, v.name);
          // API errors are not the kernel's and kernlab checks every return code itself; one is
          // expected on every launch (the parameter check asks the driver for the parameter past
          // the last, cuda/tensor_map.cpp), which the sanitizer would count against every row.
          sanitizers.emplace_back(
              tool, make_executor(families_, request_,
                                  {request_.sanitizer, "--tool", tool, "--print-limit", "20",
                                   "--report-api-errors", "no"},
                                  path));
          sanitizer_logs.emplace_back(tool, path);
        }
        // Sanitized rows are decided here, then given their verdicts, before they are queued.
        std::vector<slot> sanitized;
        std::vector<bool> ran;  // per sanitized row: it was run (under the sanitizers)
        for (unsigned block : blocks_for(v, request_)) {
          // Ctrl-C: no new row starts; the finished ones are reported and written.
          if (interrupt_requested()) {
            out.interrupted = true;
            pool.cancel();
            break;
          }
          slot s;
          s.progress = v.name + (block ? " block " + std::to_string(block) : std::string()) + ", " +
                       config.describe();
          result_record r;
          r.variant = v;
          r.config = config;
          r.block = block;
          auto settle = [&](outcome o, const std::string& why) {
            r.status = o;
            r.message = why;
          };
          const std::string key = journal_key(*e, block, config);
          bool ran_now = false;
          // Decisions that need no GPU are made here; everything else runs in the executor.
          if (auto verdict = decide_before_compile(*e, block, config, device)) {
            settle(verdict->first, verdict->second);
          } else if (v.origin == origin_kind::source && compiles.get(e).stopped) {
            // Ctrl-C stopped its compile: like a row that never started, it is not reported.
            out.interrupted = true;
            pool.cancel();
            break;
          } else if (v.origin == origin_kind::source && !compiles.get(e).error.empty()) {
            settle(outcome::failed, compiles.get(e).error);
          } else if (resumed.in_flight.count(key)) {
            settle(outcome::suspect,
                   "was running when the run being resumed stopped (the machine or "
                   "the driver went down?); not run again: run it alone to check");
          } else if (auto done = resumed.done.find(key); done != resumed.done.end()) {
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
              job = source_job(*fam, v, block, config, compiles.get(e));
            } else {
              job.variant = v;
              job.config = config;
              job.block = block;
            }
            job.timing = request_.timing;
            if (log) job.journal_key = key;  // another rank (MPI) journals it too
            ran_now = true;
            if (!request_.profiler.empty()) s.job = job;
            if (sanitizers.empty()) {
              // Queued: the pool's threads journal it as it starts and finishes. The lock is
              // held until its key is known, which a GPU taking it at once must wait for.
              std::lock_guard<std::mutex> lock(journal_lock);
              const std::size_t ticket =
                  pool.submit(std::move(job), is_baseline_row(v, request_.baseline));
              key_of[ticket] = key;
              s.ticket = ticket;
            } else {
              {
                std::lock_guard<std::mutex> lock(journal_lock);
                if (log) log->started(key);
              }
              journal_check();
              for (auto& [tool, x] : sanitizers) r = x->run(job);
              {
                std::lock_guard<std::mutex> lock(journal_lock);
                if (log) log->finished(key, outcome_name(r.status), json_text(to_json(r)));
              }
              journal_check();
            }
          }
          if (!s.ticket) s.decided.push_back(std::move(r));
          if (sanitizers.empty()) {
            pending.push_back(std::move(s));
            drain(lookahead);
          } else {
            ran.push_back(ran_now);
            sanitized.push_back(std::move(s));
          }
        }
        // The sanitizers' verdicts: their workers shut down, then their logs are read.
        for (std::size_t i = 0; i < sanitizers.size(); ++i) {
          sanitizers[i].second.reset();
          const std::string verdict =
              sanitizer_verdict(sanitizer_logs[i].first, sanitizer_logs[i].second);
          for (std::size_t k = 0; k < sanitized.size(); ++k) {
            auto& row = sanitized[k].decided.front();
            // A row that never ran (a compile error, a skip) has no verdict: "clean" would
            // claim a check that did not happen.
            if (!ran[k]) continue;
            row.sanitizer += (row.sanitizer.empty() ? "" : ", ") + verdict;
            if (verdict != sanitizer_logs[i].first + ": clean") row.sanitizer_findings = true;
          }
        }
        for (auto& s : sanitized) pending.push_back(std::move(s));
        drain(lookahead);
      }
      slot end;
      end.group_end = true;
      pending.push_back(std::move(end));
      drain(lookahead);
    }
  }
  // The rows still queued: with Ctrl-C, those that never started come back without a record.
  drain(0);
  out.workers_started = pool.workers_started();
  const auto lost = pool.lost();
  for (std::size_t i = 0; i < lost.size(); ++i)
    if (!lost[i].empty())
      out.warnings.push_back("GPU " + std::to_string(out.devices[i].ordinal) +
                             " left the run: " + lost[i] + "; the other GPUs took its rows");
  // After an interrupt the files still queued are dropped (compile_stage's destructor), not
  // waited for: the results then list no sources; nor is anything profiled.
  if (!out.interrupted) {
    if (!request_.profiler.empty()) {
      // The timing workers' contexts go before ncu's worker makes its own.
      pool_owner.reset();
      profile_rows(families_, request_, std::move(to_profile), out, progress_);
    }
    compiles.finish(out);
  }
  return out;
}

}  // namespace kl
