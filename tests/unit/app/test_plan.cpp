// --plan, and the golden keys: every row a command line makes, as configuration_key() spells it
// (the key compare pairs rows by, and the journal builds on), for command lines over every shipped
// family and every way of giving a problem (--size, --shape, --axis, --input, --seed, --block,
// --dtype, --op). A restructuring of the configurations must leave tests/data/golden_plan.txt as
// it is; a deliberate change of a key rewrites it with KERNLAB_UPDATE_GOLDEN=1 and is reviewed.
#include "golden.hpp"
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
  test::expect_golden("golden_plan.txt", plan_transcript(), "Plan.TheKeys");
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
