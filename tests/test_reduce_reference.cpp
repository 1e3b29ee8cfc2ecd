// The reduce family's host side: inputs, the CPU reference, comparison, and the pass plan.
#include "families/reduce.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numeric>

namespace kl {
namespace {

using namespace reduce;

problem_config cfg(const std::string& dtype, const std::string& op, std::uint64_t n,
                   std::uint64_t seed = 7, const std::string& mode = "exact") {
  return {dtype, op, n, mode, seed, {}};
}
float as_float(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
std::uint32_t bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

TEST(ReduceInput, SeededAndInRange) {
  const auto a = make_input(cfg("int32", "sum", 10000, 1));
  const auto b = make_input(cfg("int32", "sum", 10000, 1));
  const auto c = make_input(cfg("int32", "sum", 10000, 2));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  int lo = 0, hi = 0;
  for (auto v : a) {
    lo = std::min(lo, static_cast<int>(v));
    hi = std::max(hi, static_cast<int>(v));
  }
  EXPECT_EQ(lo, -128);
  EXPECT_EQ(hi, 127);
  for (auto v : make_input(cfg("float32", "sum", 10000))) {
    const float f = as_float(v) * 256.0f;
    EXPECT_EQ(f, std::round(f));  // multiples of 1/256
    EXPECT_LE(std::fabs(f), 127.0f);
  }
  for (auto v : make_input(cfg("float32", "sum", 10000, 3, "random"))) {
    EXPECT_GE(as_float(v), -1.0f);
    EXPECT_LT(as_float(v), 1.0f);
  }
}

TEST(ReduceReference, IntSumWrapsModulo2To32) {
  std::vector<std::uint32_t> in(3, static_cast<std::uint32_t>(2147483647));
  const auto ref = compute_reference(cfg("int32", "sum", 3), in);
  // 3 * (2^31 - 1) mod 2^32 = 2^31 - 3, as a signed value -(2^31) + 2^31 - 3 ... computed plainly:
  EXPECT_EQ(ref.bits, static_cast<std::uint32_t>(3ull * 2147483647ull));
  EXPECT_EQ(format_value("int32", ref.bits), "2147483645");
}

TEST(ReduceReference, MinMaxAndIdentities) {
  std::vector<std::uint32_t> in = {5, static_cast<std::uint32_t>(-9), 3};
  EXPECT_EQ(static_cast<int>(compute_reference(cfg("int32", "min", 3), in).bits), -9);
  EXPECT_EQ(static_cast<int>(compute_reference(cfg("int32", "max", 3), in).bits), 5);
  std::vector<std::uint32_t> f = {bits(1.5f), bits(-2.25f)};
  EXPECT_EQ(as_float(compute_reference(cfg("float32", "min", 2), f).bits), -2.25f);
  EXPECT_EQ(as_float(compute_reference(cfg("float32", "max", 2), f).bits), 1.5f);
  EXPECT_EQ(identity_bits("int32", "sum"), 0u);
  EXPECT_EQ(static_cast<int>(identity_bits("int32", "min")), 2147483647);
  EXPECT_EQ(as_float(identity_bits("float32", "max")), -3.402823466e+38f);
}

// The exact mode's promise: the float32 sum is the exact sum, whatever the order.
TEST(ReduceReference, FloatExactModeIsOrderIndependent) {
  const auto c = cfg("float32", "sum", 1 << 20, 11);
  const auto in = make_input(c);
  const auto ref = compute_reference(c, in);
  float forward = 0, backward = 0, strided = 0;
  for (auto v : in) forward += as_float(v);
  for (auto it = in.rbegin(); it != in.rend(); ++it) backward += as_float(*it);
  for (std::size_t s = 0; s < 1000; ++s)
    for (std::size_t i = s; i < in.size(); i += 1000) strided += as_float(in[i]);
  EXPECT_EQ(bits(forward), ref.bits);
  EXPECT_EQ(bits(backward), ref.bits);
  EXPECT_EQ(bits(strided), ref.bits);
  EXPECT_EQ(static_cast<double>(as_float(ref.bits)), ref.value);
}

TEST(ReduceCompare, ExactCatchesOneMissingElement) {
  const auto c = cfg("float32", "sum", 100000, 5);
  auto in = make_input(c);
  const auto ref = compute_reference(c, in);
  in[12345] = bits(as_float(in[12345]) == 0 ? 1.0f / 256 : 0.0f);  // change one element
  const auto wrong = compute_reference(c, in);
  EXPECT_TRUE(compare(c, ref, ref.bits).ok);
  const auto r = compare(c, ref, wrong.bits);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.expected, format_value("float32", ref.bits));
  EXPECT_EQ(r.got, format_value("float32", wrong.bits));
}

TEST(ReduceCompare, RandomModeUsesATolerance) {
  const auto c = cfg("float32", "sum", 1 << 16, 9, "random");
  const auto in = make_input(c);
  const auto ref = compute_reference(c, in);
  float s = 0;
  for (auto v : in) s += as_float(v);  // float32 accumulation in one order
  const auto ok = compare(c, ref, bits(s));
  EXPECT_TRUE(ok.ok) << ok.detail;
  // A tolerance cannot see one missing element (that is what exact mode is for), but it does
  // see an error of 1% of the sum of magnitudes.
  EXPECT_FALSE(compare(c, ref, bits(s + 0.01f * static_cast<float>(ref.sum_abs))).ok);
  EXPECT_FALSE(compare(c, ref, bits(std::nanf(""))).ok);
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
