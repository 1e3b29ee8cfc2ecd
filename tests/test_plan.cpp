// --plan, and the golden keys: every row a command line makes, as configuration_key() spells it
// (the key compare pairs rows by, and the journal builds on), for command lines over every shipped
// family and every way of giving a problem (--size, --shape, --axis, --input, --seed, --block,
// --dtype, --op). A restructuring of the configurations must leave tests/data/golden_plan.txt as
// it is; a deliberate change of a key rewrites it with KERNLAB_UPDATE_GOLDEN=1 and is reviewed.
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace kl {
namespace {

std::string plan_transcript() {
  std::ifstream cmds(test::source_dir() + "/tests/data/golden_plan.cmds");
  EXPECT_TRUE(cmds) << "tests/data/golden_plan.cmds is missing";
  std::string args, out;
  while (std::getline(cmds, args)) {
    if (args.empty()) continue;
    // Only the keys (standard output): warnings on standard error are not part of the plan.
    const auto r = test::run_command("{ " + std::string(KERNLAB_BINARY) +
                                     " --config /dev/null --kernels-dir " + test::kernels_dir() +
                                     " --plan " + args + " 2>/dev/null; }");
    out += "$ kernlab --plan " + args + "\n" + r.output + "exit " + std::to_string(r.code) + "\n";
  }
  return out;
}

TEST(Plan, TheKeysOfEveryShippedFamilysRowsAreTheGoldenOnes) {
  const std::string golden_path = test::source_dir() + "/tests/data/golden_plan.txt";
  const std::string now = plan_transcript();
  if (std::getenv("KERNLAB_UPDATE_GOLDEN")) {
    std::ofstream(golden_path, std::ios::binary) << now;
    GTEST_SKIP() << "wrote " << golden_path;
  }
  std::ifstream in(golden_path, std::ios::binary);
  ASSERT_TRUE(in) << golden_path << " is missing";
  std::stringstream golden;
  golden << in.rdbuf();
  if (now == golden.str()) return;
  // The first line that differs, with the command line it belongs to.
  std::istringstream a(golden.str()), b(now);
  std::string la, lb, command;
  for (int line = 1;; ++line) {
    const bool ga = static_cast<bool>(std::getline(a, la)),
               gb = static_cast<bool>(std::getline(b, lb));
    if (gb && lb.rfind("$ ", 0) == 0) command = lb;
    if (!ga && !gb) break;
    if (!ga || !gb || la != lb) {
      FAIL() << "golden_plan.txt line " << line << " (" << command
             << "):\n  golden: " << (ga ? la : "<end>") << "\n  now:    " << (gb ? lb : "<end>")
             << "\nA deliberate change of the keys: KERNLAB_UPDATE_GOLDEN=1 ctest -R "
                "Plan.TheKeys, then review the diff of tests/data/golden_plan.txt";
    }
  }
}

TEST(Plan, PrintsOnlyKeysAndRefusesOutputs) {
  const auto r =
      test::run_kernlab("--kernels-dir " + test::kernels_dir() +
                        " --plan --variant reduce5 --block 256 --size 1000 --dtype int32");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output, "reduce.reduce5 block 256 int32 sum n=1000\n");
  const auto json = test::run_kernlab("--kernels-dir " + test::kernels_dir() +
                                      " --plan --variant reduce5 --json x.json");
  EXPECT_EQ(json.code, 2) << json.output;
  EXPECT_NE(json.output.find("--json does not apply to --plan"), std::string::npos) << json.output;
  const auto bad = test::run_kernlab("--kernels-dir " + test::kernels_dir() +
                                     " --plan --variant reduce5 --block 100");
  EXPECT_EQ(bad.code, 2) << bad.output;
}

}  // namespace
}  // namespace kl
