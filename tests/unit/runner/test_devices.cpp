// Many GPUs of one host without a GPU: the device pool with fake executors (rows spread over the
// GPUs and read back in request order, a GPU that drops out, baselines on every GPU, Ctrl-C),
// --device/--devices parsing, the GPU in each record, the baseline of a row's own GPU, and a
// tune over GPUs of two models (one search per model, each on its own GPUs).
#include "cli/options.hpp"
#include "record/record_json.hpp"
#include "registry/registry.hpp"
#include "report/table.hpp"
#include "runner/device_pool.hpp"
#include "runner/journal.hpp"
#include "runner/row_session.hpp"
#include "runner/runner.hpp"
#include "runner/tune_search.hpp"
#include "shipped_families.hpp"
#include "test_util.hpp"
#include "tune/space.hpp"
#include "tune/strategy.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

namespace kl {
namespace {

// What every fake GPU did, shared by the test and its GPUs.
struct fake_log {
  std::mutex m;
  std::map<std::string, std::vector<int>> ran;  // row name -> the GPUs that ran it
  std::set<std::thread::id> threads;
  std::vector<double> race_ms;  // each row's race bound as it ran, in the order they ran
};

// A GPU that passes every row after `delay_ms`; after `rows_before_loss` rows it is lost (every
// later run throws device_lost_error, as a worker that cannot be restarted does); a row named
// `crash` crashes (its record says so, the GPU goes on).
class fake_gpu final : public row_executor {
 public:
  fake_gpu(int ordinal, fake_log& log, int delay_ms, int rows_before_loss = -1,
           const std::string& model = "Fake GPU")
      : log_(log), delay_ms_(delay_ms), rows_before_loss_(rows_before_loss) {
    device_.ordinal = ordinal;
    device_.name = model;
    device_.uuid = "GPU-fake-" + std::to_string(ordinal);
    device_.cc_major = 9;
    device_.max_threads_per_block = 1024;
  }
  const cuda::device_info& device() override { return device_; }
  std::string clock_status() override { return ""; }
  std::string energy_status() override { return ""; }
  timing_stats launch_floor(const timing_options&) override { return {}; }
  int workers_started() const override { return 1; }
  nlohmann::json run_family_job(const std::string&, const std::string&,
                                const nlohmann::json&) override {
    return nullptr;
  }
  result_record run(const row_job& job) override {
    if (rows_before_loss_ >= 0 && runs_ >= rows_before_loss_)
      throw device_lost_error("GPU " + std::to_string(device_.ordinal) + " fell off the bus");
    ++runs_;
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
    {
      std::lock_guard<std::mutex> lock(log_.m);
      log_.ran[job.variant.name].push_back(device_.ordinal);
      log_.threads.insert(std::this_thread::get_id());
      log_.race_ms.push_back(job.timing.race_ms);
    }
    result_record r = job.record();
    if (job.variant.name == "crash") {
      r.status = outcome::crashed;
      r.message = "the worker died (signal 11) while running crash";
      return r;
    }
    r.status = outcome::passed;
    timing_stats t;
    t.median_ms = 1 + device_.ordinal;  // a GPU's own time: 1 ms on GPU 0, 2 ms on GPU 1 ...
    r.timing = t;
    return r;
  }

 private:
  fake_log& log_;
  cuda::device_info device_;
  int delay_ms_;
  int rows_before_loss_;
  int runs_ = 0;
};

row_job job_named(const std::string& name) {
  row_job j;
  j.variant.family = "reduce";
  j.variant.name = name;
  j.block = 256;
  return j;
}

// The pool over fake GPUs `ordinals`, GPU i losing itself after loss_after[i] rows (-1: never);
// GPU i is a models[i] (default "Fake GPU").
std::unique_ptr<device_pool> fake_pool(fake_log& log, const std::vector<int>& ordinals,
                                       std::vector<int> loss_after = {}, int delay_ms = 2,
                                       std::vector<std::string> models = {}) {
  loss_after.resize(ordinals.size(), -1);
  models.resize(ordinals.size(), "Fake GPU");
  std::map<int, std::pair<int, std::string>> gpu;
  for (std::size_t i = 0; i < ordinals.size(); ++i) gpu[ordinals[i]] = {loss_after[i], models[i]};
  return std::make_unique<device_pool>(ordinals, [&log, gpu, delay_ms](int ordinal) {
    const auto& [loss, model] = gpu.at(ordinal);
    return std::make_unique<fake_gpu>(ordinal, log, delay_ms + ordinal, loss, model);
  });
}

TEST(DevicePool, SpreadsRowsOverEveryGpuAndKeepsRequestOrder) {
  fake_log log;
  auto pool = fake_pool(log, {0, 1, 2});
  ASSERT_TRUE(pool->threaded());
  ASSERT_EQ(pool->devices().size(), 3u);
  std::vector<std::size_t> tickets;
  for (int i = 0; i < 60; ++i)
    tickets.push_back(pool->submit(job_named("row" + std::to_string(i))));
  for (int i = 0; i < 60; ++i) {
    const auto records = pool->take(tickets[static_cast<std::size_t>(i)]);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].variant.name, "row" + std::to_string(i));  // request order
    EXPECT_EQ(records[0].status, outcome::passed);
    ASSERT_TRUE(records[0].gpu.has_value());  // every record names its GPU
    EXPECT_EQ(records[0].gpu->uuid, "GPU-fake-" + std::to_string(records[0].gpu->ordinal));
    // The median is the GPU's own: never a mix of two GPUs.
    EXPECT_EQ(records[0].timing->median_ms, 1.0 + records[0].gpu->ordinal);
  }
  // Each row ran once, and every GPU took some: dynamically, the fastest more.
  std::map<int, int> per_gpu;
  for (const auto& [name, gpus] : log.ran) {
    EXPECT_EQ(gpus.size(), 1u) << name;
    ++per_gpu[gpus.front()];
  }
  EXPECT_EQ(log.ran.size(), 60u);
  EXPECT_EQ(per_gpu.size(), 3u);
  EXPECT_GE(per_gpu[0], per_gpu[2]);
  EXPECT_EQ(pool->rows_run(), (std::vector<std::size_t>{static_cast<std::size_t>(per_gpu[0]),
                                                        static_cast<std::size_t>(per_gpu[1]),
                                                        static_cast<std::size_t>(per_gpu[2])}));
  EXPECT_EQ(pool->workers_started(), 3);
}

TEST(DevicePool, OneGpuRunsEachRowInTheCallersThreadWhenTaken) {
  fake_log log;
  auto pool = fake_pool(log, {1});
  EXPECT_FALSE(pool->threaded());
  const auto a = pool->submit(job_named("a"));
  const auto b = pool->submit(job_named("b"));
  EXPECT_FALSE(pool->ready(a));  // nothing runs before it is asked for
  EXPECT_TRUE(log.ran.empty());
  EXPECT_EQ(pool->take(a).at(0).gpu->ordinal, 1);
  EXPECT_EQ(log.ran.size(), 1u);
  EXPECT_EQ(pool->take(b).at(0).variant.name, "b");
  ASSERT_EQ(log.threads.size(), 1u);
  EXPECT_EQ(*log.threads.begin(), std::this_thread::get_id());
  EXPECT_THROW(pool->take(a), std::logic_error);  // a ticket is taken once
}

TEST(DevicePool, AGpuThatDropsOutHasItsRowsTakenByTheOthersAndNoRowRunsTwice) {
  fake_log log;
  // GPU 1 is lost after 3 rows: the row it was about to run, and every later one, go elsewhere.
  auto pool = fake_pool(log, {0, 1}, {-1, 3});
  std::vector<std::size_t> tickets;
  for (int i = 0; i < 30; ++i)
    tickets.push_back(pool->submit(job_named("row" + std::to_string(i))));
  for (int i = 0; i < 30; ++i) {
    const auto records = pool->take(tickets[static_cast<std::size_t>(i)]);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].status, outcome::passed) << records[0].message;
    EXPECT_EQ(records[0].variant.name, "row" + std::to_string(i));
  }
  EXPECT_EQ(log.ran.size(), 30u);  // every row measured ...
  int on_1 = 0;
  for (const auto& [name, gpus] : log.ran) {
    EXPECT_EQ(gpus.size(), 1u) << name << " ran more than once";  // ... once
    on_1 += gpus.front() == 1;
  }
  EXPECT_EQ(on_1, 3);
  const auto lost = pool->lost();
  EXPECT_TRUE(lost[0].empty());
  EXPECT_NE(lost[1].find("fell off the bus"), std::string::npos);
  // Rows queued after the loss go to the GPU that is left.
  EXPECT_EQ(pool->take(pool->submit(job_named("late"))).at(0).gpu->ordinal, 0);
}

TEST(DevicePool, ACrashCostsItsRowOnlyAndTheGpuGoesOn) {
  fake_log log;
  auto pool = fake_pool(log, {0, 1});
  const auto a = pool->submit(job_named("a"));
  const auto c = pool->submit(job_named("crash"));
  std::vector<std::size_t> rest;
  for (int i = 0; i < 10; ++i) rest.push_back(pool->submit(job_named("r" + std::to_string(i))));
  EXPECT_EQ(pool->take(a).at(0).status, outcome::passed);
  EXPECT_EQ(pool->take(c).at(0).status, outcome::crashed);
  for (auto t : rest) EXPECT_EQ(pool->take(t).at(0).status, outcome::passed);
  EXPECT_EQ(log.ran["crash"].size(), 1u);  // not run again elsewhere: it was measured
  for (const auto& why : pool->lost()) EXPECT_TRUE(why.empty());
}

TEST(DevicePool, WhenEveryGpuIsLostTheRowsLeftFailWithTheReason) {
  fake_log log;
  auto pool = fake_pool(log, {0}, {2});
  std::vector<std::size_t> tickets;
  for (int i = 0; i < 5; ++i) tickets.push_back(pool->submit(job_named("row" + std::to_string(i))));
  for (int i = 0; i < 5; ++i) {
    const auto r = pool->take(tickets[static_cast<std::size_t>(i)]).at(0);
    if (i < 2) {
      EXPECT_EQ(r.status, outcome::passed);
    } else {
      EXPECT_EQ(r.status, outcome::failed);
      EXPECT_NE(r.message.find("every GPU left the run"), std::string::npos) << r.message;
      EXPECT_NE(r.message.find("fell off the bus"), std::string::npos) << r.message;
    }
  }
  EXPECT_EQ(log.ran.size(), 2u);
}

TEST(DevicePool, ABaselineRunsOnEveryGpuWithARecordForEach) {
  fake_log log;
  auto pool = fake_pool(log, {0, 1, 3});
  const auto before = pool->submit(job_named("point"));
  const auto base = pool->submit(job_named("cub"), true);
  const auto after = pool->submit(job_named("point2"));
  EXPECT_EQ(pool->take(before).size(), 1u);
  const auto records = pool->take(base);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].gpu->ordinal, 0);  // in GPU order
  EXPECT_EQ(records[1].gpu->ordinal, 1);
  EXPECT_EQ(records[2].gpu->ordinal, 3);
  EXPECT_EQ(pool->take(after).size(), 1u);
  EXPECT_EQ(log.ran["cub"].size(), 3u);
  // With one GPU, a baseline is one row.
  fake_log one_log;
  auto one = fake_pool(one_log, {0});
  EXPECT_EQ(one->take(one->submit(job_named("cub"), true)).size(), 1u);
}

TEST(DevicePool, ABaselineOnALostGpuLeavesTheOthersRecords) {
  fake_log log;
  auto pool = fake_pool(log, {0, 1}, {-1, 0});  // GPU 1 is lost at its first row
  const auto base = pool->submit(job_named("cub"), true);
  const auto records = pool->take(base);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].gpu->ordinal, 0);
}

TEST(DevicePool, CancelLetsNoQueuedRowStart) {
  fake_log log;
  auto pool = fake_pool(log, {0, 1}, {}, 20);
  std::vector<std::size_t> tickets;
  for (int i = 0; i < 20; ++i)
    tickets.push_back(pool->submit(job_named("row" + std::to_string(i))));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  pool->cancel();
  std::size_t with_record = 0;
  for (auto t : tickets) with_record += pool->take(t).size();
  EXPECT_LT(with_record, 20u);
  EXPECT_EQ(with_record, log.ran.size());  // those that started finished, and came back
  EXPECT_TRUE(pool->take(pool->submit(job_named("after"))).empty());
}

TEST(DevicePool, WithdrawnRowsThatDidNotStartNeverDo) {
  fake_log log;
  auto pool = fake_pool(log, {0, 1}, {}, 20);
  std::vector<std::size_t> keep, drop;
  for (int i = 0; i < 4; ++i) keep.push_back(pool->submit(job_named("keep" + std::to_string(i))));
  for (int i = 0; i < 10; ++i) drop.push_back(pool->submit(job_named("drop" + std::to_string(i))));
  pool->withdraw(drop);
  for (auto t : keep) EXPECT_EQ(pool->take(t).size(), 1u);
  for (auto t : drop) EXPECT_TRUE(pool->take(t).empty());
  for (const auto& [name, gpus] : log.ran) EXPECT_EQ(name.substr(0, 4), "keep");
  // The pool goes on: a row queued afterwards runs.
  EXPECT_EQ(pool->take(pool->submit(job_named("after"))).size(), 1u);
}

TEST(DevicePool, CallbacksSeeEachRowStartAndFinishOnItsGpu) {
  fake_log log;
  auto pool = fake_pool(log, {0, 1});
  std::mutex m;
  std::map<std::size_t, std::size_t> started, finished;
  pool->on_start([&](std::size_t t, std::size_t gpu) {
    std::lock_guard<std::mutex> lock(m);
    started[t] = gpu;
  });
  pool->on_finish([&](std::size_t t, std::size_t gpu, const result_record& r) {
    std::lock_guard<std::mutex> lock(m);
    EXPECT_EQ(r.gpu->ordinal, static_cast<int>(gpu));
    finished[t] = gpu;
  });
  std::vector<std::size_t> tickets;
  for (int i = 0; i < 10; ++i)
    tickets.push_back(pool->submit(job_named("row" + std::to_string(i))));
  for (auto t : tickets) pool->take(t);
  EXPECT_EQ(started, finished);
  EXPECT_EQ(started.size(), 10u);
}

TEST(DevicePool, AGpuThatCannotStartNamesItself) {
  fake_log log;
  try {
    device_pool pool({0, 1}, [&](int ordinal) -> std::unique_ptr<row_executor> {
      if (ordinal == 1) throw std::runtime_error("the worker could not start: out of memory");
      return std::make_unique<fake_gpu>(ordinal, log, 1);
    });
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("GPU 1: the worker could not start"), std::string::npos)
        << e.what();
  }
}

// --device N, --devices all|0,2,3.
// A tune over GPUs of two models searches each apart: a row for one model runs on that model's
// GPUs only, a baseline for it on each of them.
TEST(DevicePool, ARowForOneModelRunsOnlyOnThatModelsGpus) {
  fake_log log;
  auto pool = fake_pool(log, {0, 1, 2}, {}, 2, {"Model A", "Model B", "Model A"});
  std::vector<std::size_t> a, b, any;
  for (int i = 0; i < 12; ++i) {
    a.push_back(pool->submit(job_named("a" + std::to_string(i)), false, "Model A"));
    b.push_back(pool->submit(job_named("b" + std::to_string(i)), false, "Model B"));
    any.push_back(pool->submit(job_named("any" + std::to_string(i))));
  }
  const auto base = pool->submit(job_named("cub"), true, "Model A");
  for (auto t : a) EXPECT_NE(pool->take(t).at(0).gpu->ordinal, 1);
  for (auto t : b) EXPECT_EQ(pool->take(t).at(0).gpu->ordinal, 1);
  for (auto t : any) EXPECT_EQ(pool->take(t).at(0).status, outcome::passed);
  const auto records = pool->take(base);
  ASSERT_EQ(records.size(), 2u);  // on GPUs 0 and 2, not on the Model B
  EXPECT_EQ(records[0].gpu->ordinal, 0);
  EXPECT_EQ(records[1].gpu->ordinal, 2);
  // Model A's rows were shared by its two GPUs.
  std::set<int> a_gpus;
  for (int i = 0; i < 12; ++i) a_gpus.insert(log.ran["a" + std::to_string(i)].at(0));
  EXPECT_EQ(a_gpus, (std::set<int>{0, 2}));
  // A model the run does not have: the row fails at once, saying so.
  const auto none = pool->take(pool->submit(job_named("c"), false, "Model C")).at(0);
  EXPECT_EQ(none.status, outcome::failed);
  EXPECT_NE(none.message.find("no GPU of the run is a Model C"), std::string::npos) << none.message;
}

TEST(DevicePool, WhenAModelsLastGpuLeavesItsRowsFailAndTheOtherModelGoesOn) {
  fake_log log;
  // GPU 1, the only Model B, falls off the bus after 2 rows.
  auto pool = fake_pool(log, {0, 1}, {-1, 2}, 2, {"Model A", "Model B"});
  std::vector<std::size_t> a, b;
  for (int i = 0; i < 6; ++i) {
    b.push_back(pool->submit(job_named("b" + std::to_string(i)), false, "Model B"));
    a.push_back(pool->submit(job_named("a" + std::to_string(i)), false, "Model A"));
  }
  int passed_b = 0;
  for (auto t : b) {
    const auto r = pool->take(t).at(0);
    if (r.status == outcome::passed) {
      ++passed_b;
      continue;
    }
    EXPECT_EQ(r.status, outcome::failed);
    EXPECT_NE(r.message.find("every Model B left the run"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("fell off the bus"), std::string::npos) << r.message;
  }
  EXPECT_EQ(passed_b, 2);
  for (auto t : a) {
    const auto r = pool->take(t).at(0);
    EXPECT_EQ(r.status, outcome::passed) << r.message;
    EXPECT_EQ(r.gpu->ordinal, 0);
  }
  // Later rows for Model B fail at once with the reason; Model A's still run.
  const auto late = pool->take(pool->submit(job_named("b9"), false, "Model B")).at(0);
  EXPECT_NE(late.message.find("every Model B left the run"), std::string::npos) << late.message;
  EXPECT_EQ(pool->take(pool->submit(job_named("a9"), false, "Model A")).at(0).status,
            outcome::passed);
}

TEST(DeviceOptions, ParseAndResolve) {
  EXPECT_EQ(parse_devices("2", "--device").ordinals, std::vector<int>{2});
  EXPECT_TRUE(parse_devices("all", "--devices").all);
  EXPECT_EQ(parse_devices("0,2,3", "--devices").ordinals, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(resolve_devices(parse_devices("all", "--devices"), 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(resolve_devices(device_selection{}, 8), std::vector<int>{0});  // nothing given: GPU 0
  EXPECT_EQ(resolve_devices(parse_devices("3,1", "--devices"), 4), (std::vector<int>{3, 1}));
}

std::string usage_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const usage_error& e) {
    return e.what();
  }
  return "(no usage_error)";
}

TEST(DeviceOptions, BadValuesAreUsageErrorsNamingTheOption) {
  EXPECT_NE(usage_message([] { parse_devices("x", "--device"); }).find("--device 'x'"),
            std::string::npos);
  EXPECT_NE(usage_message([] { parse_devices("all", "--device"); }).find("--device"),
            std::string::npos);
  EXPECT_NE(usage_message([] { parse_devices("0,1", "--device"); }).find("--devices takes a list"),
            std::string::npos);
  EXPECT_NE(usage_message([] { parse_devices("0,,1", "--devices"); }).find("--devices '0,,1'"),
            std::string::npos);
  EXPECT_NE(usage_message([] { parse_devices("-1", "--devices"); }).find("not 'all' or GPU"),
            std::string::npos);
  EXPECT_NE(usage_message([] { parse_devices("1,1", "--devices"); }).find("named twice"),
            std::string::npos);
  const std::string none =
      usage_message([] { resolve_devices(parse_devices("4", "--device"), 2); });
  EXPECT_NE(none.find("--device 4: no such GPU"), std::string::npos) << none;
  EXPECT_NE(none.find("this machine has 2 GPUs (ordinals 0 to 1)"), std::string::npos) << none;
  const std::string one =
      usage_message([] { resolve_devices(parse_devices("0,1", "--devices"), 1); });
  EXPECT_NE(one.find("--devices 1: no such GPU; this machine has 1 GPU"), std::string::npos) << one;
}

TEST(DeviceOptions, TheCommandLineTakesThemWhereRowsRun) {
  const default_paths paths;
  auto parse = [&](std::vector<const char*> args) {
    args.insert(args.begin(), "kernlab");
    return parse_command_line(static_cast<int>(args.size()), args.data(), paths);
  };
  EXPECT_EQ(parse({"--device", "1"}).devices.ordinals, std::vector<int>{1});
  EXPECT_TRUE(parse({"--devices", "all"}).devices.all);
  EXPECT_TRUE(parse({"tune", "--devices", "0,1"}).devices.many());
  EXPECT_FALSE(parse({}).devices.given());
  EXPECT_NE(usage_message([&] {
              parse({"--device", "0", "--devices", "1"});
            }).find("give one"),
            std::string::npos);
  EXPECT_NE(usage_message([&] {
              parse({"--devices", "0,1", "--in-process"});
            }).find("--in-process runs rows in kernlab itself"),
            std::string::npos);
  EXPECT_NE(usage_message([&] {
              parse({"--devices", "all", "--compile-only"});
            }).find("--devices does not apply to --compile-only"),
            std::string::npos);
}

// The GPU in a record, through its JSON (the worker's reply, the journal, the results file).
TEST(DeviceRecords, TheGpuTravelsWithTheRecord) {
  result_record r = job_named("reduce5").record();
  r.status = outcome::passed;
  r.gpu = cuda::gpu_identity{3, "GPU-1234", "NVIDIA H200", 1980000, 3201000};
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j.at("gpu").at("ordinal"), 3);
  EXPECT_EQ(j.at("gpu").at("uuid"), "GPU-1234");
  EXPECT_EQ(j.at("gpu").at("max_sm_clock_mhz"), 1980);
  const result_record back = record_from_json(j);
  ASSERT_TRUE(back.gpu.has_value());
  EXPECT_EQ(back.gpu->ordinal, 3);
  EXPECT_EQ(back.gpu->name, "NVIDIA H200");
  EXPECT_EQ(back.gpu->mem_clock_khz, 3201000);
  // A record that reached no GPU: null, read as none; without the key it is refused.
  nlohmann::json none = j;
  none["gpu"] = nullptr;
  EXPECT_FALSE(record_from_json(none).gpu.has_value());
  none.erase("gpu");
  EXPECT_THROW(record_from_json(none), std::exception);
}

// Each row against the baseline measured on its own GPU.
TEST(DeviceRecords, ARowsBaselineIsTheOneOfItsOwnGpu) {
  auto row = [](const std::string& name, bool baseline, int gpu, double ms) {
    result_record r = job_named(name).record();
    r.variant.is_baseline = baseline;
    r.status = outcome::passed;
    timing_stats t;
    t.median_ms = ms;
    r.timing = t;
    r.gpu = cuda::gpu_identity{gpu, "GPU-" + std::to_string(gpu), "Fake GPU", 0, 0};
    return r;
  };
  const std::vector<result_record> group = {row("cub", true, 0, 1.0), row("cub", true, 1, 2.0),
                                            row("reduce5", false, 1, 4.0)};
  EXPECT_EQ(find_baseline_on(group, "", "GPU-0")->timing->median_ms, 1.0);
  EXPECT_EQ(find_baseline_on(group, "", "GPU-1")->timing->median_ms, 2.0);
  EXPECT_EQ(find_baseline_on(group, "", "GPU-7"), nullptr);
  EXPECT_EQ(find_baseline_on(group, "reduce5", "GPU-1")->variant.name, "reduce5");
  // The table: a gpu column, and reduce5's ratio against GPU 1's cub (2 / 4), not GPU 0's.
  cuda::device_info d;
  d.name = "Fake GPU";
  d.mem_clock_khz = 1000000;
  d.bus_width_bits = 1024;
  d.l2_bytes = 1 << 20;
  std::ostringstream os;
  print_group(os, group, d, table_options{});
  EXPECT_NE(os.str().find("gpu"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("0.50x"), std::string::npos) << os.str();
  EXPECT_EQ(os.str().find("0.25x"), std::string::npos) << os.str();
}

// The sweep itself (runner) over fake GPUs: the shipped reduce kernels, really compiled, with
// reduce5 as the --baseline, at two blocks and two dtypes.
struct fake_sweep {
  family_registry fams;
  std::unique_ptr<registry> reg;
  fake_log log;
  std::map<int, std::string> models;  // GPU -> its model; "Fake GPU" when not given
  test::temp_dir dir{"devices_sweep"};
  std::vector<std::string> groups;  // each on_group call: its dtype and rows

  fake_sweep() {
    test::register_shipped_families(fams);
    reg = std::make_unique<registry>(fams);
    reg->add_source_dir(test::kernels_dir());
  }
  run_request request(const std::vector<int>& devices, std::vector<int> loss_after = {}) {
    run_request r;
    r.variants = reg->select({"reduce5", "reduce6", "reduce_single_pass"}, "reduce");
    r.blocks = {128, 256};
    r.dtypes = {"int32", "float32"};
    r.ops = {"sum"};
    r.axes = {axis_choice::sizes({1000})};
    r.include_dirs = test::shipped_include_dirs();
    r.baseline = "reduce5";
    r.devices = devices;
    r.journal_path = dir.str() + "/journal.log";
    loss_after.resize(devices.size(), -1);
    std::map<int, int> loss;
    for (std::size_t i = 0; i < devices.size(); ++i) loss[devices[i]] = loss_after[i];
    r.executor_factory = [this, loss](int ordinal) {
      const auto m = models.find(ordinal);
      return std::make_unique<fake_gpu>(ordinal, log, 1 + ordinal, loss.at(ordinal),
                                        m == models.end() ? "Fake GPU" : m->second);
    };
    return r;
  }
  sweep_result run(const run_request& r) {
    groups.clear();
    return runner(fams, r).run(
        [&](const std::vector<result_record>& g, const cuda::device_info&, const sweep_result&) {
          std::string text = g.empty() ? "" : g.front().config.dtype + ":";
          for (const auto& x : g) text += " " + x.variant.name + "/" + std::to_string(x.block);
          groups.push_back(text);
        });
  }
};

// A row's name in a sweep: variant, block, dtype.
std::string row_name(const result_record& r) {
  return r.variant.name + "/" + std::to_string(r.block) + "/" + r.config.dtype;
}

TEST(DeviceSweep, TwoGpusKeepTheOneGpuOrderAndMeasureTheBaselineOnEach) {
  fake_sweep f;
  const sweep_result one = f.run(f.request({0}));
  const auto one_groups = f.groups;
  ASSERT_EQ(one.results.size(), 12u);  // 3 variants x 2 blocks x 2 dtypes
  for (const auto& r : one.results) EXPECT_EQ(r.status, outcome::passed) << r.message;
  f.log.ran.clear();
  const sweep_result two = f.run(f.request({0, 1}));
  ASSERT_EQ(two.devices.size(), 2u);
  EXPECT_EQ(two.workers_started, 2);
  // The same rows in the same order, reduce5's (the baseline) once per GPU, side by side.
  std::vector<std::string> expected;
  for (const auto& r : one.results) {
    expected.push_back(row_name(r));
    if (r.variant.name == "reduce5") expected.push_back(row_name(r));
  }
  std::vector<std::string> got;
  std::set<int> used;
  for (const auto& r : two.results) {
    got.push_back(row_name(r));
    ASSERT_TRUE(r.gpu.has_value()) << row_name(r);
    used.insert(r.gpu->ordinal);
    EXPECT_EQ(r.status, outcome::passed) << r.message;
  }
  EXPECT_EQ(got, expected);
  EXPECT_EQ(used, (std::set<int>{0, 1}));
  for (std::size_t i = 0; i + 1 < two.results.size(); ++i)
    if (two.results[i].variant.name == "reduce5") {
      EXPECT_EQ(two.results[i].gpu->ordinal, 0);
      EXPECT_EQ(two.results[i + 1].gpu->ordinal, 1);
      ++i;
    }
  // One group per dtype, in order, as with one GPU (each baseline row twice).
  ASSERT_EQ(f.groups.size(), one_groups.size());
  EXPECT_EQ(f.groups.front().substr(0, 6), "int32:");
  // Every row but the baseline ran once (2 blocks x 2 dtypes); the baseline once on each GPU.
  for (const auto& [name, gpus] : f.log.ran)
    EXPECT_EQ(gpus.size(), name == "reduce5" ? 8u : 4u) << name;
  // The journal: every row that ran finished, none left in flight.
  const journal::state j = journal::read(f.dir.str() + "/journal.log");
  EXPECT_TRUE(j.in_flight.empty());
  EXPECT_EQ(j.done.size(), 12u);
}

// --plan lists the rows the runner runs, in its order: the keys of a sweep's records.
TEST(DeviceSweep, ThePlanIsTheSweepsRowsInOrder) {
  fake_sweep f;
  run_request req = f.request({0});
  req.variants = f.reg->select({"reduce5", "reduce_single_pass", "scan.blelloch"}, "");
  req.axes = {axis_choice::sizes({1, 1000})};
  req.blocks = {128, 1024};
  const sweep_result done = f.run(req);
  std::vector<std::string> ran, planned;
  for (const auto& r : done.results)
    ran.push_back(configuration_key(r.variant.qualified_name(), r.block, r.config));
  for (const auto& row : plan_rows(f.fams, req)) planned.push_back(row.key());
  EXPECT_EQ(planned, ran);
  EXPECT_EQ(planned.size(), 3u * 2 * 2 * 2);  // variants x dtypes x sizes x blocks
}

TEST(DeviceSweep, AGpuLostMidSweepLeavesEveryRowMeasuredOnce) {
  fake_sweep f;
  const sweep_result r = f.run(f.request({0, 1}, {-1, 2}));  // GPU 1 goes after 2 rows
  std::map<std::string, int> seen;
  for (const auto& x : r.results) {
    EXPECT_EQ(x.status, outcome::passed) << row_name(x) << ": " << x.message;
    ++seen[row_name(x) + (x.variant.name == "reduce5" ? "@" + std::to_string(x.gpu->ordinal) : "")];
  }
  for (const auto& [name, n] : seen) EXPECT_EQ(n, 1) << name;
  // 8 rows of reduce6 and reduce_single_pass, and reduce5's: 4 on GPU 0, those GPU 1 ran first.
  EXPECT_GE(r.results.size(), 12u);
  bool warned = false;
  for (const auto& w : r.warnings)
    warned = warned || w.find("GPU 1 left the run") != std::string::npos;
  EXPECT_TRUE(warned);
}

// kernlab tune's session over fake GPUs: a batch spread over both, baselines on each.
TEST(DeviceSweep, ARowSessionSpreadsABatchAndRunsBaselinesEverywhere) {
  fake_sweep f;
  row_session session(f.fams, f.request({0, 1}));
  ASSERT_EQ(session.devices().size(), 2u);
  const auto variants = f.reg->select({"reduce5", "reduce6", "reduce_single_pass"}, "reduce");
  std::vector<row_request> rows;
  problem_config c{"int32", "sum", "exact", 0, {{"N", std::uint64_t{1000}}}};
  for (const auto* e : variants)
    for (unsigned b : {128u, 256u}) rows.push_back({e, b, c, {}, false});
  rows.push_back({variants.front(), 256, c, {}, true});  // a baseline: on every GPU
  std::vector<std::size_t> order;
  const auto records =
      session.run(rows, [&](std::size_t i, const result_record&) { order.push_back(i); });
  ASSERT_EQ(records.size(), rows.size() + 1);
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 6}));
  for (std::size_t i = 0; i < rows.size() - 1; ++i) {
    EXPECT_EQ(records[i].variant.name, rows[i].entry->descriptor.name);
    EXPECT_EQ(records[i].block, rows[i].block);
  }
  EXPECT_EQ(records[6].gpu->ordinal, 0);
  EXPECT_EQ(records[7].gpu->ordinal, 1);
  const auto per = session.rows_per_device();
  EXPECT_EQ(per[0] + per[1], 8u);
  EXPECT_GE(per[0], 1u);
  EXPECT_GE(per[1], 1u);
}

// The tune's overlap: a batch queued before the last one is read back.
TEST(DeviceSweep, ABatchSubmittedAheadRunsWhileTheLastIsReadBack) {
  fake_sweep f;
  const auto variants = f.reg->select({"reduce5", "reduce6", "reduce_single_pass"}, "reduce");
  problem_config c{"int32", "sum", "exact", 0, {{"N", std::uint64_t{1000}}}};
  std::vector<row_request> first, second;
  for (const auto* e : variants) {
    first.push_back({e, 128, c, {}, false});
    second.push_back({e, 256, c, {}, false});
  }
  {
    row_session two(f.fams, f.request({0, 1}));
    const auto a = two.submit(first);
    const auto b = two.submit(second);
    std::vector<unsigned> blocks;
    const auto ra =
        two.collect(a, [&](std::size_t, const result_record& r) { blocks.push_back(r.block); });
    const auto rb =
        two.collect(b, [&](std::size_t, const result_record& r) { blocks.push_back(r.block); });
    EXPECT_EQ(blocks, (std::vector<unsigned>{128, 128, 128, 256, 256, 256}));
    EXPECT_THROW(two.collect(a), std::logic_error);
  }
  // One GPU: a batch discarded before it is collected never runs.
  f.log.ran.clear();
  row_session one(f.fams, f.request({0}));
  const auto a = one.submit(first);
  const auto b = one.submit(second);
  EXPECT_EQ(one.collect(a).size(), 3u);
  one.discard(b);
  std::size_t runs = 0;
  for (const auto& [name, gpus] : f.log.ran) runs += gpus.size();
  EXPECT_EQ(runs, 3u);
}

// A tune's row races against its bound as it is when the row starts, not as it was when the row
// was queued (the lower of the two): with one GPU a batch's rows run one after another, and a
// bound lowered as a row comes back holds for the rows after it. On two GPUs (where the rows are
// handed to the GPUs as they are queued) the GPU reads it too. A row without a live bound keeps
// its own.
TEST(DeviceSweep, ATunesRowRacesAgainstTheBoundWhenItStarts) {
  fake_sweep f;
  const auto variants = f.reg->select({"reduce5", "reduce6", "reduce_single_pass"}, "reduce");
  problem_config c{"int32", "sum", "exact", 0, {{"N", std::uint64_t{1000}}}};
  const auto live = std::make_shared<std::atomic<double>>(0.0);
  std::vector<row_request> rows;
  for (const auto* e : variants) {
    row_request r{e, 128, c, {}};
    r.timing.race_ms = 9;
    r.race_live = live;
    rows.push_back(r);
  }
  {
    row_session one(f.fams, f.request({0}));
    one.collect(one.submit(rows),
                [&](std::size_t k, const result_record&) { live->store(k == 0 ? 5.0 : 20.0); });
    EXPECT_EQ(f.log.race_ms, (std::vector<double>{9, 5, 9}));
  }
  f.log.race_ms.clear();
  live->store(3);
  row_session two(f.fams, f.request({0, 1}));
  two.run(rows);
  EXPECT_EQ(f.log.race_ms, (std::vector<double>{3, 3, 3}));
  f.log.race_ms.clear();
  for (auto& r : rows) r.race_live = nullptr;
  two.run(rows);
  EXPECT_EQ(f.log.race_ms, (std::vector<double>{9, 9, 9}));
}

// A tune's rows answered without a GPU: point k of the space times at 1 + k/100 ms (the
// distribution-free interval of ten samples within +-0.05%), and a row under a race whose
// interval lies above the race's bound comes back raced out, as the workers do. Each row races
// against the bound it was queued with or the live one when it starts (collect()), the lower,
// as a session's GPUs take it.
struct synthetic_rows {
  const tune::tuning_space& space;
  std::vector<std::vector<row_request>> batches;  // as submitted
  std::vector<double> queued_bounds;              // every row's race bound when queued, in order
  std::vector<double> bounds;                     // ... and when it started
  cuda::device_info device;
  row_source source() {
    device.name = "Fake GPU";
    row_source out;
    out.device = &device;
    out.submit = [this](const std::vector<row_request>& rows) {
      batches.push_back(rows);
      for (const auto& r : rows) queued_bounds.push_back(r.timing.race_ms);
      return batches.size() - 1;
    };
    out.collect = [this](std::size_t id, const auto& done) {
      for (std::size_t k = 0; k < batches.at(id).size(); ++k) {
        row_request row = batches[id][k];
        row.timing.race_ms = race_bound_now(row.timing.race_ms, row.race_live);
        bounds.push_back(row.timing.race_ms);
        done(k, answer(row));
      }
    };
    out.discard = [](std::size_t) {};
    return out;
  }
  result_record answer(const row_request& row) const {
    std::size_t point = 0;
    while (space.candidates.at(point).entry != row.entry ||
           space.candidates[point].block != row.block)
      ++point;
    std::vector<double> samples;
    for (int i = 0; i < 10; ++i) samples.push_back(1 + point / 100.0 + (i - 5) * 1e-4);
    timing_stats t = summarize(samples);
    t.raced = raced_out(row.timing, t);
    result_record r;
    r.variant = row.entry->descriptor;
    r.block = row.block;
    r.config = row.config;
    r.status = outcome::passed;
    r.timing = t;
    return r;
  }
};

// Racing (--race): a point whose interval lies wholly above the best so far's by the margin is
// raced out; the best is one timed in full, the same as without the race.
TEST(DeviceTune, RacingStopsThePointsThatCannotWinAndKeepsTheBest) {
  fake_sweep f;
  const auto spaces =
      tune::make_spaces(f.reg->select({"reduce_tunable"}, "reduce"), {128, 256, 512, 1024}, 1024);
  ASSERT_EQ(spaces.size(), 1u);
  ASSERT_GE(spaces[0].candidates.size(), 100u);
  test::temp_dir dir("racing");
  const auto tune_with = [&](double margin, tune::objective goal, synthetic_rows& rows,
                             tune::tuning_store& store) {
    tune::tune_outcome t;
    t.space = &spaces[0];
    t.config = problem_config{"int32", "sum", "exact", 0, {{"N", std::uint64_t{1000}}}};
    t.budget = 64;
    t.goal = goal;
    tune::strategy_options so;
    so.seed = 3;
    so.budget = t.budget;
    auto strategy = tune::make_strategy("random", spaces[0].space, so);
    search_settings settings;
    settings.compile_jobs = 1;
    settings.race_margin = margin;
    tune_search(t, *strategy, settings, rows.source(), &store, nlohmann::json::object(), nullptr)
        .run();
    return t;
  };

  synthetic_rows raced{spaces[0], {}, {}, {}, {}}, full{spaces[0], {}, {}, {}, {}},
      energy{spaces[0], {}, {}, {}, {}};
  tune::tuning_store store(dir.path() / "raced.jsonl"), store_full(dir.path() / "full.jsonl"),
      store_energy(dir.path() / "energy.jsonl");
  const tune::tune_outcome with = tune_with(0.03, tune::objective::time, raced, store);
  const tune::tune_outcome without = tune_with(0, tune::objective::time, full, store_full);
  ASSERT_EQ(with.evaluations.size(), 64u);
  ASSERT_NE(with.best(), nullptr);
  ASSERT_NE(without.best(), nullptr);
  EXPECT_EQ(with.best()->point, without.best()->point) << "the same seed, the same best";
  EXPECT_FALSE(with.best()->raced());
  EXPECT_EQ(without.raced(), 0u);
  for (double b : full.bounds) EXPECT_EQ(b, 0) << "--race off: every row timed in full";
  // The first row races against nothing; every later one against the best come back before it
  // started, 3% above its interval's top, so that every raced point is more than 3% slower than
  // the final best. The first two batches were queued before any row came back (the second
  // proposed ahead), so they race only by the bound read as each row starts.
  ASSERT_EQ(raced.bounds.size(), 64u);
  EXPECT_EQ(raced.bounds.front(), 0);
  for (std::size_t k = 1; k < raced.bounds.size(); ++k) {
    EXPECT_GT(raced.bounds[k], 0) << "row " << k;
    EXPECT_LE(raced.bounds[k], raced.bounds[k - 1] > 0 ? raced.bounds[k - 1] : 1e9)
        << "row " << k << ": the bound only tightens";
  }
  const std::size_t batch = raced.batches.front().size();
  ASSERT_GE(raced.batches.size(), 3u);
  for (std::size_t k = 0; k < 2 * batch; ++k)
    EXPECT_EQ(raced.queued_bounds[k], 0) << "row " << k << " was queued before any came back";
  std::size_t early = 0;  // raced out in the first two batches
  for (std::size_t k = 0; k < 2 * batch; ++k) early += with.evaluations[k].raced() ? 1 : 0;
  EXPECT_GT(early, batch) << "rows queued before the best was known race against it";
  EXPECT_GT(with.raced(), 40u) << "most random points are far from the best";
  const double best = with.best()->record.timing->median_ms;
  for (const auto& e : with.evaluations)
    if (e.raced()) {
      EXPECT_GT(e.record.timing->median_ms, best * 1.03);
      EXPECT_NE(store.find(store_key(*spaces[0].candidates[e.point].entry,
                                     spaces[0].candidates[e.point].block, with.config, raced.device,
                                     tune::fidelity::full, false) +
                           "|raced"),
                nullptr)
          << "stored apart: a tune without a race wants its full figure";
    }
  // Under the energy objective nothing races: a time bound says nothing of energy.
  tune_with(0.03, tune::objective::energy, energy, store_energy);
  for (double b : energy.bounds) EXPECT_EQ(b, 0);
}

// A tune over GPUs of two models: one search per model, side by side, each on its own GPUs
// (the shipped reduce_unrolling, really compiled, on fake GPUs), each with its own best point
// and its own baselines.
TEST(DeviceTune, EachModelIsSearchedApartOnItsOwnGpus) {
  fake_sweep f;
  f.models = {{0, "Model A"}, {1, "Model B"}, {2, "Model A"}};
  run_request req = f.request({0, 1, 2});
  req.variants = f.reg->select({"reduce_unrolling"}, "reduce");
  req.dtypes = {"int32"};
  std::vector<const registry_entry*> sources;
  for (const auto* e : req.variants)
    if (e->descriptor.origin == origin_kind::source) sources.push_back(e);
  const auto spaces = tune::make_spaces(sources, req.blocks, 1024);
  ASSERT_EQ(spaces.size(), 1u);
  ASSERT_EQ(spaces[0].candidates.size(), 8u);  // UNROLL(4) x BLOCK(2)
  row_session session(f.fams, req);
  ASSERT_EQ(session.devices().size(), 3u);

  const std::vector<std::string> models = {"Model A", "Model B"};
  std::vector<tune::tune_outcome> outcomes(2);
  std::vector<std::unique_ptr<tune::strategy>> strategies;
  std::vector<std::unique_ptr<tune_search>> searches;
  std::vector<row_source> sources_of;
  for (std::size_t m = 0; m < 2; ++m) sources_of.push_back(session_rows(session, models[m]));
  EXPECT_EQ(sources_of[0].gpus, 2u);
  EXPECT_EQ(sources_of[1].gpus, 1u);
  EXPECT_EQ(sources_of[1].device->name, "Model B");
  search_settings settings;
  settings.compile_jobs = 1;
  for (std::size_t m = 0; m < 2; ++m) {
    tune::tune_outcome& t = outcomes[m];
    t.space = &spaces[0];
    t.config = problem_config{"int32", "sum", "exact", 0, {{"N", std::uint64_t{1000}}}};
    t.model = models[m];
    t.budget = 8;
    tune::strategy_options so;
    so.seed = 7;
    so.budget = t.budget;
    strategies.push_back(tune::make_strategy("random", spaces[0].space, so));
    searches.push_back(std::make_unique<tune_search>(t, *strategies[m], settings, sources_of[m],
                                                     nullptr, nlohmann::json::object(), nullptr,
                                                     models[m]));
  }
  search_side_by_side({searches[0].get(), searches[1].get()});
  for (std::size_t m = 0; m < 2; ++m) {
    const tune::tune_outcome& t = outcomes[m];
    EXPECT_EQ(t.stopped_by, "the space's size");
    ASSERT_EQ(t.evaluations.size(), 8u) << models[m];
    std::set<std::size_t> points;
    for (const auto& e : t.evaluations) {
      points.insert(e.point);
      EXPECT_EQ(e.record.status, outcome::passed) << e.record.message;
      ASSERT_TRUE(e.record.gpu.has_value());
      EXPECT_EQ(e.record.gpu->name, models[m]);  // measured on its own model only
    }
    EXPECT_EQ(points.size(), 8u) << models[m];  // every point once per model
    ASSERT_NE(t.best(), nullptr);
  }
  // Model B's only GPU is GPU 1 (2 ms a row on these fakes), Model A's best is on GPU 0 (1 ms).
  EXPECT_EQ(outcomes[0].best()->record.timing->median_ms, 1.0);
  EXPECT_EQ(outcomes[1].best()->record.timing->median_ms, 2.0);
  const auto per = session.rows_per_device();
  EXPECT_EQ(per[1], 8u);
  EXPECT_EQ(per[0] + per[2], 8u);
  // A model's baselines: on each of its GPUs, none on the other model's.
  row_request base{f.reg->select({"reduce5"}, "reduce").front(), 256, outcomes[0].config, {}, true};
  std::vector<int> gpus;
  sources_of[0].run({base},
                    [&](std::size_t, const result_record& r) { gpus.push_back(r.gpu->ordinal); });
  EXPECT_EQ(gpus, (std::vector<int>{0, 2}));
}

}  // namespace
}  // namespace kl
