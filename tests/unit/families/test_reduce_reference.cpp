// The reduce family without a GPU: its description (ops, the plan passes, the padding), its
// exact-by-design inputs, the identities, the comparison rules of both input modes, and the pass
// plan. Its reference kernel compiles in test_data_family.cpp (every shipped family's, every op);
// it runs against the variants in test_gpu_reduce.cpp.
#include "families/family.hpp"
#include "families/pass_plan.hpp"
#include "shipped_families.hpp"
#include "spec/expression.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>

namespace kl {
namespace {

const family& reduce_family() {
  static family_registry fams;
  static const family* f = [] {
    test::register_shipped_families(fams);
    return fams.find("reduce");
  }();
  EXPECT_NE(f, nullptr) << fams.broken("reduce");
  return *f;
}

template <typename T>
std::vector<T> generated(const std::string& dtype, std::uint64_t n, std::uint64_t seed,
                         const std::string& mode = "exact") {
  return test::generated_values<T>(reduce_family(), "in", dtype, n, seed, mode != "exact");
}

std::vector<std::uint8_t> bytes_of(double v) {
  std::vector<std::uint8_t> out(8);
  std::memcpy(out.data(), &v, 8);
  return out;
}
template <typename T>
std::vector<std::uint8_t> bytes_of_t(T v) {
  std::vector<std::uint8_t> out(sizeof v);
  std::memcpy(out.data(), &v, sizeof v);
  return out;
}

TEST(ReduceFamily, DescribesOpsThePlanAndThePadding) {
  const family_spec& s = reduce_family().spec();
  EXPECT_EQ(reduce_family().ops(), (std::vector<std::string>{"sum", "min", "max"}));
  EXPECT_EQ(s.plan, launch_plan::passes);
  EXPECT_EQ(s.pad, 16384u);  // KL_REDUCE_INPUT_PADDING, which plugins are promised
  EXPECT_EQ(s.plugin_sizes, (std::vector<std::string>{"N", "PADDED_N"}));
  EXPECT_EQ(s.includes, (std::vector<std::string>{"kernlab/reduce.cuh"}));
  EXPECT_EQ(reduce_family().axes().front().max, axis_number{std::uint64_t{1} << 31});
  variant_descriptor v;
  v.entry = "reduce5<BLOCK, T, OP>";
  problem_config c{"float32", "max", "exact", 1, {{"N", std::uint64_t{1000}}}};
  EXPECT_EQ(reduce_family().name_expression(v, 256, c), "reduce5<256, float, kl::max<float>>");
  EXPECT_EQ(reduce_family().reference_expression("int32", "sum"),
            "reduce_reference<int, kl::sum<int>>");
  EXPECT_EQ(c.describe(), "float32 max n=1000");
}

TEST(ReduceFamily, IdentitiesAreTheTypesExtremes) {
  const family_spec& s = reduce_family().spec();
  auto one = [&](const std::string& op, const std::string& dtype) {
    return identity_elements(*s.op(op), dtype, 1);
  };
  EXPECT_EQ(one("sum", "int32"), bytes_of_t<std::int32_t>(0));
  EXPECT_EQ(one("min", "int32"), bytes_of_t(std::numeric_limits<std::int32_t>::max()));
  EXPECT_EQ(one("max", "int32"), bytes_of_t(std::numeric_limits<std::int32_t>::lowest()));
  EXPECT_EQ(one("min", "float32"), bytes_of_t(std::numeric_limits<float>::max()));
  EXPECT_EQ(one("max", "float32"), bytes_of_t(std::numeric_limits<float>::lowest()));
  EXPECT_EQ(identity_elements(*s.op("sum"), "float32", 3).size(), 12u);
}

TEST(ReduceInput, SeededAndInRange) {
  const auto a = generated<std::int32_t>("int32", 100000, 7);
  EXPECT_EQ(a, (generated<std::int32_t>("int32", 100000, 7)));
  EXPECT_NE(a, (generated<std::int32_t>("int32", 100000, 8)));
  std::set<std::int32_t> seen(a.begin(), a.end());
  EXPECT_EQ(*seen.begin(), -127);
  EXPECT_EQ(*seen.rbegin(), 127);
  EXPECT_EQ(seen.size(), 255u);  // every whole number of the range
  for (float x : generated<float>("float32", 100000, 7)) ASSERT_EQ(x, std::trunc(x)) << x;
  // Random mode: float32 values with fractions, int32 their whole parts.
  const auto r = generated<float>("float32", 1000, 7, "random");
  EXPECT_TRUE(std::any_of(r.begin(), r.end(), [](float x) { return x != std::trunc(x); }));
  for (float x : r) ASSERT_TRUE(x >= -128.0f && x <= 128.0f) << x;
}

// Exact mode's promise: a float32 sum of the inputs in any order is the exact sum.
TEST(ReduceInput, FloatExactModeIsOrderIndependent) {
  const auto in = generated<float>("float32", 1 << 22, 11);
  double exact = 0;
  float forward = 0, backward = 0;
  for (float x : in) {
    exact += x;
    forward += x;
  }
  for (auto it = in.rbegin(); it != in.rend(); ++it) backward += *it;
  EXPECT_EQ(static_cast<double>(forward), exact);
  EXPECT_EQ(static_cast<double>(backward), exact);
}

TEST(ReduceCompare, ExactCatchesOneMissingElement) {
  const auto in = generated<float>("float32", 1000003, 3);
  double exact = 0;
  for (float x : in) exact += x;
  float missing = 0;
  for (std::size_t i = 1; i < in.size(); ++i) missing += in[i];
  ASSERT_NE(in[0], 0.0f);
  const compare_spec& rule = reduce_family().spec().compare_for("exact");
  const auto mag = bytes_of(0);
  EXPECT_TRUE(compare_buffer(rule, "out", "float32", bytes_of_t(static_cast<float>(exact)),
                             "float64", bytes_of(exact), &mag, 0)
                  .ok);
  const auto r = compare_buffer(rule, "out", "float32", bytes_of_t(missing), "float64",
                                bytes_of(exact), &mag, 0);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.expected.rfind("out[0] = ", 0), 0u) << r.expected;
}

TEST(ReduceCompare, RandomModeUsesTheSumBound) {
  const std::uint64_t n = 1 << 16;
  const auto in = generated<float>("float32", n, 9, "random");
  double exact = 0, magnitude = 0;
  float s = 0;
  for (float x : in) {
    exact += x;
    magnitude += std::fabs(x);
    s += x;  // float32 accumulation in one order
  }
  const compare_spec& rule = reduce_family().spec().compare_for("random");
  ASSERT_EQ(rule.rule, "bound");
  const double terms = static_cast<double>(evaluate(rule.terms, {{"N", n}}));
  EXPECT_EQ(terms, 2 * 256 + 64);
  const auto mag = bytes_of(magnitude);
  const auto ok = compare_buffer(rule, "out", "float32", bytes_of_t(s), "float64", bytes_of(exact),
                                 &mag, terms);
  EXPECT_TRUE(ok.ok) << ok.detail;
  // A bound cannot see one missing element (that is what exact mode is for), but it does see an
  // error of 1% of the sum of magnitudes, and a NaN.
  const float off = s + 0.01f * static_cast<float>(magnitude);
  EXPECT_FALSE(compare_buffer(rule, "out", "float32", bytes_of_t(off), "float64", bytes_of(exact),
                              &mag, terms)
                   .ok);
  EXPECT_FALSE(compare_buffer(rule, "out", "float32", bytes_of_t(std::nanf("")), "float64",
                              bytes_of(exact), &mag, terms)
                   .ok);
  // min, max and int32 get magnitude 0 from the reference: exact.
  const auto zero = bytes_of(0);
  EXPECT_FALSE(compare_buffer(rule, "out", "float32", bytes_of_t(1.5f), "float64", bytes_of(1.25),
                              &zero, terms)
                   .ok);
}

TEST(ReducePlan, TilesAndPasses) {
  // 1000 elements, tile 256: 4 blocks (padded to 1024), then 4 elements: 1 block.
  auto p = plan_passes(1000, 256, grid_kind::tiles, bounds_kind::padded, 0);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].n, 1000u);
  EXPECT_EQ(p[0].in_len, 1024u);
  EXPECT_EQ(p[0].grid, 4u);
  EXPECT_EQ(p[1].n, 4u);
  EXPECT_EQ(p[1].in_len, 256u);
  EXPECT_EQ(p[1].grid, 1u);
  // n = 1 is one pass of one block.
  p = plan_passes(1, 2048, grid_kind::tiles, bounds_kind::padded, 0);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].grid, 1u);
  // Resident grids are capped; checked bounds are not padded.
  p = plan_passes((1u << 24) + 3, 512, grid_kind::resident, bounds_kind::checked, 264);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].grid, 264u);
  EXPECT_EQ(p[0].in_len, (1u << 24) + 3);
  EXPECT_EQ(p[1].n, 264u);
  EXPECT_EQ(p[1].grid, 1u);
  // 2^31 elements in tiles of 256 take four passes.
  EXPECT_EQ(
      plan_passes(std::uint64_t{1} << 31, 256, grid_kind::tiles, bounds_kind::padded, 0).size(),
      4u);
  EXPECT_THROW(plan_passes(10, 1, grid_kind::tiles, bounds_kind::padded, 0), std::invalid_argument);
  // A kernel that finishes the reduction itself is launched once, whatever its grid.
  p = plan_passes(1u << 20, 4096, grid_kind::resident, bounds_kind::checked, 1056,
                  output_kind::single);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].grid, 256u);
  EXPECT_EQ(plan_passes(1u << 28, 4096, grid_kind::resident, bounds_kind::checked, 1056,
                        output_kind::single)[0]
                .grid,
            1056u);
}

}  // namespace
}  // namespace kl
