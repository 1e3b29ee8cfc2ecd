// GPU tests of `kernlab new`: the family skeleton validates at the awkward sizes, both dtypes and
// both input modes, and a new variant of every shipped family validates as written (their
// compiles are in test_scaffold.cpp).
#include "gpu_test_util.hpp"
#include "shipped_families.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <string>

namespace kl {
namespace {

const char* quick = " --min-time 0 --timeout 0.2 --no-cache";

// "outcome: count" of a --json file, and its rows as text for messages.
std::map<std::string, int> outcomes(const std::string& json_path, std::string& text) {
  std::map<std::string, int> out;
  const auto results = nlohmann::json::parse(test::read_file(json_path));
  for (const auto& r : results.at("records")) {
    ++out[r.at("outcome").get<std::string>()];
    text += r.at("variant").at("qualified_name").get<std::string>() + " " + r.at("config").dump() +
            ": " + r.at("outcome").get<std::string>() + " " + r.at("message").get<std::string>() +
            "\n";
  }
  return out;
}

std::string kernlab_in(const test::temp_dir& dir) {
  return "cd " + dir.str() + " && " + KERNLAB_BINARY + " --config /dev/null ";
}

TEST(GpuScaffold, TheFamilySkeletonValidatesAtEverySizeDtypeAndInput) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("gpu_scaffold_family");
  const auto made = test::run_command(kernlab_in(dir) + "new family my_map --kernels-dir mine");
  ASSERT_EQ(made.code, 0) << made.output;
  for (const char* input : {"exact", "random"}) {
    SCOPED_TRACE(input);
    const std::string json = dir.str() + "/run.json";
    const auto r = test::run_command(kernlab_in(dir) +
                                     "--kernels-dir mine --family my_map --block all --dtype "
                                     "float32,float64 --size 1,7,1000003,2^24 --input " +
                                     input + " --json " + json + quick);
    ASSERT_EQ(r.code, 0) << r.output;
    std::string text;
    const auto got = outcomes(json, text);
    // 2 dtypes x 4 sizes: simple at 4 blocks, and the copy baseline.
    EXPECT_EQ(got.at("passed"), 2 * 4 * 5) << text;
    EXPECT_EQ(got.size(), 1u) << text;
  }
}

TEST(GpuScaffold, ANewVariantOfEveryShippedFamilyValidatesAsWritten) {
  KL_REQUIRE_GPU();
  family_registry fams;
  test::register_shipped_families(fams);
  test::temp_dir dir("gpu_scaffold_variant");
  for (const auto& family : fams.names()) {
    SCOPED_TRACE(family);
    const std::string dirs = "--kernels-dir mine --kernels-dir " + test::kernels_dir();
    const auto made =
        test::run_command(kernlab_in(dir) + dirs + " new variant " + family + " idea");
    ASSERT_EQ(made.code, 0) << made.output;
    // A small problem: a one-axis family's 1000003, a shape's 257 in every axis.
    const bool one_axis = fams.find(family)->spec().axes.size() == 1;
    const std::string json = dir.str() + "/" + family + ".json";
    const auto r =
        test::run_command(kernlab_in(dir) + dirs + " --variant " + family + ".idea --size " +
                          (one_axis ? "1000003" : "257") + " --json " + json + quick);
    std::string text;
    const auto got = r.code == 0 ? outcomes(json, text) : std::map<std::string, int>{};
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_GT(got.count("passed") ? got.at("passed") : 0, 0) << text;
    for (const auto& [outcome, n] : got)
      EXPECT_TRUE(outcome == "passed" || outcome == "skipped") << outcome << "\n" << text;
  }
}

}  // namespace
}  // namespace kl
