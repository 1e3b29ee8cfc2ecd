// The qam256 family without a GPU: the C++ definition (docs/qam256.md) that the tests keep as
// the oracle of the family's plugin, the plugin against it, the family.toml's checks, the chunk
// plans of the pipeline, the options, and NVRTC compiles of every qam256 kernel file.
#include "cli/options.hpp"
#include "exec/pipeline.hpp"
#include "families/family.hpp"
#include "plugin_host/family_plugin.hpp"
#include "qam256_oracle.hpp"
#include "registry/registry.hpp"
#include "runner/runner.hpp"
#include "shipped_families.hpp"
#include "shipped_kernels.hpp"
#include "spec/metadata.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>

namespace kl {
namespace {

namespace qam256 = kl::test::qam256;
using bytes8 = std::array<std::uint8_t, 8>;

float from_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

TEST(Qam256Reference, ScaleIsSqrt170InFloat32) {
  EXPECT_EQ(qam256::scale, static_cast<float>(std::sqrt(170.0)));
}

TEST(Qam256Reference, Pam16IsTheStandardsTable) {
  // TS 38.211 5.1.5 with all four bits 0: 1 * (8 - 1 * (4 - 1 * (2 - 1))) = 8 - 3 = 5.
  EXPECT_EQ(qam256::pam16(0, 0, 0, 0), 5);
  EXPECT_EQ(qam256::pam16(0, 0, 0, 1), 7);   // 8 - (4 - 3) = 7
  EXPECT_EQ(qam256::pam16(0, 1, 1, 1), 15);  // 8 + (4 + 3) = 15
  EXPECT_EQ(qam256::pam16(1, 1, 1, 1), -15);
  EXPECT_EQ(qam256::pam16(0, 0, 1, 0), 3);  // 8 - (4 + 1) = 3
  EXPECT_EQ(qam256::pam16(0, 0, 1, 1), 1);  // 8 - (4 + 3) = 1
  // Every odd amplitude -15..15 comes from exactly one bit pattern (a Gray code).
  std::set<int> seen;
  for (unsigned b = 0; b < 16; ++b)
    seen.insert(qam256::pam16(b & 1, b >> 1 & 1, b >> 2 & 1, b >> 3 & 1));
  EXPECT_EQ(seen.size(), 16u);
  for (int a : seen) EXPECT_TRUE(a % 2 != 0 && a >= -15 && a <= 15) << a;
}

TEST(Qam256Reference, TheNoiseFreePointsDecodeToTheSentBits) {
  for (unsigned byte = 0; byte < 256; ++byte) {
    const auto p = qam256::map_byte(static_cast<std::uint8_t>(byte));
    const auto soft = qam256::demap(p[0], p[1]);
    for (int k = 0; k < 8; ++k) {
      const bool sent = byte >> k & 1;
      EXPECT_EQ(soft[k] > 128, sent) << "byte " << byte << " bit " << k << " soft " << int(soft[k]);
      // A noise-free point is at least 1 away from every decision boundary: |L| >= 1, so the
      // soft bit is at least 8 away from 128.
      EXPECT_GE(std::abs(int(soft[k]) - 128), 7) << "byte " << byte << " bit " << k;
    }
  }
}

TEST(Qam256Reference, Zero) {
  // x = y = 0: L0 = 0 -> 128; L2 = 8 -> 128 - 64 = 64; L4 = 4 - 8 = -4 -> 160; L6 = 2 - 4 = -2 ->
  // 144.
  EXPECT_EQ(qam256::demap(0.0f, 0.0f), (bytes8{128, 128, 64, 64, 160, 160, 144, 144}));
  EXPECT_EQ(qam256::demap(-0.0f, -0.0f), (bytes8{128, 128, 64, 64, 160, 160, 144, 144}));
}

TEST(Qam256Reference, Saturation) {
  // I = 100: x = 1303.84 -> 128 - 10430.7 < 0 -> 0; L2 = 8 - 1303.84 = -1295.84 -> 255; L4, L6
  // likewise far below 0 -> 255. Q = -100: L1 = -1303.84 -> 255, the rest as for I.
  EXPECT_EQ(qam256::demap(100.0f, -100.0f), (bytes8{0, 255, 255, 255, 255, 255, 255, 255}));
  const float big = std::numeric_limits<float>::max();
  EXPECT_EQ(qam256::demap(big, -big), (bytes8{0, 255, 255, 255, 255, 255, 255, 255}));
  EXPECT_EQ(qam256::demap(1e30f, 1e30f), (bytes8{0, 0, 255, 255, 255, 255, 255, 255}));
  // Infinities saturate the same way (the spec leaves them unspecified; the reference must not
  // invoke undefined behaviour on them, nor on NaN).
  EXPECT_EQ(qam256::demap(INFINITY, -INFINITY), (bytes8{0, 255, 255, 255, 255, 255, 255, 255}));
  (void)qam256::demap(NAN, NAN);
}

TEST(Qam256Reference, WorkedOutByHand) {
  // I = 0.5: x = 0.5 * 13.03840446 = 6.51920223 (exact: a power of two times s).
  //   b0: 128 - 8 * 6.51920223 = 75.8463821 -> 76
  //   b2: L2 = 8 - 6.51920223 = 1.48079777 -> 128 - 11.8463821 = 116.153618 -> 116
  //   b4: L4 = 4 - 1.48079777 = 2.51920223 -> 128 - 20.1536179 = 107.846382 -> 108
  //   b6: L6 = 2 - 2.51920223 = -0.51920223 -> 128 + 4.15361786 = 132.153618 -> 132
  // Q = 0: as in Zero (128, 64, 160, 144).
  EXPECT_EQ(qam256::demap(0.5f, 0.0f), (bytes8{76, 128, 116, 64, 108, 160, 132, 144}));
  // Q = -0.5: y = -6.51920223: b1 = 128 + 52.1536179 -> 180; L3 = 8 - 6.519 -> 116 as b2, and so
  // on.
  EXPECT_EQ(qam256::demap(0.0f, -0.5f), (bytes8{128, 180, 64, 116, 160, 108, 144, 132}));
}

TEST(Qam256Reference, RintRoundsHalfToEven) {
  // soft_bit alone: 128 - 8 L at exact halves.
  EXPECT_EQ(qam256::soft_bit(0.0625f), 128);    // 127.5 -> 128
  EXPECT_EQ(qam256::soft_bit(0.1875f), 126);    // 126.5 -> 126 (half away from zero: 127)
  EXPECT_EQ(qam256::soft_bit(-0.1875f), 130);   // 129.5 -> 130
  EXPECT_EQ(qam256::soft_bit(-0.0625f), 128);   // 128.5 -> 128 (half away from zero: 129)
  EXPECT_EQ(qam256::soft_bit(16.0625f), 0);     // -0.5 -> -0 -> 0
  EXPECT_EQ(qam256::soft_bit(-15.9375f), 255);  // 255.5 -> 256 -> 255
  EXPECT_EQ(qam256::soft_bit(-15.8125f), 254);  // 254.5 -> 254
  // Whole symbols whose x = I * s lands exactly on a half. The inputs were found by stepping
  // through the floats next to t / s until I * s == t in float32:
  //   I = 0x3b9d130e: x = 0.0625 -> 127.5 -> 128; L2 = 7.9375 -> 64.5 -> 64;
  //   L4 = -3.9375 -> 159.5 -> 160; L6 = -1.9375 -> 143.5 -> 144 (Q = -I: 128.5 -> 128, ...)
  const float a = from_bits(0x3b9d130e);
  ASSERT_EQ(a * qam256::scale, 0.0625f);
  EXPECT_EQ(qam256::demap(a, -a), (bytes8{128, 128, 64, 64, 160, 160, 144, 144}));
  //   I = 0x3c6b9c95: x = 0.1875 -> 126.5 -> 126; L2 = 7.8125 -> 65.5 -> 66; L4 = -3.8125 ->
  //   158.5 -> 158; L6 = -1.8125 -> 142.5 -> 142. Q = -I: y = -0.1875 -> 129.5 -> 130.
  const float b = from_bits(0x3c6b9c95);
  ASSERT_EQ(b * qam256::scale, 0.1875f);
  EXPECT_EQ(qam256::demap(b, -b), (bytes8{126, 130, 66, 66, 158, 158, 142, 142}));
  //   I = 0x3f1e4d34: x = 8.0625 -> 63.5 -> 64; L2 = -0.0625 -> 128.5 -> 128; L4 = 3.9375 ->
  //   96.5 -> 96; L6 = -1.9375 -> 143.5 -> 144. Q = -I: y = -8.0625 -> 192.5 -> 192.
  const float c = from_bits(0x3f1e4d34);
  ASSERT_EQ(c * qam256::scale, 8.0625f);
  EXPECT_EQ(qam256::demap(c, -c), (bytes8{64, 192, 128, 128, 96, 96, 144, 144}));
}

std::vector<float> inputs(std::uint64_t n, std::uint64_t seed = 7, double snr = 20) {
  return qam256::make_input(n, seed, snr);
}

problem_config config(std::uint64_t n, std::uint64_t seed = 7, double snr = 20) {
  problem_config c;
  c.dtype = "float32";
  c.op = "demap";
  c.seed = seed;
  c.axes = {{"N", n}, {"SNR_DB", snr}};
  return c;
}

// The family plugin that makes qam256's inputs and reference for the family as data
// (plugins/qam256_family) against the C++ family, kept as its oracle: the same floats, in any
// ranges, and the same soft bits, at sizes around the generator's 2^16-symbol blocks.
TEST(Qam256FamilyPlugin, MatchesTheCxxFamilyBitForBit) {
  const auto plugin =
      open_family_plugin(std::string(KERNLAB_PLUGIN_DIR) + "/families/kernlab_qam256_family.so");
  const kl_family_generate_fn symbols = plugin->generator("symbols");
  const kl_family_reference_fn demap = plugin->reference("demap");
  for (const std::uint64_t n : {1ull, 2ull, 65535ull, 65536ull, 65537ull, 200003ull}) {
    for (const double snr : {20.0, 3.5, -10.0, 60.0}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " snr=" + std::to_string(snr));
      const std::uint64_t seed = 1234567 + n;
      const auto expected = inputs(n, seed, snr);
      const char* names[] = {"N", "SNR_DB"};
      const double values[] = {static_cast<double>(n), snr};
      const kl_family_point point = {"qam256", "float32", "", "random", seed, names, values, 2};
      // In three uneven ranges, the middle one starting on a Q (an odd element).
      std::vector<float> got(2 * n);
      const std::uint64_t cut1 = std::min<std::uint64_t>(2 * n, 3);
      const std::uint64_t cut2 = std::min<std::uint64_t>(2 * n, (2 * n + cut1) / 2 | 1);
      char error[256] = "";
      for (auto [first, last] :
           {std::pair{std::uint64_t{0}, cut1}, std::pair{cut1, cut2}, std::pair{cut2, 2 * n}}) {
        if (last <= first) continue;
        ASSERT_EQ(symbols(&point, "iq", "float32", got.data() + first, first, last - first, error,
                          sizeof error),
                  KL_FAMILY_OK)
            << error;
      }
      ASSERT_EQ(std::memcmp(got.data(), expected.data(), 8 * n), 0)
          << "first symbol: got " << got[0] << " " << got[1] << ", expected " << expected[0] << " "
          << expected[1];
      const auto soft = qam256::compute_reference(expected);
      std::vector<std::uint8_t> ref(8 * n, 0);
      const kl_family_buffer in = {"iq", "float32", got.data(), 2 * n};
      const kl_family_buffer out = {"soft", "uint8", ref.data(), 8 * n};  // family.toml's
      ASSERT_EQ(demap(&point, &in, 1, &out, 1, error, sizeof error), KL_FAMILY_OK) << error;
      EXPECT_EQ(ref, soft);
    }
  }
  // An output that does not hold 8 bytes a symbol is refused with the reason.
  std::vector<float> iq(4, 0.5f);
  std::vector<std::uint8_t> small(8);
  const kl_family_buffer in = {"iq", "float32", iq.data(), 4};
  const kl_family_buffer out = {"soft", "float32", small.data(), 2};
  char error[256] = "";
  EXPECT_EQ(demap(nullptr, &in, 1, &out, 1, error, sizeof error), KL_FAMILY_ERROR);
  EXPECT_NE(std::string(error).find("8 bytes per symbol"), std::string::npos) << error;
}

TEST(Qam256Inputs, SeededAndNoisyAsAsked) {
  const auto a = inputs(200000);
  EXPECT_EQ(a.size(), 400000u);
  EXPECT_EQ(a, inputs(200000));
  EXPECT_NE(a, inputs(200000, 8));
  // The first symbols do not depend on n (blocks of symbols have their own generators).
  const auto small = inputs(1000);
  EXPECT_TRUE(std::equal(small.begin(), small.end(), a.begin()));
  // Measured SNR at 30 dB, from the distance to the nearest constellation point: the noise's
  // sigma per axis is 0.29 in units where the points are 2 apart, so it almost never crosses a
  // boundary (1 away) and the nearest point is the one sent. (At 20 dB, sigma 0.92, it often does.)
  const auto b = inputs(200000, 7, 30);
  double signal = 0, noise = 0;
  for (std::size_t s = 0; s < b.size() / 2; ++s) {
    for (int axis = 0; axis < 2; ++axis) {
      const double v = b[2 * s + axis] * std::sqrt(170.0);
      double nearest = std::round((v - 1) / 2) * 2 + 1;
      nearest = std::max(-15.0, std::min(15.0, nearest));
      signal += nearest * nearest / 170;
      noise += (v - nearest) * (v - nearest) / 170;
    }
  }
  const double snr = 10 * std::log10(signal / noise);
  EXPECT_NEAR(snr, 30.0, 0.3);
  // 200 dB: the points themselves, to float32 precision.
  const auto clean = inputs(1000, 7, 200);
  for (float v : clean) {
    const double a_ = v * std::sqrt(170.0);
    EXPECT_NEAR(a_, std::round((a_ - 1) / 2) * 2 + 1, 1e-5);
  }
}

// The family.toml's rule: bytes, the first differing byte named with both values.
TEST(Qam256Compare, TheBytesRuleNamesTheFirstDifferingByte) {
  const auto iq = inputs(1000);
  const auto ref = qam256::compute_reference(iq);
  ASSERT_EQ(ref.size(), 8000u);
  compare_spec rule;
  rule.rule = "bytes";
  auto got = ref;
  EXPECT_TRUE(compare_buffer(rule, "soft", "uint8", got.data(), got.size(), "uint8", ref).ok);
  got[8 * 417 + 3] ^= 1;
  got[8 * 900] ^= 0x80;
  const auto r = compare_buffer(rule, "soft", "uint8", got.data(), got.size(), "uint8", ref);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.expected, "soft[3339] = " + std::to_string(ref[3339]));
  EXPECT_EQ(r.got, "soft[3339] = " + std::to_string(got[3339]));
  EXPECT_NE(r.detail.find("2 of 8000 elements"), std::string::npos) << r.detail;
}

TEST(Qam256Plans, GridAndChunks) {
  family_registry fams;
  test::register_shipped_families(fams);
  const auto* f = fams.find("qam256");
  ASSERT_NE(f, nullptr) << fams.broken("qam256");
  EXPECT_EQ(f->pipeline_axis(), "N");
  // The grids of the headers, as the tiles and the resident grid were before they were data.
  registry reg(fams);
  reg.add_source_dir(test::kernels_dir());
  const auto grid = [&](const char* name, unsigned block, std::uint64_t n, int resident) {
    const registry_entry* e = reg.find(name);
    EXPECT_NE(e, nullptr) << name;
    return f->launch(e->descriptor, block, config(n), 132, resident).grid[0];
  };
  EXPECT_EQ(grid("qam256.baseline", 256, 1, 1000), 1u);
  EXPECT_EQ(grid("qam256.baseline", 256, 257, 1000), 2u);
  EXPECT_EQ(grid("qam256.vec2_gridstride", 256, 1 << 28, 1056), 1056u);
  EXPECT_EQ(grid("qam256.vec2_gridstride", 256, 1000, 1056), 2u);
  EXPECT_EQ(grid("qam256.vec2_unroll4", 128, 1025, 1056), 2u);  // 1024 symbols a block
  // Chunks: 32-symbol multiples (256-byte aligned starts), the rest in the last one.
  EXPECT_EQ(chunk_units(1000003, 8, 32), 125024u);
  EXPECT_EQ(chunk_units(7, 8, 32), 32u);  // fewer chunks than asked: one
  EXPECT_EQ(chunk_units(std::uint64_t{1} << 27, 32, 32), std::uint64_t{1} << 22);
  EXPECT_THROW(chunk_units(0, 4, 32), std::invalid_argument);
  const auto breadth = issue_sequence("breadth", 3);
  const auto depth = issue_sequence("depth", 3);
  ASSERT_EQ(breadth.size(), 9u);
  ASSERT_EQ(depth.size(), 9u);
  EXPECT_EQ(breadth[1], (std::pair<int, unsigned>{0, 1}));  // all H2D first
  EXPECT_EQ(breadth[3], (std::pair<int, unsigned>{1, 0}));
  EXPECT_EQ(depth[1], (std::pair<int, unsigned>{1, 0}));  // chunk 0's kernel right after its H2D
  EXPECT_EQ(depth[3], (std::pair<int, unsigned>{0, 1}));
  EXPECT_THROW(issue_sequence("sideways", 3), std::invalid_argument);
}

TEST(Qam256Plans, PipelineJsonRoundTrips) {
  pipeline_report r;
  r.family = "qam256";
  r.variant = "qam256.x";
  r.block = 256;
  r.config = config(1000);
  r.bound_ms = 24.1;
  pipeline_row row;
  row.streams = 4;
  row.order = "depth";
  row.wall_ms = 26.5;
  row.valid = true;
  r.rows.push_back(row);
  const auto back = pipeline_report_from_json(to_json(r));
  EXPECT_EQ(back.variant, "qam256.x");
  EXPECT_EQ(back.family, "qam256");
  EXPECT_EQ(back.config.describe(), "float32 demap n=1000 SNR_DB=20");
  ASSERT_EQ(back.rows.size(), 1u);
  EXPECT_EQ(back.rows[0].order, "depth");
  EXPECT_EQ(back.rows[0].wall_ms, 26.5);
}

// The family as data refuses what only the C++ family took: a tile and bounds belong to the
// plan passes; qam256's grid is its grid_dims.
TEST(Qam256Header, TheFamilyChecksItsKeys) {
  family_registry fams;
  test::register_shipped_families(fams);
  const family* f = fams.find("qam256");
  ASSERT_NE(f, nullptr) << fams.broken("qam256");
  auto header = [](const std::string& extra) {
    return parse_header(
        "/* kernlab\nfamily: qam256\nentry: k<BLOCK>\nblocks: 256\n" + extra + "*/\n", "x.cu");
  };
  EXPECT_NO_THROW(f->check(header("")));
  EXPECT_NO_THROW(f->check(header("grid_dims: ceil_div(N, 2 * BLOCK)\n")));
  try {
    f->check(header("tile: BLOCK\n"));
    FAIL() << "tile: accepted";
  } catch (const metadata_error& e) {
    EXPECT_NE(std::string(e.what()).find("grid_dims"), std::string::npos) << e.what();
  }
  EXPECT_THROW(f->check(header("dtypes: int32\n")), metadata_error);
  EXPECT_THROW(f->check(header("ops: sum\n")), metadata_error);
  EXPECT_THROW(f->check(header("output: single\n")), metadata_error);
}

cli_options parse(std::vector<const char*> args) {
  args.insert(args.begin(), "kernlab");
  return parse_command_line(static_cast<int>(args.size()), args.data(), default_paths{});
}

void expect_usage_error(std::vector<const char*> args, const std::string& needle) {
  try {
    parse(args);
    FAIL() << "accepted: " << args[0];
  } catch (const usage_error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Qam256Cli, AxisAndPipelineOptions) {
  EXPECT_TRUE(parse({}).axes.empty());
  EXPECT_EQ(parse({"--axis", "SNR_DB=12.5"}).axes.at(0).points,
            (std::vector<std::vector<axis_number>>{{12.5}}));
  // A whole number is read as one (a size axis' value); a real axis takes it as that real.
  EXPECT_EQ(parse({"--axis", "SNR_DB=-3,10"}).axes.at(0).points,
            (std::vector<std::vector<axis_number>>{{-3.0}, {std::uint64_t{10}}}));
  for (const char* bad : {"nan", "NaN", "inf", "-inf", "abc", "12dB", "1e400"})
    expect_usage_error({"--axis", (std::string("SNR_DB=") + bad).c_str()}, "--axis SNR_DB");
  expect_usage_error({"--axis", "SNR_DB="}, "at least one value");
  expect_usage_error({"--axis", "12"}, "is not NAME=VALUES");
  expect_usage_error({"--axis", "SNR_DB=1", "--axis", "SNR_DB=2"}, "given twice");
  const auto o = parse({"--pipeline", "--streams", "1,3", "--issue-order", "depth", "--chunks", "7",
                        "--pipeline-runs", "2"});
  EXPECT_TRUE(o.pipeline);
  EXPECT_EQ(o.streams, (std::vector<unsigned>{1, 3}));
  EXPECT_EQ(o.issue_orders, (std::vector<std::string>{"depth"}));
  EXPECT_EQ(o.chunks, 7u);
  EXPECT_EQ(o.pipeline_runs, 2);
  EXPECT_EQ(parse({"--pipeline", "--chunks", "auto"}).chunks, 0u);
  const auto d = parse({"--pipeline"});
  EXPECT_EQ(d.streams, (std::vector<unsigned>{1, 2, 4, 8}));
  EXPECT_EQ(d.issue_orders, (std::vector<std::string>{"breadth", "depth"}));
  expect_usage_error({"--pipeline", "--streams", "0"}, "--streams");
  expect_usage_error({"--pipeline", "--streams", "two"}, "--streams");
  expect_usage_error({"--pipeline", "--issue-order", "sideways"}, "--issue-order");
  expect_usage_error({"--pipeline", "--chunks", "0"}, "--chunks");
  expect_usage_error({"--pipeline", "--pipeline-runs", "0"}, "--pipeline-runs");
  expect_usage_error({"--streams", "2"}, "does not apply to a sweep (only to --pipeline)");
  // The defaults are not "asked for": a family without int32 or sum runs its own.
  EXPECT_FALSE(parse({}).dtypes_explicit);
  EXPECT_TRUE(parse({"--op", "demap"}).ops_explicit);
}

TEST(Qam256Runner, DefaultDtypeAndOpFallBackToTheFamilys) {
  family_registry fams;
  test::register_shipped_families(fams);
  run_request r;
  r.dtypes = {"int32", "float32"};
  r.ops = {"sum"};
  r.axes = {axis_choice::shapes({{1000}})};
  r.axes.push_back(axis_choice::named("SNR_DB", {9.0, 30.0}));
  auto q = configs_for(*fams.find("qam256"), r);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].op, "demap");
  EXPECT_EQ(q[0].describe(), "float32 demap n=1000 SNR_DB=9");
  EXPECT_EQ(q[1].describe(), "float32 demap n=1000 SNR_DB=30");
  r.axes.pop_back();  // the axis' default
  EXPECT_EQ(configs_for(*fams.find("qam256"), r).at(0).describe(),
            "float32 demap n=1000 SNR_DB=20");
  EXPECT_EQ(configs_for(*fams.find("reduce"), r).size(), 2u);
  r.ops_explicit = true;  // --op sum named: qam256 has none of it
  EXPECT_TRUE(configs_for(*fams.find("qam256"), r).empty());
}

// A qam256 kernel with a param in its entry and in its grid_dims compiles, and the launch's grid
// uses the param's value.
TEST(Qam256Compile, ParamsAreTemplateArgumentsAndGridVariables) {
  test::temp_dir dir("qam256_params");
  dir.write("qam256/unrolled.cu", R"(/* kernlab
family:  qam256
entry:   unrolled<BLOCK, UNROLL>
blocks:  128 256
params:  UNROLL = 512 / BLOCK
grid_dims: ceil_div(N, UNROLL * BLOCK)
*/
#include <kernlab/qam256.cuh>
__device__ unsigned char soft(float l) {
  return static_cast<unsigned char>(fminf(fmaxf(rintf(128.0f - 8.0f * l), 0.0f), 255.0f));
}
template <unsigned BLOCK, unsigned UNROLL>
__global__ void unrolled(const float2* in, unsigned char* out, unsigned long long n) {
  for (unsigned u = 0; u < UNROLL; ++u) {
    const unsigned long long i = (blockIdx.x * 1ull * UNROLL + u) * BLOCK + threadIdx.x;
    if (i >= n) return;
    const float x = __fmul_rn(in[i].x, kl::qam256::scale), y = __fmul_rn(in[i].y, kl::qam256::scale);
    const float l2 = 8.0f - fabsf(x), l4 = 4.0f - fabsf(l2), l6 = 2.0f - fabsf(l4);
    const float l3 = 8.0f - fabsf(y), l5 = 4.0f - fabsf(l3), l7 = 2.0f - fabsf(l5);
    unsigned char* o = out + 8 * i;
    o[0] = soft(x); o[1] = soft(y); o[2] = soft(l2); o[3] = soft(l3);
    o[4] = soft(l4); o[5] = soft(l5); o[6] = soft(l6); o[7] = soft(l7);
  }
}
)");
  family_registry fams;
  test::register_shipped_families(fams);
  registry reg(fams);
  reg.add_source_dir(dir.str());
  const registry_entry* e = reg.find("qam256.unrolled");
  ASSERT_NE(e, nullptr);
  ASSERT_EQ(e->error, "");
  const problem_config c = config(1000);
  EXPECT_EQ(fams.find("qam256")->name_expression(e->descriptor, 128, c), "unrolled<128, 4>");
  EXPECT_EQ(fams.find("qam256")->name_expression(e->descriptor, 256, c), "unrolled<256, 2>");
  const auto* data = fams.find("qam256");
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->launch(e->descriptor, 128, config(1025), 132, 1).grid[0], 3u);
  EXPECT_EQ(data->launch(e->descriptor, 256, config(1025), 132, 1).grid[0], 3u);
  run_request r;
  r.variants = reg.select({"qam256.unrolled"});
  r.blocks = {128, 256};
  r.dtypes = {"float32"};
  r.ops = {"demap"};
  r.axes = {axis_choice::sizes({1})};
  r.include_dirs = {test::kernels_dir() + "/include", test::cuda_include()};
  r.compile_only = true;
  const auto sweep = runner(fams, r).run();
  ASSERT_EQ(sweep.compiles.size(), 1u);
  EXPECT_EQ(sweep.compiles[0].error, "");
  EXPECT_EQ(sweep.compiles[0].result.lowered_names.count("unrolled<256, 2>"), 1u);
}

TEST(Qam256Compile, EveryKernelFileAtEveryBlockSize) {
  family_registry fams;
  test::register_shipped_families(fams);
  registry reg(fams);
  reg.add_source_dir(test::kernels_dir());
  run_request r;
  r.variants = test::shipped_compile_selection(reg, "qam256");
  ASSERT_GE(r.variants.size(), 5u);
  // vec2_unroll is compiled whole: its two named steps and its six other points.
  std::size_t unroll_points = 0;
  for (const registry_entry* e : r.variants)
    if (e->descriptor.tunable_file == "vec2_unroll") ++unroll_points;
  EXPECT_EQ(unroll_points, 8u);
  r.blocks = {128, 256, 512, 1024};
  r.dtypes = {"float32"};
  r.ops = {"demap"};
  r.axes = {axis_choice::sizes({1})};
  r.include_dirs = {test::kernels_dir() + "/include", test::cuda_include()};
  r.compile_only = true;
  const auto sweep = runner(fams, r).run();
  // Every kernel file's points; the family's builtin copy baseline compiles nothing.
  const auto sources = std::count_if(r.variants.begin(), r.variants.end(), [](const auto* e) {
    return e->descriptor.origin == origin_kind::source;
  });
  ASSERT_EQ(sweep.compiles.size(), static_cast<std::size_t>(sources));
  for (const auto& c : sweep.compiles) {
    SCOPED_TRACE(c.entry->descriptor.qualified_name());
    EXPECT_EQ(c.error, "");
    EXPECT_EQ(c.result.lowered_names.size(), 4u);
    for (const auto& kv : c.result.resources) {
      EXPECT_GT(kv.second.registers, 0) << kv.first;
      EXPECT_EQ(kv.second.spill_store_bytes, 0) << kv.first;
    }
    EXPECT_EQ(c.result.log.find("warning"), std::string::npos) << c.result.log;
  }
}

}  // namespace
}  // namespace kl
