// --profile on a GPU, through the whole program: a source variant and a plugin (CUB, several
// kernels in one row) profiled by Nsight Compute, the profile table printed, every passed row
// with figures in the table and in --json, and the report kept where the output says.
#include "gpu_test_util.hpp"
#include "process/command.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace kl {
namespace {

// ncu where kernlab looks for it: "" when it is not there.
std::string find_ncu() {
  const char* home = std::getenv("CUDA_HOME");
  std::vector<std::string> folders = {(home && *home ? std::string(home) : "/usr/local/cuda") +
                                      "/bin"};
  for (const auto& f : worker::path_folders(std::getenv("PATH"))) folders.push_back(f);
  return worker::find_program("ncu", folders);
}

TEST(GpuProfile, ASweepWithProfileShowsNcuFiguresForEveryPassedRow) {
  const std::string why = test::no_gpu_reason();
  if (!why.empty()) GTEST_SKIP() << "needs a GPU: " << why;
  if (find_ncu().empty()) GTEST_SKIP() << "needs Nsight Compute (ncu): not found";
  test::temp_dir dir("gpu_profile");
  const std::string json = dir.str() + "/run.json";
  const auto r = test::run_kernlab(
      "--profile --variant reduce5,reduce.cub --block 256 --size 2^20 --dtype int32 --min-time 0 "
      "--timeout 1 --cache-dir " +
      dir.str() + " --kernels-dir " + test::kernels_dir() + " --json " + json);
  EXPECT_EQ(r.code, 0) << r.output;
  const auto table = r.output.find("== profile: Nsight Compute");
  ASSERT_NE(table, std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("\nprofile: "), std::string::npos) << "the pass fell short:\n"
                                                             << r.output;

  // The table: one line per passed row, DRAM % above 0, a stall reason.
  std::istringstream lines(r.output.substr(table));
  std::string line;
  std::getline(lines, line);  // the title
  std::getline(lines, line);  // the header
  ASSERT_NE(line.find("DRAM %"), std::string::npos) << r.output;
  int rows = 0;
  while (std::getline(lines, line) &&
         (line.rfind("reduce5 ", 0) == 0 || line.rfind("cub ", 0) == 0)) {
    ++rows;
    std::istringstream cells(line);
    std::string variant, block, dtype, op, n, kernels, us, dram, occupancy, l2, sm, stalls;
    cells >> variant >> block >> dtype >> op >> n >> kernels >> us >> dram >> occupancy >> l2 >> sm;
    std::getline(cells, stalls);
    EXPECT_GE(std::stoi(kernels), 1) << line;
    EXPECT_GT(std::stod(dram), 0) << line;
    for (const auto& figure : {us, occupancy, l2, sm}) EXPECT_NE(figure, "-") << line;
    EXPECT_NE(stalls.find_first_of("abcdefghijklmnopqrstuvwxyz"), std::string::npos)
        << "a stall reason:\n"
        << line;
  }
  EXPECT_EQ(rows, 2) << r.output;

  // The JSON: each passed record's profile, and the report where both say.
  std::ifstream in(json);
  const nlohmann::json results = nlohmann::json::parse(in);
  const std::string report = results.at("profile").at("report");
  EXPECT_EQ(results.at("profile").at("error"), "");
  EXPECT_TRUE(std::filesystem::is_regular_file(report)) << report;
  EXPECT_GT(std::filesystem::file_size(report), 0u) << report;
  EXPECT_NE(r.output.find("report: " + report), std::string::npos) << r.output;
  int profiled = 0;
  for (const auto& rec : results.at("records")) {
    if (rec.at("outcome") != "passed") continue;
    const auto& p = rec.at("profile");
    ASSERT_TRUE(p.is_object()) << rec.dump();
    EXPECT_GE(p.at("kernels").get<int>(), 1) << p.dump();
    EXPECT_GT(p.at("dram_pct").get<double>(), 0) << p.dump();
    EXPECT_GT(p.at("occupancy_pct").get<double>(), 0) << p.dump();
    EXPECT_FALSE(p.at("stalls").empty()) << p.dump();
    EXPECT_EQ(p.at("report"), report);
    ++profiled;
  }
  EXPECT_EQ(profiled, 2);
}

}  // namespace
}  // namespace kl
