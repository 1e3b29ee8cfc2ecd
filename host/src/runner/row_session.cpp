#include "runner/row_session.hpp"

#include "cuda/driver.hpp"
#include "runner/compile_stage.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <set>
#include <stdexcept>

namespace kl {

row_session::row_session(const family_registry& families, run_request base)
    : families_(families), base_(std::move(base)) {
  const std::vector<int> ordinals = base_.devices.empty() ? std::vector<int>{0} : base_.devices;
  if (base_.executor_factory) {  // the tests' fake GPUs: no driver
    pool_devices_ = std::make_unique<device_pool>(lanes_for(families_, base_));
    device_ = pool_devices_->devices().front();
  } else {
    cuda::driver::get();  // throws no_device_error, with the reason
    device_ = cuda::query_device(ordinals.front());
    pool_devices_ = std::make_unique<device_pool>(lanes_for(families_, base_));
  }
  launch_floor_ = pool_devices_->executor(0).launch_floor(base_.timing);
  energy_status_ = pool_devices_->executor(0).energy_status();
}

row_session::~row_session() = default;

int row_session::workers_started() const { return pool_devices_->workers_started(); }

const std::vector<cuda::device_info>& row_session::devices() const {
  return pool_devices_->devices();
}

std::vector<std::string> row_session::lost_devices() const { return pool_devices_->lost(); }

std::vector<std::size_t> row_session::rows_per_device() const { return pool_devices_->rows_run(); }

std::vector<std::string> row_session::take_warnings() { return std::exchange(warnings_, {}); }

void row_session::prefetch(const std::vector<row_request>& rows) {
  // The files of these rows neither compiled nor queued yet, once each, in the order they come.
  run_request request = base_;
  request.variants.clear();
  std::set<const registry_entry*> queued;
  for (const auto& r : rows) {
    const registry_entry* e = r.entry;
    if (e->descriptor.origin != origin_kind::source || compiled_.count(e) || queued.count(e))
      continue;
    // A row decided without its file (a block the file cannot take, a size that does not fit)
    // queues nothing: run() would never take that file.
    if (!families_.find(e->descriptor.family) ||
        decide_before_compile(*e, r.block, r.config, device_))
      continue;
    queued.insert(e);
    const bool in_a_stage = std::any_of(stages_.begin(), stages_.end(),
                                        [&](const queued_stage& q) { return q.stage->holds(e); });
    if (!in_a_stage) request.variants.push_back(e);
  }
  if (request.variants.empty()) return;
  if (!pool_)
    pool_ = std::make_unique<thread_pool>(base_.compile_jobs ? base_.compile_jobs
                                                             : thread_pool::hardware_threads());
  queued_stage q;
  q.left = request.variants.size();
  q.stage = std::make_unique<compile_stage>(families_, request, device_.arch(), pool_.get());
  stages_.push_back(std::move(q));
}

const compile_record& row_session::compiled(const registry_entry& e) {
  if (auto it = compiled_.find(&e); it != compiled_.end()) return it->second;
  const auto q = std::find_if(stages_.begin(), stages_.end(),
                              [&](const queued_stage& s) { return s.stage->holds(&e); });
  if (q == stages_.end())  // run() queues every file it needs before it asks
    throw std::logic_error("row_session: " + e.descriptor.qualified_name() + " was never queued");
  const auto t0 = std::chrono::steady_clock::now();
  const compile_record& record = compiled_.emplace(&e, q->stage->get(&e)).first->second;
  times_.waiting_for_compiles_s +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (--q->left == 0) {  // every file of the stage taken: its counts join the session's
    sweep_result done;
    q->stage->finish(done);
    stats_.files += done.compile_stats.files;
    stats_.hits += done.compile_stats.hits;
    stats_.misses += done.compile_stats.misses;
    stats_.failed += done.compile_stats.failed;
    stats_.jobs = done.compile_stats.jobs;
    stats_.wall_ms += done.compile_stats.wall_ms;
    stats_.cache_dir = done.compile_stats.cache_dir;
    for (auto& w : done.warnings) warnings_.push_back(std::move(w));
    stages_.erase(q);
  }
  return record;
}

// The record of a row decided without running it, or its job; std::nullopt for the job means
// the record is final.
std::pair<result_record, std::optional<row_job>> row_session::place(const row_request& row) {
  const registry_entry& e = *row.entry;
  const variant_descriptor& v = e.descriptor;
  result_record r;
  r.variant = v;
  r.config = row.config;
  r.block = row.block;
  const family* fam = families_.find(v.family);
  if (!fam) {
    r.status = outcome::failed;
    r.message = e.error.empty() ? "unknown family '" + v.family + "'" : e.error;
    return {r, std::nullopt};
  }
  if (auto verdict = decide_before_compile(e, row.block, row.config, device_)) {
    r.status = verdict->first;
    r.message = verdict->second;
    return {r, std::nullopt};
  }
  const compile_record* record = v.origin == origin_kind::source ? &compiled(e) : nullptr;
  if (record && !record->error.empty()) {
    r.status = outcome::failed;
    r.message = record->error;
    return {r, std::nullopt};
  }
  if (record &&
      !record->result.lowered_names.count(fam->name_expression(v, row.block, row.config))) {
    // The session's request did not cover this instantiation (a block or configuration outside
    // `base`): a mistake of the caller, reported on the row.
    r.status = outcome::failed;
    r.message = "not compiled for block " + std::to_string(row.block) + ", " +
                row.config.describe() + " (outside the session's configurations)";
    return {r, std::nullopt};
  }
  row_job job;
  if (record) {
    job = source_job(*fam, v, row.block, row.config, *record);
  } else {
    job.variant = v;
    job.config = row.config;
    job.block = row.block;
  }
  job.timing = row.timing;
  job.race_live = row.race_live;
  return {r, std::move(job)};
}

void row_session::place_next(batch& b) {
  const row_request& row = b.rows[b.placed];
  slot s;
  s.index = b.placed++;
  auto [record, job] = place(row);
  if (job)
    s.ticket = pool_devices_->submit(std::move(*job), row.every_gpu, row.model);
  else
    s.decided = std::move(record);
  b.pending.push_back(std::move(s));
}

std::size_t row_session::submit(const std::vector<row_request>& rows) {
  prefetch(rows);
  const std::size_t id = next_batch_++;
  batch& b = batches_[id];
  b.rows = rows;
  // With several GPUs every row is queued now, so that the GPUs take this batch's rows as soon
  // as they finish the last one's. With one, the rows are placed as collect() reads them back,
  // each running before the next one's file is waited for.
  if (pool_devices_->threaded())
    while (b.placed < b.rows.size()) place_next(b);
  return id;
}

std::vector<result_record> row_session::collect(
    std::size_t id, const std::function<void(std::size_t, const result_record&)>& on_row) {
  const auto it = batches_.find(id);
  if (it == batches_.end()) throw std::logic_error("row_session: batch collected twice");
  batch& b = it->second;
  device_pool& pool = *pool_devices_;
  std::vector<result_record> out;
  out.reserve(b.rows.size());
  const auto t0 = std::chrono::steady_clock::now();
  const double waited_before = times_.waiting_for_compiles_s;
  bool ran_any = false;
  for (;;) {
    if (b.pending.empty()) {
      if (b.placed == b.rows.size()) break;
      place_next(b);
      continue;
    }
    slot& s = b.pending.front();
    std::vector<result_record> records;
    if (s.ticket) {
      records = pool.take(*s.ticket);
      ran_any = true;
    } else {
      records.push_back(std::move(*s.decided));
    }
    for (auto& r : records) {
      if (on_row) on_row(s.index, r);
      out.push_back(std::move(r));
    }
    b.pending.pop_front();
  }
  batches_.erase(it);
  // Wall time reading the rows back (running them, with one GPU), less the compile waits within.
  if (ran_any) {
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    times_.running_rows_s += std::max(0.0, wall - (times_.waiting_for_compiles_s - waited_before));
  }
  return out;
}

void row_session::discard(std::size_t id) {
  const auto it = batches_.find(id);
  if (it == batches_.end()) return;
  // The rows no GPU has started never will; those running finish, and are dropped. (With one
  // GPU nothing of the batch was placed: collect() places a row when it comes to it.)
  std::vector<std::size_t> tickets;
  for (const auto& s : it->second.pending)
    if (s.ticket) tickets.push_back(*s.ticket);
  pool_devices_->withdraw(tickets);
  for (std::size_t t : tickets) pool_devices_->take(t);
  batches_.erase(it);
}

std::vector<result_record> row_session::run(
    const std::vector<row_request>& rows,
    const std::function<void(std::size_t, const result_record&)>& on_row) {
  return collect(submit(rows), on_row);
}

}  // namespace kl
