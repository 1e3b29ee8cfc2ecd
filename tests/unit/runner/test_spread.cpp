// A row's placements spread over several worker processes of one GPU (worker/spread_executor),
// without a GPU: fake workers that each time a row at a median of their own, so which worker
// timed which placement, whether it moved the problem first, and how the row's statistics come
// together can all be read back.
#include "record/record_json.hpp"
#include "runner/runner.hpp"
#include "shipped_families.hpp"
#include "worker/spread_executor.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace kl {
namespace {

struct placement_seen {
  int worker;
  bool move_first;
  bool energy;
  int placements;  // the job's placements: 1 for a placement of a spread row
};

struct worker_log {
  std::mutex m;
  std::vector<placement_seen> seen;
};

// Times every row at 1 ms + worker/100 ms (ten samples around that); a row named `wrong_in_N`
// gives a wrong result in worker N only.
class fake_worker final : public row_executor {
 public:
  fake_worker(int id, worker_log& log, int started = 1) : id_(id), log_(log), started_(started) {
    device_.name = "Fake GPU";
    device_.total_mem = std::size_t{80} << 30;
  }
  const cuda::device_info& device() override { return device_; }
  std::string clock_status() override { return "clock of worker " + std::to_string(id_); }
  std::string energy_status() override { return ""; }
  timing_stats launch_floor(const timing_options&) override {
    timing_stats t;
    t.median_ms = id_;
    return t;
  }
  int workers_started() const override { return started_; }
  nlohmann::json run_family_job(const std::string&, const std::string&,
                                const nlohmann::json&) override {
    return id_;
  }
  result_record run(const row_job& job) override {
    {
      std::lock_guard<std::mutex> lock(log_.m);
      log_.seen.push_back(
          {id_, job.move_first, job.timing.energy.enabled, job.timing.max_placements});
    }
    result_record r = job.record();
    if (job.variant.name == "wrong_in_" + std::to_string(id_)) {
      r.status = outcome::wrong_result;
      r.message = "expected 1, got 2 (in worker " + std::to_string(id_) + ")";
      return r;
    }
    r.status = outcome::passed;
    std::vector<double> samples;
    for (int i = 0; i < 10; ++i) samples.push_back(1.0 + id_ / 100.0 + (i - 5) * 1e-4);
    timing_stats t = summarize(samples);
    t.samples_ms = samples;
    t.placement_medians_ms = {t.median_ms};
    r.timing = t;
    if (job.timing.energy.enabled) r.energy = energy_stats{};
    return r;
  }

 private:
  int id_;
  worker_log& log_;
  int started_;
  cuda::device_info device_;
};

row_job job_named(const std::string& name, int placements, int max_placements) {
  row_job job;
  job.variant.name = name;
  job.variant.family = "reduce";
  job.block = 256;
  job.timing.placements = placements;
  job.timing.max_placements = max_placements;
  job.timing.rule = stop_rule::stdrel;
  return job;
}

std::unique_ptr<row_executor> workers(int n, worker_log& log, spread_predicate spreads = {}) {
  std::vector<std::unique_ptr<row_executor>> members;
  for (int i = 0; i < n; ++i) members.push_back(std::make_unique<fake_worker>(i, log));
  return make_spread_executor(std::move(members), std::move(spreads));
}

TEST(Spread, EachPlacementRunsInTheNextWorkerAndTheRowPoolsThemAll) {
  worker_log log;
  auto x = workers(4, log);
  row_job job = job_named("reduce5", 4, 4);
  job.timing.energy.enabled = true;
  job.timing.keep_samples = true;
  const result_record r = x->run(job);
  ASSERT_EQ(r.status, outcome::passed) << r.message;
  ASSERT_EQ(log.seen.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(log.seen[i].worker, i);
    EXPECT_FALSE(log.seen[i].move_first) << "each worker's first placement of the row";
    EXPECT_EQ(log.seen[i].placements, 1) << "a worker times one placement at a time";
    EXPECT_EQ(log.seen[i].energy, i == 0) << "energy is measured once, in the first";
  }
  ASSERT_TRUE(r.timing);
  EXPECT_EQ(r.timing->placements, 4);
  ASSERT_EQ(r.timing->placement_medians_ms.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(r.timing->placement_medians_ms[i], 1 + i / 100.0, 1e-3);
  EXPECT_EQ(r.timing->samples_ms.size(), 40u) << "every placement's samples, with --samples";
  // The workers' medians lie 1% apart: the interval comes from how far they spread.
  EXPECT_GT(r.timing->placement_spread, 0.005);
  EXPECT_TRUE(r.timing->has_ci());
  EXPECT_GT(r.timing->ci_half_width(), 0.01);
  EXPECT_TRUE(r.energy) << "the row keeps the first placement's energy";
  EXPECT_EQ(x->clock_status(), "clock of worker 0");
  EXPECT_EQ(x->launch_floor({}).median_ms, 0);
  EXPECT_EQ(x->run_family_job("f", "n", nullptr), 0);
}

// Racing: a row whose first placement lies wholly above the race's bound is not sent to the
// other workers; one that could still beat it gets every placement.
TEST(Spread, ARowRacedOutInItsFirstPlacementGoesNoFurther) {
  worker_log log;
  auto x = workers(4, log);
  row_job job = job_named("reduce5", 4, 4);
  job.timing.race_ms = 0.9;  // the fake rows lie at 1 ms and above
  const result_record r = x->run(job);
  ASSERT_EQ(r.status, outcome::passed) << r.message;
  EXPECT_EQ(log.seen.size(), 1u);
  ASSERT_TRUE(r.timing);
  EXPECT_TRUE(r.timing->raced);
  EXPECT_FALSE(r.timing->timed_out);
  EXPECT_EQ(r.timing->placements, 1);
  // The race's bound travels to the worker with the row (a worker is another process).
  EXPECT_DOUBLE_EQ(timing_options_from_json(to_json(job.timing)).race_ms, 0.9);

  log.seen.clear();
  job.timing.race_ms = 1.02;  // within the workers' spread (1.00 .. 1.03 ms)
  const result_record full = x->run(job);
  EXPECT_EQ(log.seen.size(), 4u);
  EXPECT_FALSE(full.timing->raced);
}

TEST(Spread, RowsStartInTheWorkersInTurnAndAWorkerMovesTheProblemForItsSecondPlacement) {
  worker_log log;
  auto x = workers(4, log);
  ASSERT_EQ(x->run(job_named("a", 4, 4)).status, outcome::passed);
  ASSERT_EQ(x->run(job_named("b", 6, 6)).status, outcome::passed);
  ASSERT_EQ(log.seen.size(), 10u);
  // Row b starts in worker 1, and workers 1 and 2 time it twice: moved the second time.
  const int order[] = {1, 2, 3, 0, 1, 2};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(log.seen[4 + i].worker, order[i]) << "placement " << i;
    EXPECT_EQ(log.seen[4 + i].move_first, i >= 4) << "placement " << i;
  }
}

TEST(Spread, APlacementThatFailsInOneWorkerIsTheRowsRecord) {
  worker_log log;
  auto x = workers(4, log);
  const result_record r = x->run(job_named("wrong_in_2", 4, 4));
  EXPECT_EQ(r.status, outcome::wrong_result);
  EXPECT_NE(r.message.find("in worker 2"), std::string::npos) << r.message;
  EXPECT_EQ(log.seen.size(), 3u) << "no placement after the one that failed";
}

TEST(Spread, ARowOfOnePlacementOrOneThatMayNotSpreadRunsInTheFirstWorkerAsItIs) {
  worker_log log;
  auto x = workers(3, log, [](const row_job& job, const cuda::device_info& d) {
    EXPECT_EQ(d.name, "Fake GPU");
    return job.variant.name != "huge";
  });
  ASSERT_EQ(x->run(job_named("single", 1, 1)).status, outcome::passed);
  ASSERT_EQ(x->run(job_named("huge", 4, 4)).status, outcome::passed);
  ASSERT_EQ(log.seen.size(), 2u);
  EXPECT_EQ(log.seen[0].worker, 0);
  EXPECT_EQ(log.seen[1].worker, 0);
  EXPECT_EQ(log.seen[1].placements, 4) << "the row's own placements, all in one worker";
}

TEST(Spread, RestartsAreCountedAsOneWorkersWouldBe) {
  worker_log log;
  std::vector<std::unique_ptr<row_executor>> members;
  members.push_back(std::make_unique<fake_worker>(0, log, 1));
  members.push_back(std::make_unique<fake_worker>(1, log, 3));  // restarted twice
  members.push_back(std::make_unique<fake_worker>(2, log, 1));
  auto x = make_spread_executor(std::move(members), {});
  EXPECT_EQ(x->workers_started(), 3) << "one worker and its two restarts";
}

// Through the runner's lanes: --placement-workers N starts N executors for the GPU, side by side,
// and one that cannot start leaves the placements to the others with a reason.
TEST(Spread, TheLanesStartOneWorkerPerPlacementWorkerAndSayWhenOneCannotStart) {
  family_registry families;
  test::register_shipped_families(families);
  worker_log log;
  std::atomic<int> made{0};
  run_request req;
  req.timing.placements = 4;
  req.timing.max_placements = 4;
  req.timing.placement_workers = 3;
  // The first worker starts on the caller's thread, the others side by side on threads of their
  // own: the first of those fails.
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> failed{false};
  req.executor_factory = [&](int) -> std::unique_ptr<row_executor> {
    const int i = made++;
    if (std::this_thread::get_id() != caller && !failed.exchange(true))
      throw std::runtime_error("the GPU is in exclusive-process mode");
    return std::make_unique<fake_worker>(i, log);
  };
  auto lanes = lanes_for(families, req);
  ASSERT_EQ(lanes.size(), 1u);
  auto x = lanes[0]();
  EXPECT_EQ(made.load(), 3);
  const std::string why = x->spread_status();
  EXPECT_NE(why.find("2 worker process(es) of 3 (--placement-workers)"), std::string::npos) << why;
  EXPECT_NE(why.find("exclusive-process"), std::string::npos) << why;

  // Fewer placements than workers: no more workers than placements are started.
  made = 0;
  req.timing.placements = req.timing.max_placements = 2;
  req.timing.placement_workers = 8;
  auto y = lanes_for(families, req)[0]();
  EXPECT_EQ(made.load(), 2);
  EXPECT_EQ(y->spread_status(), "");
  // One placement worker: the factory's executor as it is.
  made = 0;
  req.timing.placement_workers = 1;
  auto z = lanes_for(families, req)[0]();
  EXPECT_EQ(made.load(), 1);
}

TEST(Spread, TheWorkerCountIsKeptInTheResultsTimingOptions) {
  timing_options t;
  t.placement_workers = 4;
  EXPECT_EQ(timing_options_from_json(to_json(t)).placement_workers, 4);
  nlohmann::json without = to_json(t);
  without.erase("placement_workers");
  EXPECT_THROW(timing_options_from_json(without), std::exception) << "every field is in version 2";
}

}  // namespace
}  // namespace kl
