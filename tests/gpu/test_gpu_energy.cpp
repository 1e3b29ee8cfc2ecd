// --energy on the GPU, through the built binary: a sweep's rows get joules per operation and
// watts from NVML, and an energy tune finds a best point. Skipped without a GPU; a machine with
// a GPU but no NVML fails here on purpose (the figures are what this test is for).
#include "gpu_test_util.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

namespace kl {
namespace {

TEST(GpuEnergy, Reduce5RowsHaveJoulesPerOperationAndPlausibleWatts) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("gpu_energy");
  const std::string json = dir.str() + "/energy.json", csv = dir.str() + "/energy.csv";
  const auto r = test::run_kernlab("--kernels-dir " + test::kernels_dir() +
                                   " --variant reduce5 --block 256,512 --size 2^24 --dtype int32 "
                                   "--min-time 0.05 --timeout 1 --energy --json " +
                                   json + " --csv " + csv);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("uJ/op"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("least energy: reduce5"), std::string::npos) << r.output;
  const auto j = nlohmann::json::parse(test::read_file(json));
  EXPECT_TRUE(j.at("reproducibility").at("energy_unavailable").is_null())
      << j.at("reproducibility").at("energy_unavailable");
  int rows = 0;
  for (const auto& rec : j.at("records")) {
    ASSERT_EQ(rec.at("outcome"), "passed") << rec.dump();
    const auto& e = rec.at("energy");
    ASSERT_FALSE(e.contains("error")) << e.dump();
    EXPECT_EQ(e.at("method"), "counter") << e.dump();  // Hopper has the counter
    EXPECT_GT(e.at("joules_per_op").get<double>(), 0) << e.dump();
    EXPECT_GT(e.at("watts").get<double>(), 50) << e.dump();
    EXPECT_LT(e.at("watts").get<double>(), 1000) << e.dump();
    EXPECT_GE(e.at("counter_updates").get<int>(), 5) << e.dump();
    EXPECT_GE(e.at("window_s").get<double>(), 0.2) << e.dump();
    // The second source is NVML's power reading, a trailing average over about a second on
    // Hopper: over a half-second window that began at idle it lies between idle and the counter's
    // figure (measured on an H100: 230 W beside the counter's 365 W).
    EXPECT_GT(e.at("sampled_watts").get<double>(), 50) << e.dump();
    EXPECT_LT(e.at("sampled_watts").get<double>(), e.at("watts").get<double>() * 1.1) << e.dump();
    ++rows;
  }
  EXPECT_EQ(rows, 2);
  EXPECT_NE(test::read_file(csv).find(",counter,"), std::string::npos);
}

TEST(GpuEnergy, AnEnergyTuneFindsABestPointAndStoresItApart) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("gpu_energy_tune");
  const std::string d = dir.str();
  const std::string args = "tune --kernels-dir " + test::kernels_dir() +
                           " --variant reduce_tunable --budget 10 --size 2^24 --dtype int32 "
                           "--min-time 0.05 --timeout 1 --store " +
                           d + "/store.jsonl --export " + d + "/best.json";
  const auto r = test::run_kernlab(args + " --objective energy --energy-time 0.3");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("(least energy): "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" uJ/op at "), std::string::npos) << r.output;
  const auto best = nlohmann::json::parse(test::read_file(d + "/best.json"));
  const auto& t = best.at("tunes").at(0);
  EXPECT_EQ(t.at("objective"), "energy");
  EXPECT_GT(t.at("best").at("energy").at("joules_per_op").get<double>(), 0);
  // A time tune of the same space measures again: the energy rows are stored under their own
  // keys (and answer a second energy tune instead).
  const auto time = test::run_kernlab(args);
  ASSERT_EQ(time.code, 0) << time.output;
  EXPECT_NE(time.output.find("10 evaluated, 10 measured in this run"), std::string::npos)
      << time.output;
  const auto again = test::run_kernlab(args + " --objective energy --energy-time 0.3");
  ASSERT_EQ(again.code, 0) << again.output;
  EXPECT_NE(again.output.find("10 evaluated, 0 measured in this run"), std::string::npos)
      << again.output;
}

}  // namespace
}  // namespace kl
