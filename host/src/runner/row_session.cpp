#include "runner/row_session.hpp"

#include "cuda/driver.hpp"
#include "runner/compile_stage.hpp"

#include <set>

namespace kl {

row_session::row_session(const family_registry& families, run_request base)
    : families_(families), base_(std::move(base)) {
  cuda::driver::get();  // throws no_device_error, with the reason
  device_ = cuda::query_device(0);
  executor_ = make_executor(families_, base_);
  launch_floor_ = executor_->launch_floor(base_.timing);
}

row_session::~row_session() = default;

int row_session::workers_started() const { return executor_->workers_started(); }

std::vector<std::string> row_session::take_warnings() { return std::exchange(warnings_, {}); }

std::vector<result_record> row_session::run(
    const std::vector<row_request>& rows,
    const std::function<void(std::size_t, const result_record&)>& on_row) {
  // The files of this batch not compiled yet, once each, in the order their rows come.
  run_request request = base_;
  request.variants.clear();
  std::set<const registry_entry*> queued;
  for (const auto& r : rows) {
    const registry_entry* e = r.entry;
    if (e->descriptor.origin == origin_kind::source && !compiled_.count(e) &&
        queued.insert(e).second)
      request.variants.push_back(e);
  }
  std::optional<compile_stage> compiles;
  if (!request.variants.empty()) compiles.emplace(families_, request, device_.arch());

  std::vector<result_record> out;
  out.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const row_request& row = rows[i];
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
    } else if (auto verdict = decide_before_compile(e, row.block, row.config, device_)) {
      r.status = verdict->first;
      r.message = verdict->second;
    } else {
      const compile_record* compiled = nullptr;
      if (v.origin == origin_kind::source) {
        auto it = compiled_.find(&e);
        if (it == compiled_.end()) it = compiled_.emplace(&e, compiles->get(&e)).first;
        compiled = &it->second;
      }
      if (compiled && !compiled->error.empty()) {
        r.status = outcome::failed;
        r.message = compiled->error;
      } else if (compiled && !compiled->result.lowered_names.count(
                                 fam->name_expression(v, row.block, row.config))) {
        // The session's request did not cover this instantiation (a block or configuration
        // outside `base`): a mistake of the caller, reported on the row.
        r.status = outcome::failed;
        r.message = "not compiled for block " + std::to_string(row.block) + ", " +
                    row.config.describe() + " (outside the session's configurations)";
      } else {
        row_job job;
        if (compiled) {
          job = source_job(*fam, v, row.block, row.config, *compiled);
        } else {
          job.variant = v;
          job.config = row.config;
          job.block = row.block;
        }
        job.timing = row.timing;
        r = executor_->run(job);
      }
    }
    if (on_row) on_row(i, r);
    out.push_back(std::move(r));
  }
  if (compiles) {
    sweep_result done;
    compiles->finish(done);
    stats_.files += done.compile_stats.files;
    stats_.hits += done.compile_stats.hits;
    stats_.misses += done.compile_stats.misses;
    stats_.failed += done.compile_stats.failed;
    stats_.jobs = done.compile_stats.jobs;
    stats_.wall_ms += done.compile_stats.wall_ms;
    stats_.cache_dir = done.compile_stats.cache_dir;
    for (auto& w : done.warnings) warnings_.push_back(std::move(w));
  }
  return out;
}

}  // namespace kl
