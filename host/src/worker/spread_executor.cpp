#include "worker/spread_executor.hpp"

#include "core/interrupt.hpp"
#include "measure/timing.hpp"

#include <chrono>
#include <future>
#include <numeric>
#include <set>
#include <stdexcept>

namespace kl {
namespace {

class spread final : public row_executor {
 public:
  spread(std::vector<std::unique_ptr<row_executor>> members, spread_predicate spreads,
         std::string status)
      : members_(std::move(members)), spreads_(std::move(spreads)), status_(std::move(status)) {
    if (members_.empty()) throw std::logic_error("make_spread_executor: no member executors");
  }

  // The members' workers exit side by side (row_executor::request_exit).
  ~spread() override { request_exit(); }

  void request_exit() override {
    for (auto& m : members_) m->request_exit();
  }
  const cuda::device_info& device() override { return members_.front()->device(); }
  std::string clock_status() override { return members_.front()->clock_status(); }
  std::string energy_status() override { return members_.front()->energy_status(); }
  timing_stats launch_floor(const timing_options& opt) override {
    return members_.front()->launch_floor(opt);
  }
  /// Counted as one worker and its restarts, as one GPU's are without spreading: what a sweep
  /// reports as restarts is the workers started beyond one per GPU.
  int workers_started() const override {
    const int all = std::accumulate(members_.begin(), members_.end(), 0,
                                    [](int n, const auto& m) { return n + m->workers_started(); });
    return all - static_cast<int>(members_.size()) + 1;
  }
  std::string spread_status() override { return status_; }
  nlohmann::json run_family_job(const std::string& family, const std::string& name,
                                const nlohmann::json& args) override {
    return members_.front()->run_family_job(family, name, args);
  }

  result_record run(const row_job& job) override {
    const timing_options& opt = job.timing;
    if (members_.size() == 1 || std::max(opt.placements, opt.max_placements) <= 1 ||
        !job.profile_range.empty() || (spreads_ && !spreads_(job, device())))
      return members_.front()->run(job);

    prepare_all(job);
    // Each placement is a row of one placement, with the row's samples, time and timeout
    // shared out as between the placements of one process; energy is measured in the first.
    row_job one = job;
    one.timing = placement_options(opt);
    const std::size_t n = members_.size();
    std::vector<int> runs(n, 0);
    std::vector<timing_stats> parts;
    result_record row;
    const auto began = std::chrono::steady_clock::now();
    for (std::size_t i = 0;; ++i) {
      // The rows start in the workers in turn, so each worker's first placement of a row is
      // not always the same worker's.
      const std::size_t m = (first_ + i) % n;
      one.move_first = runs[m]++ > 0;
      one.timing.energy.enabled = opt.energy.enabled && i == 0;
      result_record r = members_[m]->run(one);
      if (!r.timed()) return r;  // its outcome is the row's, from whichever process it came
      parts.push_back(*r.timing);
      if (i == 0) row = std::move(r);
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
      if (placements_done(opt, combine_placements(parts, false, opt.min_interval), elapsed) ||
          interrupt_requested())
        break;
    }
    first_ = (first_ + 1) % n;
    row.timing = combine_row(opt, parts);
    return row;
  }

 private:
  // A worker makes a problem (inputs, reference) when a row of it first reaches the worker, and
  // opens a library (a plugin's first call: cuBLAS's handle and kernels) at its first row: for
  // either new to the spread, the row's placements would do it in each worker in turn. So every
  // worker does it at once, side by side, before the row's first placement runs (never while one
  // is timed). A member that fails to is left for the row to find.
  void prepare_all(const row_job& job) {
    const std::string problem = problem_key(job.variant.family, job.config);
    const std::string plugin_key = job.variant.origin == origin_kind::plugin
                                       ? job.variant.origin_path + "|" + job.variant.name
                                       : "";
    if (problem == prepared_ && (plugin_key.empty() || opened_.count(plugin_key))) return;
    if (problem != prepared_) opened_.clear();  // a plugin is run again on the new problem
    std::vector<std::future<void>> made;
    for (auto& m : members_)
      made.push_back(std::async(std::launch::async, [&m, &job] {
        try {
          m->prepare(job);
        } catch (const std::exception&) {
        }
      }));
    for (auto& f : made) f.wait();
    prepared_ = problem;
    if (!plugin_key.empty()) opened_.insert(plugin_key);
  }

  std::vector<std::unique_ptr<row_executor>> members_;
  spread_predicate spreads_;
  std::string status_;
  std::size_t first_ = 0;
  std::string prepared_;          // the problem every member made last (prepare_all)
  std::set<std::string> opened_;  // the plugins' variants run in every member on it
};

}  // namespace

std::unique_ptr<row_executor> make_spread_executor(
    std::vector<std::unique_ptr<row_executor>> members, spread_predicate spreads,
    std::string status) {
  return std::make_unique<spread>(std::move(members), std::move(spreads), std::move(status));
}

}  // namespace kl
