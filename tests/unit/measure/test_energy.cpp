// --energy without a GPU: NVML's loader where the library is missing, the UUID NVML is asked
// for, the energy arithmetic on traces and on a fake meter, the options, and the record's JSON.
#include "cli/options.hpp"
#include "cuda/device.hpp"
#include "measure/energy.hpp"
#include "measure/nvml.hpp"
#include "record/record_json.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

namespace kl {
namespace {

TEST(Nvml, AMissingLibrarySaysWhyInDlopensWords) {
  const nvml_library nvml({"/nonexistent/libnvidia-ml.so.1"});
  EXPECT_FALSE(nvml.available());
  EXPECT_NE(nvml.why_unavailable().find("/nonexistent/libnvidia-ml.so.1"), std::string::npos)
      << nvml.why_unavailable();
  EXPECT_NE(nvml.why_unavailable().find("cannot open shared object file"), std::string::npos)
      << nvml.why_unavailable();
  // Every reader built on it says the same, and reads nothing.
  nvml_power_meter meter(nvml, "GPU-00000000-0000-0000-0000-000000000000");
  EXPECT_EQ(meter.why_unavailable(), "NVML not available: " + nvml.why_unavailable());
  EXPECT_FALSE(meter.energy_mj());
  EXPECT_FALSE(meter.power_w());
  const clock_monitor clocks(nvml, "GPU-00000000-0000-0000-0000-000000000000");
  EXPECT_FALSE(clocks.available());
  EXPECT_EQ(clocks.sm_clock_mhz(), 0);
}

TEST(Nvml, TheFirstNameMissingTheNextIsTriedAndALibraryWithoutNvmlIsRefused) {
  // libc loads, but is no NVML: the first name's error is not the story then.
  const nvml_library nvml({"/nonexistent/libnvidia-ml.so.1", "libc.so.6"});
  EXPECT_FALSE(nvml.available());
  EXPECT_NE(nvml.why_unavailable().find("lacks nvmlInit_v2"), std::string::npos)
      << nvml.why_unavailable();
}

TEST(Nvml, TheUuidIsWrittenAsNvmlWantsIt) {
  unsigned char bytes[16];
  for (int i = 0; i < 16; ++i) bytes[i] = static_cast<unsigned char>(i * 17);
  EXPECT_EQ(cuda::uuid_text(bytes), "GPU-00112233-4455-6677-8899-aabbccddeeff");
}

// A counter at `watts`, updated every `step_s` from `start_s` on and stuck before, read every
// `poll_s` over [0, end_s); power samples every 5 ms at `sample_watts`.
energy_trace synthetic(double watts, double step_s, double start_s, double poll_s, double end_s,
                       double sample_watts) {
  energy_trace t;
  const std::uint64_t base = 123456789;  // millijoules since the driver loaded
  for (double x = 0; x < end_s; x += poll_s) {
    const double counted = x < start_s ? 0 : std::floor((x - start_s) / step_s) * step_s;
    t.counter.push_back(
        {x, base + static_cast<std::uint64_t>(std::llround(counted * watts * 1e3))});
  }
  if (sample_watts > 0)
    for (double x = 0; x < end_s; x += 0.005) t.power.push_back({x, sample_watts});
  t.busy_from = 0.05;
  t.busy_until = end_s - 0.01;
  t.operations = 20000;
  t.gpu_seconds = 1.0;  // 50 us per operation
  return t;
}

TEST(Energy, TheCounterBetweenItsUpdatesGivesWattsAndJoulesPerOperation) {
  const energy_stats s = energy_from_trace(synthetic(300, 0.02, 0, 0.001, 0.6, 250));
  ASSERT_TRUE(s.measured()) << s.error;
  EXPECT_EQ(s.method, "counter");
  // Between updates, not readings: off by at most half a polling interval at each end.
  EXPECT_NEAR(s.watts, 300, 300 * 0.005);
  EXPECT_NEAR(s.joules_per_op, 300 * 50e-6, 300 * 50e-6 * 0.005);
  EXPECT_DOUBLE_EQ(s.us_per_op, 50);
  EXPECT_GE(s.counter_updates, 25u);
  EXPECT_NEAR(s.sampled_watts, 250, 1e-9);  // the second source, reported beside
  EXPECT_GT(s.power_samples, 100u);
  EXPECT_TRUE(s.note.empty());
}

TEST(Energy, ACounterStuckAtFirstCountsOnlyOnceItMoves) {
  // Stuck for the first 0.3 s of the window, then 200 W: the window starts at its first update.
  const energy_stats s = energy_from_trace(synthetic(200, 0.05, 0.3, 0.001, 0.9, 0));
  ASSERT_TRUE(s.measured()) << s.error;
  EXPECT_EQ(s.method, "counter");
  EXPECT_NEAR(s.watts, 200, 200 * 0.01);
  EXPECT_LT(s.window_s, 0.6);
}

TEST(Energy, ACounterThatNeverMovesFallsBackToThePowerSamplesAndSaysSo) {
  const energy_stats s = energy_from_trace(synthetic(200, 0.05, 10, 0.001, 0.6, 180));
  ASSERT_TRUE(s.measured()) << s.error;
  EXPECT_EQ(s.method, "power samples");
  EXPECT_NEAR(s.watts, 180, 1e-9);
  EXPECT_NEAR(s.joules_per_op, 180 * 50e-6, 1e-12);
  EXPECT_NE(s.note.find("the energy counter moved 0 time(s)"), std::string::npos) << s.note;
  // Without samples either, there is no figure, and the stats say why.
  const energy_stats none = energy_from_trace(synthetic(200, 0.05, 10, 0.001, 0.6, 0));
  EXPECT_FALSE(none.measured());
  EXPECT_NE(none.error.find("no power sample"), std::string::npos) << none.error;
}

TEST(Energy, WithoutACounterThePowerSamplesAreTheMethod) {
  energy_trace t = synthetic(200, 0.05, 0, 0.001, 0.6, 90);
  t.counter_supported = false;
  t.counter.clear();
  const energy_stats s = energy_from_trace(t);
  EXPECT_EQ(s.method, "power samples");
  EXPECT_NEAR(s.watts, 90, 1e-9);
  EXPECT_EQ(s.note, "the device has no energy counter");
}

TEST(Energy, ACounterGoingBackwardsIsAnError) {
  energy_trace t = synthetic(200, 0.05, 0, 0.001, 0.6, 90);
  t.counter[300].mj = 5;
  try {
    energy_from_trace(t);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("went backwards"), std::string::npos) << e.what();
  }
}

TEST(Energy, NoOperationIsNoFigure) {
  energy_trace t = synthetic(200, 0.05, 0, 0.001, 0.6, 90);
  t.operations = 0;
  EXPECT_EQ(energy_from_trace(t).error, "the energy loop ran no operation");
}

// A meter on the wall clock: `watts` from `stuck_s` on, the counter updated every 20 ms; or a
// counter that jumps back after `back_s`.
class fake_meter : public power_meter {
 public:
  fake_meter(double watts, double stuck_s, double back_s = 1e9)
      : watts_(watts), stuck_s_(stuck_s), back_s_(back_s), t0_(std::chrono::steady_clock::now()) {}
  std::optional<std::uint64_t> energy_mj() override {
    const double t = since();
    if (t > back_s_) return 1;
    const double counted = t < stuck_s_ ? 0 : std::floor((t - stuck_s_) / 0.02) * 0.02;
    return 1000000 + static_cast<std::uint64_t>(std::llround(counted * watts_ * 1e3));
  }
  std::optional<double> power_w() override { return watts_; }

 private:
  double since() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }
  double watts_, stuck_s_, back_s_;
  std::chrono::steady_clock::time_point t0_;
};

// A GPU that runs each operation in `op_s` of wall time, chunk after chunk.
struct fake_gpu {
  explicit fake_gpu(double seconds_per_op) : op_s(seconds_per_op) {}
  double op_s;
  std::uint64_t ops = 0, waited = 0;
  std::vector<std::uint64_t> chunks;
  energy_workload work() {
    energy_workload w;
    w.enqueue = [this](std::uint64_t n) {
      chunks.push_back(n);
      ops += n;
    };
    w.wait_oldest = [this] {
      std::this_thread::sleep_for(std::chrono::duration<double>(chunks.at(waited++) * op_s));
    };
    w.finish = [this] {
      while (waited < chunks.size())
        std::this_thread::sleep_for(std::chrono::duration<double>(chunks.at(waited++) * op_s));
      return static_cast<double>(ops) * op_s;
    };
    return w;
  }
};

TEST(Energy, TheLoopRunsUntilTheCounterMovedEnoughAndMeasuresIt) {
  // The counter is stuck for 0.25 s, longer than --energy-time: the window waits for it.
  fake_meter meter(150, 0.25);
  fake_gpu gpu(100e-6);
  energy_options opt;
  opt.min_time_s = 0.1;
  const energy_stats s = measure_energy(gpu.work(), meter, opt, 100e-6);
  ASSERT_TRUE(s.measured()) << s.error;
  EXPECT_EQ(s.method, "counter");
  EXPECT_GE(s.counter_updates, 5u);
  EXPECT_NEAR(s.watts, 150, 150 * 0.1);  // the host's clock under two busy cores
  EXPECT_NEAR(s.joules_per_op, s.watts * 100e-6, 1e-12);
  EXPECT_EQ(s.operations, gpu.ops);
  EXPECT_EQ(gpu.chunks.front(), 100u);  // 10 ms chunks
  EXPECT_NEAR(s.sampled_watts, 150, 1e-9);
}

TEST(Energy, TheLoopStopsAtItsCapAndACounterGoingBackIsTheRowsError) {
  fake_meter meter(150, 0, 0.15);
  fake_gpu gpu(1e-3);
  energy_options opt;
  opt.min_time_s = 0.05;
  opt.min_updates = 1000000;  // never reached: the cap ends the window
  opt.cap_s = 0.2;
  const auto began = std::chrono::steady_clock::now();
  const energy_stats s = measure_energy(gpu.work(), meter, opt, 1e-3);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  EXPECT_GE(took, 0.25);
  EXPECT_LT(took, 2.0);
  EXPECT_FALSE(s.measured());
  EXPECT_NE(s.error.find("went backwards"), std::string::npos) << s.error;
}

TEST(Energy, TheRecordsEnergyRoundTripsThroughJson) {
  result_record r;
  r.variant.family = "reduce";
  r.variant.name = "reduce5";
  r.config = problem_config{"int32", "sum", "exact", 7, {{"N", std::uint64_t{1 << 24}}}};
  r.block = 512;
  r.status = outcome::passed;
  r.bytes = 67108864;
  r.roofline = "bandwidth";
  timing_stats t;
  t.samples = 10;
  t.median_ms = t.min_ms = t.max_ms = t.mean_ms = 0.043;
  r.timing = t;
  energy_stats e;
  e.method = "counter";
  e.joules_per_op = 12.5e-6;
  e.watts = 310;
  e.window_s = 0.52;
  e.us_per_op = 40.3;
  e.operations = 13000;
  e.counter_updates = 26;
  e.power_samples = 104;
  e.sampled_watts = 305;
  r.energy = e;
  const nlohmann::json j = to_json(r);
  EXPECT_NEAR(j.at("energy").at("gb_per_joule").get<double>(), 0.067108864 / 12.5e-6, 1e-6);
  const result_record back = record_from_json(j);
  ASSERT_TRUE(back.energy);
  EXPECT_TRUE(back.has_energy());
  EXPECT_EQ(back.energy->method, "counter");
  EXPECT_DOUBLE_EQ(back.energy->joules_per_op, 12.5e-6);
  EXPECT_DOUBLE_EQ(back.energy->watts, 310);
  EXPECT_DOUBLE_EQ(back.energy->window_s, 0.52);
  EXPECT_DOUBLE_EQ(back.energy->us_per_op, 40.3);
  EXPECT_EQ(back.energy->operations, 13000u);
  EXPECT_EQ(back.energy->counter_updates, 26u);
  EXPECT_EQ(back.energy->power_samples, 104u);
  EXPECT_DOUBLE_EQ(back.energy->sampled_watts, 305);

  // An error travels as the error.
  r.energy = energy_stats{};
  r.energy->error = "the energy counter went backwards";
  const result_record failed = record_from_json(to_json(r));
  ASSERT_TRUE(failed.energy);
  EXPECT_FALSE(failed.has_energy());
  EXPECT_EQ(failed.energy->error, "the energy counter went backwards");
  // A record from before --energy has none; a bad one is refused, naming the key.
  nlohmann::json old = j;
  old.erase("energy");
  EXPECT_FALSE(record_from_json(old).energy);
  nlohmann::json bad = j;
  bad["energy"]["watts"] = -3;
  EXPECT_THROW(record_from_json(bad), std::runtime_error);
  bad = j;
  bad["energy"]["method"] = "guess";
  EXPECT_THROW(record_from_json(bad), std::runtime_error);
}

TEST(Energy, TheTimingOptionsCarryEnergyToTheWorker) {
  timing_options t;
  t.energy.enabled = true;
  t.energy.min_time_s = 1.5;
  const timing_options back = timing_options_from_json(to_json(t));
  EXPECT_TRUE(back.energy.enabled);
  EXPECT_DOUBLE_EQ(back.energy.min_time_s, 1.5);
  nlohmann::json without = to_json(timing_options{});
  without.erase("energy");
  EXPECT_THROW(timing_options_from_json(without), std::exception) << "every field is in version 2";
}

cli_options parse(std::vector<const char*> args) {
  args.insert(args.begin(), "kernlab");
  return parse_command_line(static_cast<int>(args.size()), args.data(), {});
}

TEST(EnergyOptions, EnergyAndItsWindowAndTheObjective) {
  EXPECT_FALSE(parse({}).timing.energy.enabled);
  const auto o = parse({"--energy", "--energy-time", "2"});
  EXPECT_TRUE(o.timing.energy.enabled);
  EXPECT_DOUBLE_EQ(o.timing.energy.min_time_s, 2);
  EXPECT_EQ(parse({"tune"}).objective, "time");
  const auto e = parse({"tune", "--objective", "energy"});
  EXPECT_EQ(e.objective, "energy");
  EXPECT_TRUE(e.timing.energy.enabled);  // an energy tune measures every point for energy
}

TEST(EnergyOptions, BadInputIsAUsageErrorNamingTheOption) {
  const struct {
    std::vector<const char*> args;
    const char* message;
  } cases[] = {
      {{"--energy", "--energy-time", "0"}, "--energy-time 0: must be seconds in (0, 3600]"},
      {{"--energy", "--energy-time", "nan"}, "--energy-time"},
      {{"--energy-time", "1"}, "--energy-time applies to --energy"},
      {{"tune", "--objective", "speed"}, "--objective must be time or energy, not 'speed'"},
      {{"--objective", "energy"}, "--objective does not apply to a sweep"},
      {{"--energy", "--compile-only"}, "--energy does not apply to --compile-only"},
      {{"--energy", "--list"}, "--energy does not apply to --list"},
      {{"--energy", "--sanitize"}, "--energy and --sanitize contradict each other"},
  };
  for (const auto& c : cases) {
    try {
      parse(c.args);
      ADD_FAILURE() << c.message << ": no error";
    } catch (const usage_error& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace kl
