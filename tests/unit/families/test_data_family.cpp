// Families as data (docs/families.md): family.toml's parser and its errors, the generators, the
// comparison rules, and the binary with a family folder it does not ship. No GPU needed.
#include "cuda/device.hpp"
#include "data_family_fixture.hpp"
#include "families/family.hpp"
#include "families/half_types.hpp"
#include "registry/registry.hpp"
#include "report/table.hpp"
#include "runner/compile_stage.hpp"
#include "runner/runner.hpp"
#include "shipped_families.hpp"
#include "spec/metadata.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>

namespace kl {
namespace {

namespace fs = std::filesystem;

family_spec parse_axpy(const std::string& toml) {
  test::temp_dir dir("spec");
  dir.write("axpy/reference.cu", test::axpy_reference);
  return parse_family_spec(toml, "axpy/family.toml", (dir.path() / "axpy").string(), "axpy");
}

TEST(FamilySpec, ReadsEveryPartOfTheExample) {
  const family_spec s = parse_axpy(test::axpy_family_toml);
  EXPECT_EQ(s.name, "axpy");
  EXPECT_EQ(s.dtypes, (std::vector<std::string>{"float32", "int32"}));
  ASSERT_EQ(s.axes.size(), 1u);
  EXPECT_EQ(s.axes[0].name, "N");
  EXPECT_EQ(s.axes[0].default_value, 1000003);
  EXPECT_EQ(s.axes[0].max, 1073741824);
  ASSERT_EQ(s.buffers.size(), 3u);
  EXPECT_EQ(s.buffers[0].exact->kind, "grid");
  EXPECT_EQ(s.buffers[0].random->kind, "uniform");
  EXPECT_EQ(s.buffers[1].exact->kind, "iota");
  EXPECT_EQ(s.buffers[2].role, buffer_role::out);
  ASSERT_EQ(s.args.size(), 4u);
  EXPECT_EQ(s.args[2].buffer, "y");
  EXPECT_EQ(s.args[3].expression, "N");
  EXPECT_EQ(s.grid_dims, (std::vector<std::string>{"ceil_div(N, BLOCK)"}));
  EXPECT_EQ(s.reference.entry, "axpy_reference<T>");
  EXPECT_EQ(s.reference.type, "T");
  EXPECT_NE(s.reference.source.find("axpy_reference"), std::string::npos);
  EXPECT_EQ(s.compare.rule, "exact");
  EXPECT_EQ(s.baseline.copy_from, "x");
  EXPECT_EQ(s.baseline.copy_to, "y");
}

// Axes keep the file's order, which is --shape's order, although TOML tables are unordered.
// [reference] expected: an out buffer's answer from a file, its path resolved in the folder.
TEST(FamilySpec, ExpectedValuesFromAFile) {
  std::string toml = test::axpy_family_toml;
  const std::string from = "file = \"reference.cu\"";
  toml.replace(toml.find(from), from.size(), from + "\nexpected = { y = \"reference.cu\" }");
  const family_spec s = parse_axpy(toml);
  ASSERT_EQ(s.reference.expected.size(), 1u);
  EXPECT_EQ(fs::path(s.reference.expected.at("y")).filename(), "reference.cu");
  EXPECT_EQ(fs::path(s.reference.expected.at("y")).parent_path().filename(), "axpy");
  EXPECT_TRUE(parse_axpy(test::axpy_family_toml).reference.expected.empty());
}

TEST(FamilySpec, AxesKeepTheFileOrder) {
  std::string toml = test::axpy_family_toml;
  toml.replace(toml.find("N = {"), 0, "ROWS = { default = 3 }\nA = { default = 2 }\n");
  const family_spec s = parse_axpy(toml);
  ASSERT_EQ(s.axes.size(), 3u);
  EXPECT_EQ(s.axes[0].name, "ROWS");
  EXPECT_EQ(s.axes[1].name, "A");
  EXPECT_EQ(s.axes[2].name, "N");
}

struct mistake {
  std::string from, to;  // the edit to the example
  int line;              // the line the error must name
  std::string says;      // and a piece of its text
};

class FamilySpecMistake : public ::testing::TestWithParam<mistake> {};

// Line numbers of the example: 8 is "N = {...}", 15 the first buffer's exact, 18 the second
// [[buffers]], 27 the third's role, 31 [kernel], 32 args, 33 grid_dims, 36 the reference's file,
// 40 [compare], 44 copy.
TEST_P(FamilySpecMistake, NamesTheLineAndWhatWasExpected) {
  const mistake& m = GetParam();
  std::string toml = test::axpy_family_toml;
  const auto at = toml.find(m.from);
  ASSERT_NE(at, std::string::npos) << m.from;
  toml.replace(at, m.from.size(), m.to);
  try {
    parse_axpy(toml);
    FAIL() << "no error for " << m.to;
  } catch (const metadata_error& e) {
    EXPECT_EQ(e.line(), m.line) << e.what();
    EXPECT_NE(std::string(e.what()).find(m.says), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("axpy/family.toml:", 0), 0u) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Examples, FamilySpecMistake,
    ::testing::Values(
        mistake{"flops = \"2 * N\"", "flops = \"2 * N\"\nspeed = 3", 6, "unknown key 'speed'"},
        mistake{"[\"float32\", \"int32\"]", "[\"float32\", \"half\"]", 3, "unknown dtype 'half'"},
        mistake{"[\"float32\", \"int32\"]", "[\"float8\"]", 3, "unknown dtype 'float8'"},
        mistake{"min = 1, max", "min = 0, max", 8, "min must be at least 1"},
        mistake{"count = \"N\"\nexact", "count = \"N * M\"\nexact", 14, "unknown variable 'M'"},
        mistake{"kind = \"grid\"", "kind = \"gaussian\"", 15, "unknown generator 'gaussian'"},
        mistake{"init = { kind = \"iota\", start = -5, step = 1 }", "", 18,
                "needs 'init' (a generator)"},
        mistake{"role = \"out\"", "role = \"output\"", 27, "expected in, out, inout or workspace"},
        mistake{"role = \"out\"", "role = \"out\"\ninit = \"ones\"", 28,
                "an out buffer's init is \"zero\""},
        mistake{"role = \"out\"", "role = \"out\"\nreset = \"untimed\"", 28,
                "'reset' belongs to a buffer with a start"},
        mistake{"role = \"out\"", "role = \"out\"\ninit = \"zero\"\nreset = \"later\"", 29,
                "reset 'later': expected timed or untimed"},
        mistake{"role = \"out\"", "role = \"inout\"", 25, "input buffer y needs 'init'"},
        mistake{"role = \"out\"", "role = \"out\"\ninit = \"zero\"", 45,
                "expected the name of an out buffer (without init)"},
        mistake{"count = \"N\"\nexact", "count = \"N - 1000003\"\nexact", 14,
                "is 0 at the axes' defaults; a buffer holds at least one element"},
        mistake{"flops = \"2 * N\"", "flops = \"2 * N\"\nrequire = [\"TSIZE == 8\"]", 6,
                "does not hold at the axes' defaults for any of the family's dtypes"},
        mistake{"args = [\"x\", \"y0\", \"y\", \"N\"]", "args = [\"x\", \"y0\", \"y\", \"n\"]", 32,
                "neither a buffer nor an expression"},
        mistake{"args = [\"x\", \"y0\", \"y\", \"N\"]", "args = [\"x\", \"y\", \"N\"]", 18,
                "buffer y0 is not among [kernel] args"},
        mistake{"grid_dims = [\"ceil_div(N, BLOCK)\"]", "grid_dims = [\"ceil_div(N BLOCK)\"]", 33,
                "missing ','"},
        mistake{"file = \"reference.cu\"", "file = \"ref.cu\"", 36, "does not exist"},
        mistake{"file = \"reference.cu\"",
                "file = \"reference.cu\"\nexpected = { x = \"reference.cu\" }", 37,
                "expected: buffer x is not an out or inout buffer"},
        mistake{"file = \"reference.cu\"",
                "file = \"reference.cu\"\nexpected = { z = \"reference.cu\" }", 37,
                "expected: no buffer 'z'"},
        mistake{"file = \"reference.cu\"", "file = \"reference.cu\"\nexpected = { y = \"y.npy\" }",
                37, "y.npy does not exist"},
        mistake{"type = \"T\"\n\n[compare]\nrule = \"exact\"",
                "type = \"float64\"\nexpected = { y = \"reference.cu\" }\n\n[compare]\n"
                "rule = \"bound\"\nterms = \"N\"",
                41, "rule bound needs the magnitudes"},
        mistake{"rule = \"exact\"", "rule = \"ulp\"", 40, "rule ulp needs 'max_ulp'"},
        mistake{"rule = \"exact\"", "rule = \"close\"", 40, "expected exact, bytes, ulp"},
        mistake{"from = \"x\"", "from = \"y\"", 44, "expected the name of an in buffer"},
        mistake{"[compare]", "[compare", 40, ""},  // TOML's own syntax error
        mistake{"rule = \"exact\"", "rule = \"bound\"", 40, "rule bound needs 'terms'"},
        mistake{"rule = \"exact\"", "rule = \"bound\"\nterms = \"N\"", 40,
                "rule bound needs a reference of type float64"},
        mistake{"rule = \"exact\"", "rule = \"exact\"\nterms = \"2 * Q\"", 42,
                "unknown variable 'Q'"},
        mistake{"rule = \"exact\"", "rule = \"exact\"\n[compare.random]\nrule = \"near\"", 42,
                "expected exact, bytes, ulp, tolerance, frobenius or bound"},
        mistake{"flops = \"2 * N\"", "flops = \"2 * N\"\nrequire = [\"N < 1000\"]", 6,
                "does not hold at the axes' defaults"},
        mistake{"flops = \"2 * N\"", "flops = \"2 * N\"\nrequire = [\"N < M\"]", 6,
                "unknown variable 'M'"},
        mistake{"[kernel]\nargs", "[kernels]\nargs", 31, "unknown key 'kernels'"},
        mistake{"flops = \"2 * N\"", "flops = \"2 * N\"\nroofline = \"fp65\"", 6,
                "roofline 'fp65': expected bandwidth, compute, tensor, tf32 or fp64"}));

// Every roofline word is read, and is the word the family's records carry.
TEST(FamilySpec, EveryRooflineWordIsRead) {
  for (const std::string word : {"bandwidth", "compute", "tensor", "tf32", "fp64"}) {
    SCOPED_TRACE(word);
    std::string toml = test::axpy_family_toml;
    toml.replace(toml.find("flops = \"2 * N\""), 15,
                 "flops = \"2 * N\"\nroofline = \"" + word + "\"");
    const family_spec s = parse_axpy(toml);
    EXPECT_EQ(s.roofline, word);
    EXPECT_EQ(roofline_word(family(s, {}).roofline()), word);
  }
}

TEST(FamilySpec, ExpressionsGainMinMaxAndCeilDiv) {
  family_registry fams;
  test::temp_dir dir("axpy_vars");
  test::write_axpy_family(dir);
  add_data_families(fams, {dir.str()}, {});
  const auto* f = fams.find("axpy");
  ASSERT_NE(f, nullptr) << fams.broken("axpy");
  problem_config c{"float32", "", "exact", 1, {{"N", std::uint64_t{7}}}};
  EXPECT_EQ(f->axis_variables(c).at("N"), 7);
  EXPECT_EQ(f->problem_bytes(c), 3.0 * 7 * 4);
  EXPECT_EQ(f->problem_flops(c), 14.0);
  c.axes = {{"N", std::uint64_t{0}}};
  EXPECT_THROW(f->axis_variables(c), std::invalid_argument);  // below min
  c.axes = {{"N", std::uint64_t{1}}, {"", std::uint64_t{2}}};
  EXPECT_THROW(f->axis_variables(c), std::invalid_argument);  // one axis, two values
}

TEST(Generators, DependOnlyOnSeedNameAndIndex) {
  generator_spec g;
  g.kind = "grid";
  g.den = 4;
  g.min = -100;
  g.max = 100;
  const auto a = generate_buffer(g, "float32", 1000, 7, "x");
  const auto b = generate_buffer(g, "float32", 1000, 7, "x");
  const auto longer = generate_buffer(g, "float32", 2000, 7, "x");
  EXPECT_EQ(a, b);
  EXPECT_TRUE(std::equal(a.begin(), a.end(), longer.begin()));  // the count changes nothing
  EXPECT_NE(a, generate_buffer(g, "float32", 1000, 8, "x"));    // the seed does
  EXPECT_NE(a, generate_buffer(g, "float32", 1000, 7, "y"));    // so does the buffer's name
  bool low = false, high = false;
  for (std::size_t i = 0; i < 1000; ++i) {
    float v;
    std::memcpy(&v, a.data() + 4 * i, 4);
    EXPECT_EQ(v * 4, std::floor(v * 4)) << v;  // k / 4: exact
    EXPECT_GE(v, -100);
    EXPECT_LE(v, 100);
    low |= v < -90;
    high |= v > 90;
  }
  EXPECT_TRUE(low && high);
}

TEST(Generators, EachKind) {
  auto values = [](const generator_spec& g, const std::string& dtype, std::size_t n) {
    const auto bytes = generate_buffer(g, dtype, n, 1, "b");
    std::vector<double> out;
    for (std::size_t i = 0; i < n; ++i) {
      if (dtype == "int32") {
        std::int32_t x;
        std::memcpy(&x, bytes.data() + 4 * i, 4);
        out.push_back(x);
      } else {
        double x;
        std::memcpy(&x, bytes.data() + 8 * i, 8);
        out.push_back(x);
      }
    }
    return out;
  };
  generator_spec iota;
  iota.kind = "iota";
  iota.start = -2;
  iota.step = 3;
  EXPECT_EQ(values(iota, "int32", 4), (std::vector<double>{-2, 1, 4, 7}));
  generator_spec constant;
  constant.kind = "constant";
  constant.value = 2.5;
  EXPECT_EQ(values(constant, "float64", 2), (std::vector<double>{2.5, 2.5}));
  generator_spec normal;
  normal.kind = "normal";
  normal.mean = 10;
  normal.stddev = 2;
  const auto n = values(normal, "float64", 20000);
  double sum = 0, sq = 0;
  for (double v : n) sum += v, sq += v * v;
  const double mean = sum / n.size(), var = sq / n.size() - mean * mean;
  EXPECT_NEAR(mean, 10, 0.1);
  EXPECT_NEAR(std::sqrt(var), 2, 0.1);
  generator_spec uniform;
  uniform.kind = "uniform";
  uniform.min = 1;
  uniform.max = 2;
  for (double v : values(uniform, "float64", 1000)) {
    EXPECT_GE(v, 1);
    EXPECT_LT(v, 2);
  }
}

// A version 1.0 .npy file of `count` elements of NumPy type `descr`, holding `data`.
std::string npy_file(const std::string& descr, std::size_t count, const std::string& data) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" +
                       std::to_string(count) + ",), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  return file + header + data;
}

TEST(Generators, ReadsNpyFiles) {
  test::temp_dir dir("npy");
  // Three little-endian float32: 1.5, -2, 8.
  const float data[3] = {1.5f, -2.0f, 8.0f};
  generator_spec g;
  g.kind = "npy";
  g.file = dir.write(
      "x.npy", npy_file("<f4", 3, std::string(reinterpret_cast<const char*>(data), sizeof data)));
  const auto bytes = generate_buffer(g, "float32", 3, 1, "x");
  ASSERT_EQ(bytes.size(), 12u);
  EXPECT_EQ(std::memcmp(bytes.data(), data, 12), 0);
  EXPECT_THROW(generate_buffer(g, "float32", 4, 1, "x"), std::runtime_error);  // too few
  EXPECT_THROW(generate_buffer(g, "int32", 3, 1, "x"), std::runtime_error);    // wrong dtype
  // uint8, which NumPy writes as '|u1' (no byte order).
  g.file = dir.write("u.npy", npy_file("|u1", 2, "\x07\xf0"));
  EXPECT_EQ(generate_buffer(g, "uint8", 2, 1, "u"), (std::vector<std::uint8_t>{7, 0xf0}));
}

std::vector<std::uint8_t> floats(std::initializer_list<float> v) {
  std::vector<std::uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.begin(), out.size());
  return out;
}
std::vector<std::uint8_t> doubles(std::initializer_list<double> v) {
  std::vector<std::uint8_t> out(v.size() * 8);
  std::memcpy(out.data(), v.begin(), out.size());
  return out;
}

TEST(CompareRules, ReportTheFirstMismatchWithItsIndex) {
  compare_spec exact;
  const auto ok =
      compare_buffer(exact, "y", "float32", floats({1, 2, 3}), "float32", floats({1, 2, 3}));
  EXPECT_TRUE(ok.ok);
  const auto bad =
      compare_buffer(exact, "y", "float32", floats({1, 2.5f, 4}), "float32", floats({1, 2, 3}));
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.expected, "y[1] = 2");
  EXPECT_EQ(bad.got, "y[1] = 2.5");
  EXPECT_NE(bad.detail.find("2 of 3 elements"), std::string::npos) << bad.detail;
}

// The comparison runs in chunks on every core: mismatches in several chunks are all counted, the
// first by index is named, and the worst error is the worst of all chunks.
TEST(CompareRules, MismatchesInSeveralChunksNameTheFirstAndTheWorst) {
  std::vector<std::uint8_t> ref(10000 * 4), got;
  for (int i = 0; i < 10000; ++i) {
    const float v = static_cast<float>(i % 97);
    std::memcpy(ref.data() + 4 * i, &v, 4);
  }
  got = ref;
  const auto plant = [&](int i, float v) { std::memcpy(got.data() + 4 * i, &v, 4); };
  plant(9999, 1000.0f);
  plant(4321, 7.0f);  // 4321 % 97 = 53: off by 46
  plant(8000, 500.5f);
  compare_spec tol;
  tol.rule = "tolerance";
  tol.abs = 0.25;
  const auto r = compare_buffer(tol, "y", "float32", got, "float32", ref);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.expected, "y[4321] = 53");
  EXPECT_EQ(r.got, "y[4321] = 7");
  EXPECT_NE(r.detail.find("3 of 10000 elements"), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find("worst 992"), std::string::npos) << r.detail;  // 1000 - 9999 % 97
}

// bound: |got - ref| <= terms * eps * magnitude, the magnitude from the reference; NaN fails,
// and integers (eps 0) must be exact.
TEST(CompareRules, BoundScalesWithTermsAndTheReferencesMagnitude) {
  compare_spec bound;
  bound.rule = "bound";
  bound.terms = "K";
  const double eps = std::ldexp(1.0, -23);
  const auto mag = doubles({100.0, 100.0});
  // terms 4: 4 * eps * 100 allowed.
  EXPECT_TRUE(compare_buffer(bound, "C", "float32", floats({1.0f, 2.0f}), "float64",
                             doubles({1.0 + 399 * eps, 2.0}), &mag, 4)
                  .ok);
  const auto off = compare_buffer(bound, "C", "float32", floats({1.0f, 2.0f}), "float64",
                                  doubles({1.0, 2.0 + 401 * eps}), &mag, 4);
  EXPECT_FALSE(off.ok);
  EXPECT_EQ(off.got, "C[1] = 2");
  EXPECT_NE(off.expected.find("C[1] = 2.0000"), std::string::npos) << off.expected;
  EXPECT_NE(off.expected.find(" +- "), std::string::npos) << off.expected;
  EXPECT_NE(off.detail.find("1 of 2 elements outside the rule (bound"), std::string::npos)
      << off.detail;
  EXPECT_FALSE(compare_buffer(bound, "C", "float32", floats({NAN, 2.0f}), "float64",
                              doubles({1.0, 2.0}), &mag, 4)
                   .ok);
  // No magnitudes: a rule bound cannot be applied, which is kernlab's mistake, not the kernel's.
  EXPECT_THROW(compare_buffer(bound, "C", "float32", floats({1.0f}), "float64", doubles({1.0})),
               std::invalid_argument);
  // int32: eps is 0, so the bound is exact.
  std::vector<std::uint8_t> ints(4), ref_ints(8);
  const std::int32_t seven = 7;
  const double six = 6;
  std::memcpy(ints.data(), &seven, 4);
  std::memcpy(ref_ints.data(), &six, 8);
  EXPECT_FALSE(compare_buffer(bound, "C", "int32", ints, "float64", ref_ints, &mag, 1000).ok);
}

// [compare.random] replaces [compare] for random inputs only; `require` refuses shapes.
TEST(FamilySpec, CompareRandomAndRequire) {
  std::string toml = test::axpy_family_toml;
  toml.replace(toml.find("type = \"T\"\n\n[compare]"), 10, "type = \"float64\"");
  toml.replace(toml.find("rule = \"exact\""), 14,
               "rule = \"exact\"\n[compare.random]\nrule = \"bound\"\nterms = \"2 * N\"");
  toml.replace(toml.find("flops = \"2 * N\""), 15, "flops = \"2 * N\"\nrequire = [\"N % 2 == 1\"]");
  const family_spec s = parse_axpy(toml);
  EXPECT_EQ(s.compare_for("exact").rule, "exact");
  EXPECT_EQ(s.compare_for("random").rule, "bound");
  EXPECT_EQ(s.compare_for("random").terms, "2 * N");
  EXPECT_TRUE(s.reference_magnitudes());
  ASSERT_EQ(s.requires.size(), 1u);
  EXPECT_EQ(s.requires[0].line, 6);
  family f(s, {});
  problem_config c;
  c.dtype = "float32";
  c.axes = {{"N", std::uint64_t{1001}}};
  EXPECT_NO_THROW(f.axis_variables(c));
  c.axes = {{"N", std::uint64_t{1000}}};
  try {
    f.axis_variables(c);
    ADD_FAILURE() << "an even N was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("does not meet 'N % 2 == 1' (axpy/family.toml:6)"),
              std::string::npos)
        << e.what();
  }
}

// A family's require sees the dtype: TSIZE, and DTYPE against a dtype's name. It must hold at the
// defaults for one of the family's dtypes (once TSIZE was 4 there whatever the dtypes).
TEST(FamilySpec, RequireSeesTheDtype) {
  std::string toml = test::axpy_family_toml;
  toml.replace(toml.find("flops = \"2 * N\""), 15,
               "flops = \"2 * N\"\nrequire = [\"DTYPE != int32 || N * TSIZE < 8000000\"]");
  family f(parse_axpy(toml), {});
  problem_config c{"int32", "", "exact", 1, {{"N", std::uint64_t{1999999}}}};
  EXPECT_NO_THROW(f.axis_variables(c));
  c.axes = {{"N", std::uint64_t{2000000}}};
  EXPECT_THROW(f.axis_variables(c), std::invalid_argument);
  c.dtype = "float32";
  EXPECT_NO_THROW(f.axis_variables(c));
  std::string wide = test::axpy_family_toml;
  const std::string both = "[\"float32\", \"int32\"]";
  wide.replace(wide.find(both), both.size(), "[\"float64\"]");
  wide.replace(wide.find("flops = \"2 * N\""), 15, "flops = \"2 * N\"\nrequire = [\"TSIZE == 8\"]");
  EXPECT_NO_THROW(parse_axpy(wide));
}

// Every expression at a configuration a command asks for, evaluated as the run will: an overflow
// is an error naming the expression and its line, and a count whose bytes wrap past 2^64 (once a
// small allocation written in full by the generator) is refused, as is the generator's own
// allocation.
TEST(FamilyExpressions, OverflowsAtARequestedSizeNameTheirLine) {
  std::string toml = test::axpy_family_toml;
  toml.replace(toml.find("count = \"N\"\nexact"), 11, "count = \"N * N * N\"");
  family f(parse_axpy(toml), {});
  problem_config c{"float32", "", "exact", 1, {{"N", std::uint64_t{1000003}}}};
  EXPECT_NO_THROW(f.check_configuration(c));
  c.axes = {{"N", std::uint64_t{1073741824}}};
  try {
    f.check_configuration(c);
    ADD_FAILURE() << "an overflow was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "axpy: buffer x's count at float32 n=1073741824: in expression 'N * N * N': the "
                  "value does not fit in 64 bits (axpy/family.toml:10)"),
              std::string::npos)
        << e.what();
  }
  std::string wraps = test::axpy_family_toml;  // 2^62 float32s at N = 1: 2^64 bytes
  wraps.replace(wraps.find("default = 1000003"), 17, "default = 1");
  wraps.replace(wraps.find("count = \"N\"\nexact"), 11,
                "count = \"N * 1073741824 * 1073741824 * 4\"");
  family w(parse_axpy(wraps), {});
  c.axes = {{"N", std::uint64_t{1}}};
  for (const auto& check : std::vector<std::function<void()>>{[&] { w.check_configuration(c); },
                                                              [&] { w.device_bytes_needed(c); }}) {
    try {
      check();
      ADD_FAILURE() << "2^64 bytes were accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("4611686018427387904 elements of float32 are more bytes "
                                           "than 64 bits count (axpy/family.toml:10)"),
                std::string::npos)
          << e.what();
    }
  }
  generator_spec g;
  g.kind = "constant";
  EXPECT_THROW(generate_buffer(g, "float32", std::uint64_t{1} << 62, 1, "x"),
               std::invalid_argument);
  // An argument its type cannot hold: N as an int32 past 2^31 - 1.
  std::string big = test::axpy_family_toml;
  big.replace(big.find("max = 1073741824"), 16, "max = 4294967296");
  family b(parse_axpy(big), {});
  c.axes = {{"N", std::uint64_t{2147483648}}};
  try {
    b.check_configuration(c);
    ADD_FAILURE() << "N past 2^31 - 1 was passed as an int32";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("axpy: argument 'N' is 2147483648 at float32 "
                                         "n=2147483648, which its type int32 cannot hold "
                                         "(axpy/family.toml:32)"),
              std::string::npos)
        << e.what();
  }
}

// The same before anything runs, through the binary: a --size inside the axis' limits at which a
// count overflows, or a header's grid does, is a usage error naming the option and the line
// (once exit code 1, "in expression ...", naming neither).
TEST(FamilyExpressions, AnOverflowAtARequestedSizeIsAUsageError) {
  test::temp_dir dir("axpy_overflow");
  test::write_axpy_family(dir);
  ASSERT_TRUE(test::replace_in_file(dir.str() + "/axpy/family.toml", "count = \"N\"\nexact",
                                    "count = \"N * N * N\"\nexact"));
  const std::string base =
      "--kernels-dir " + dir.str() + " --family axpy --compile-only --no-cache ";
  const auto ok = test::run_kernlab(base + "--size 1000003");
  EXPECT_EQ(ok.code, 0) << ok.output;
  const auto big = test::run_kernlab(base + "--size 2^30");
  EXPECT_EQ(big.code, 2) << big.output;
  EXPECT_NE(big.output.find("--size 1073741824: axpy: buffer x's count at int32 n=1073741824: in "
                            "expression 'N * N * N': the value does not fit in 64 bits (" +
                            dir.str() + "/axpy/family.toml:10)"),
            std::string::npos)
      << big.output;

  test::temp_dir grid("axpy_grid_overflow");
  test::write_axpy_family(grid);
  std::string wide = test::axpy_simple;
  wide.replace(wide.find("summary:"), 0, "grid_dims: ceil_div(N * N * N, BLOCK)\n");
  grid.write("axpy/simple.cu", wide);
  const auto launch = test::run_kernlab("--kernels-dir " + grid.str() +
                                        " --family axpy --compile-only --no-cache --block 256 "
                                        "--dtype float32 --size 2^30");
  EXPECT_EQ(launch.code, 2) << launch.output;
  EXPECT_NE(launch.output.find("--size 1073741824: axpy.simple block 256 at float32 n=1073741824: "
                               "grid_dims: in expression 'ceil_div(N * N * N, BLOCK)': the value "
                               "does not fit in 64 bits (" +
                               grid.str() + "/axpy/simple.cu:5)"),
            std::string::npos)
      << launch.output;
}

// Buffers with a start: an out buffer the kernels accumulate into starts at zero (init = "zero"),
// an inout buffer is generated, changed in place and compared; either is reset inside the timed
// region or outside it. The family compiles, its reference too.
TEST(FamilySpec, BuffersWithAStart) {
  test::temp_dir dir("hist_spec");
  test::write_hist_family(dir, /*wrong=*/true);
  const family_spec s = load_family_spec(dir.str() + "/hist");
  ASSERT_EQ(s.buffers.size(), 3u);
  EXPECT_FALSE(s.buffers[0].has_start());
  EXPECT_TRUE(s.buffers[1].zero);
  EXPECT_TRUE(s.buffers[1].reset_timed);
  EXPECT_TRUE(s.buffers[1].is_output() && !s.buffers[1].is_input());
  EXPECT_EQ(s.buffers[2].role, buffer_role::inout);
  EXPECT_TRUE(s.buffers[2].is_output() && s.buffers[2].is_input() && s.buffers[2].has_start());
  EXPECT_FALSE(s.buffers[2].reset_timed);
  EXPECT_EQ(s.buffers[2].exact->kind, "iota");
  // An inout buffer is read and written.
  family f(s, {});
  const problem_config c{
      "float32", "", "exact", 1, {{"ROWS", std::uint64_t{1000}}, {"COLS", std::uint64_t{16}}}};
  EXPECT_EQ(f.problem_bytes(c), 1000.0 * 4 + 16 * 4 + 2 * 1000.0 * 4);
  const auto compiled = test::run_kernlab("--kernels-dir " + dir.str() +
                                          " --family hist --block all --dtype int32,float32 "
                                          "--compile-only --no-cache");
  EXPECT_EQ(compiled.code, 0) << compiled.output;
  for (const char* v : {"hist.atomic", "hist.forgets_last", "hist.reference"})
    EXPECT_NE(compiled.output.find(v), std::string::npos) << v << "\n" << compiled.output;
  EXPECT_EQ(test::count_of(compiled.output, " ok\n"), 3u) << compiled.output;
  // The pipeline cuts buffers into chunks, and would not put a start back per chunk.
  try {
    parse_family_spec(std::string(test::hist_family_toml) + "\n[pipeline]\naxis = \"N\"\n",
                      "hist/family.toml", dir.str() + "/hist", "hist");
    ADD_FAILURE() << "a [pipeline] took a buffer with a start";
  } catch (const metadata_error& e) {
    EXPECT_EQ(e.line(), 16) << e.what();
    EXPECT_NE(std::string(e.what()).find("buffer bins has a start"), std::string::npos) << e.what();
  }
}

// --compile-only and --resources compile the family's reference for the dtypes and ops asked
// for: a typo in reference.cu or in its entry fails the command with the compiler's file:line
// (once exit code 0, and every row FAILED on a GPU later).
TEST(DataFamilyBinary, CompileOnlyCompilesTheReference) {
  test::temp_dir dir("axpy_bad_reference");
  test::write_axpy_family(dir);
  const std::string base = "--kernels-dir " + dir.str() + " --family axpy --no-cache ";
  const auto good = test::run_kernlab(base + "--compile-only");
  EXPECT_EQ(good.code, 0) << good.output;
  EXPECT_NE(good.output.find("axpy.reference"), std::string::npos) << good.output;

  std::string typo = test::axpy_reference;
  typo.replace(typo.find("x[i] + y0[i]"), 12, "x[i] + yy[i]");
  dir.write("axpy/reference.cu", typo);
  for (const char* mode : {"--compile-only", "--resources"}) {
    SCOPED_TRACE(mode);
    const auto bad = test::run_kernlab(base + mode);
    EXPECT_EQ(bad.code, 1) << bad.output;
    EXPECT_NE(bad.output.find(dir.str() + "/axpy/reference.cu:4"), std::string::npos) << bad.output;
    EXPECT_NE(bad.output.find("identifier \"yy\" is undefined"), std::string::npos) << bad.output;
  }
  dir.write("axpy/reference.cu", test::axpy_reference);
  ASSERT_TRUE(test::replace_in_file(dir.str() + "/axpy/family.toml", "axpy_reference<T>",
                                    "axpy_referenc<T>"));
  const auto entry = test::run_kernlab(base + "--compile-only");
  EXPECT_EQ(entry.code, 1) << entry.output;
  EXPECT_NE(entry.output.find("axpy.reference"), std::string::npos) << entry.output;
  EXPECT_NE(entry.output.find("axpy_referenc"), std::string::npos) << entry.output;
}

TEST(CompareRules, UlpIsMeasuredAtTheReference) {
  compare_spec ulp;
  ulp.rule = "ulp";
  ulp.max_ulp = 2;
  const double one_ulp = std::ldexp(1.0, -23);  // float32's spacing in [1, 2)
  EXPECT_TRUE(
      compare_buffer(ulp, "y", "float32", floats({1.0f + 2 * 0x1p-23f}), "float64", doubles({1.0}))
          .ok);
  EXPECT_FALSE(
      compare_buffer(ulp, "y", "float32", floats({1.0f + 3 * 0x1p-23f}), "float64", doubles({1.0}))
          .ok);
  // Half an ulp away from a double reference is 0.5 ulp.
  EXPECT_TRUE(
      compare_buffer(ulp, "y", "float32", floats({1.0f}), "float64", doubles({1.0 + one_ulp / 2}))
          .ok);
  EXPECT_FALSE(compare_buffer(ulp, "y", "float32", floats({NAN}), "float64", doubles({1.0})).ok);
  // Tiny values: the denormal spacing, so zero against 1e-45 is one ulp.
  EXPECT_TRUE(
      compare_buffer(ulp, "y", "float32", floats({0.0f}), "float64", doubles({1.4e-45})).ok);
}

TEST(CompareRules, ToleranceFrobeniusAndBytes) {
  compare_spec tol;
  tol.rule = "tolerance";
  tol.abs = 0.01;
  tol.rel = 0.1;
  EXPECT_TRUE(compare_buffer(tol, "y", "float32", floats({10.9f}), "float64", doubles({10})).ok);
  EXPECT_FALSE(compare_buffer(tol, "y", "float32", floats({11.2f}), "float64", doubles({10})).ok);
  EXPECT_FALSE(
      compare_buffer(tol, "y", "float32", floats({INFINITY}), "float64", doubles({10})).ok);
  compare_spec frob;
  frob.rule = "frobenius";
  frob.tol = 1e-3;
  EXPECT_TRUE(
      compare_buffer(frob, "y", "float32", floats({1, 1000.5f}), "float64", doubles({1, 1000})).ok);
  EXPECT_FALSE(
      compare_buffer(frob, "y", "float32", floats({2, 1000}), "float64", doubles({1, 10})).ok);
  compare_spec bytes;
  bytes.rule = "bytes";
  // -0 and +0 are equal numbers but different bytes.
  EXPECT_TRUE(
      compare_buffer(compare_spec{}, "y", "float32", floats({-0.0f}), "float32", floats({0.0f}))
          .ok);
  EXPECT_FALSE(
      compare_buffer(bytes, "y", "float32", floats({-0.0f}), "float32", floats({0.0f})).ok);
}

// When the copy baseline is the fastest row (it is the family's bound), the table still names
// the best variant compiled here and its ratio to the copy.
TEST(DataFamilyTable, TheBestCompiledVariantBesideAFasterCopy) {
  family_registry fams;
  test::temp_dir dir("axpy_table");
  test::write_axpy_family(dir);
  add_data_families(fams, {dir.str()}, {});
  auto row = [](const std::string& name, origin_kind origin, double median_us) {
    result_record r;
    r.variant.family = "axpy";
    r.variant.name = name;
    r.variant.origin = origin;
    r.variant.is_baseline = origin == origin_kind::builtin;
    r.config = {"float32", "", "exact", 1, {{"N", std::uint64_t{1000003}}}};
    r.block = origin == origin_kind::builtin ? 0 : 256;
    r.status = outcome::passed;
    r.bytes = 12.0 * 1000003;
    r.roofline = "bandwidth";
    timing_stats t;
    t.samples = 100;
    t.median_ms = t.min_ms = t.max_ms = t.mean_ms = median_us / 1e3;
    r.timing = t;
    return r;
  };
  cuda::device_info d;
  d.name = "Test H100";
  d.cc_major = 9;
  d.sm_count = 132;
  d.mem_clock_khz = 2619000;
  d.bus_width_bits = 5120;
  d.l2_bytes = 50u << 20;
  table_options opt;
  opt.families = &fams;
  std::ostringstream os;
  print_group(
      os, {row("simple", origin_kind::source, 10.0), row("d2d_copy", origin_kind::builtin, 8.0)}, d,
      opt);
  const std::string out = os.str();
  EXPECT_NE(out.find("best: d2d_copy"), std::string::npos) << out;
  EXPECT_NE(out.find("best compiled here: simple block 256, 1200.0 GB/s, 0.80x of d2d_copy"),
            std::string::npos)
      << out;
}

// The binary, with a family folder that kernlab does not ship: listed with its axes, its
// variants and its baseline, and compiled at every block size and dtype, with no rebuild.
TEST(DataFamilyBinary, ListsAndCompilesAFolderItDoesNotShip) {
  test::temp_dir dir("axpy_bin");
  test::write_axpy_family(dir);
  const auto list = test::run_kernlab("--kernels-dir " + dir.str() + " --family axpy --list");
  EXPECT_EQ(list.code, 0) << list.output;
  EXPECT_NE(list.output.find("family axpy: axes N=1000003 [1..1073741824]"), std::string::npos)
      << list.output;
  EXPECT_NE(list.output.find("dtypes float32, int32"), std::string::npos) << list.output;
  for (const char* v : {"axpy.simple", "axpy.gridstride", "axpy.d2d_copy"})
    EXPECT_NE(list.output.find(v), std::string::npos) << v << "\n" << list.output;
  EXPECT_EQ(list.output.find("axpy.reference"), std::string::npos) << list.output;
  const auto compiled = test::run_kernlab("--kernels-dir " + dir.str() +
                                          " --family axpy --block all --dtype float32,int32 "
                                          "--compile-only --no-cache");
  EXPECT_EQ(compiled.code, 0) << compiled.output;
  // simple<T> and gridstride<T>: one instance per dtype, whatever the block.
  EXPECT_NE(compiled.output.find("axpy.simple                      2"), std::string::npos)
      << compiled.output;
  EXPECT_NE(compiled.output.find("axpy.gridstride                  2"), std::string::npos)
      << compiled.output;
  // And the reference, for both dtypes.
  EXPECT_NE(compiled.output.find("axpy.reference                   2"), std::string::npos)
      << compiled.output;
  EXPECT_EQ(test::count_of(compiled.output, " ok\n"), 3u) << compiled.output;
}

// A mistake in one family.toml costs that family alone: its variants are listed with the error
// (file:line), asking for it by name is a usage error, and every other family still compiles.
TEST(DataFamilyBinary, ABrokenDescriptionCostsItsOwnFamilyOnly) {
  test::temp_dir dir("axpy_broken");
  test::write_axpy_family(dir);
  std::string broken = test::axpy_family_toml;
  broken.replace(broken.find("rule = \"exact\""), 14, "rule = \"close\"");
  dir.write("bent/family.toml", broken);
  dir.write("bent/reference.cu", test::axpy_reference);
  std::string variant = test::axpy_simple;
  variant.replace(variant.find("family:  axpy"), 13, "family:  bent");
  dir.write("bent/simple.cu", variant);
  const std::string where = dir.str() + "/bent/family.toml:40:";

  const auto list = test::run_kernlab("--kernels-dir " + dir.str() + " --family bent --list");
  EXPECT_EQ(list.code, 0) << list.output;
  EXPECT_NE(list.output.find("family bent: ERROR " + where), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("ERROR " + where), std::string::npos) << list.output;

  const auto asked =
      test::run_kernlab("--kernels-dir " + dir.str() + " --family bent --compile-only");
  EXPECT_EQ(asked.code, 2) << asked.output;
  EXPECT_NE(asked.output.find(where), std::string::npos) << asked.output;
  EXPECT_NE(asked.output.find("expected exact, bytes, ulp"), std::string::npos) << asked.output;

  const auto other =
      test::run_kernlab("--kernels-dir " + dir.str() + " --family axpy --compile-only --no-cache");
  EXPECT_EQ(other.code, 0) << other.output;

  // Every variant at once: the broken family's rows fail with the error, the others compile.
  const auto all =
      test::run_kernlab("--kernels-dir " + dir.str() + " --variant all --compile-only --no-cache");
  EXPECT_EQ(all.code, 1) << all.output;
  EXPECT_NE(all.output.find("axpy.simple"), std::string::npos) << all.output;
  EXPECT_NE(all.output.find(where), std::string::npos) << all.output;
}

// A [pipeline] cuts every buffer into slices of the axis: a count that is not the axis times a
// constant is the family's error, with the buffer's line.
TEST(FamilySpec, APipelineNeedsCountsThatAreTheAxisTimesAConstant) {
  std::string toml = test::axpy_family_toml;
  toml.replace(toml.find("count = \"N\"\nexact"), 11, "count = \"N + 1\"");
  toml += "\n[pipeline]\naxis = \"N\"\n";
  try {
    parse_axpy(toml);
    ADD_FAILURE() << "a count of N + 1 was cut into slices";
  } catch (const metadata_error& e) {
    EXPECT_EQ(e.line(), 10) << e.what();
    EXPECT_NE(std::string(e.what()).find("buffer x's count 'N + 1' is not a multiple of N"),
              std::string::npos)
        << e.what();
  }
}

// A --dtype asked of a broken family's variants names that family and its error: its dtypes
// are unknown (once "family  has no dtype 'uint8'", with no name).
TEST(DataFamilyBinary, ADtypeAskedOfABrokenFamilyNamesItsError) {
  test::temp_dir dir("axpy_broken_dtype");
  test::write_axpy_family(dir);
  std::string broken = test::axpy_family_toml;
  broken.replace(broken.find("rule = \"exact\""), 14, "rule = \"close\"");
  dir.write("bent/family.toml", broken);
  dir.write("bent/reference.cu", test::axpy_reference);
  std::string variant = test::axpy_simple;
  variant.replace(variant.find("family:  axpy"), 13, "family:  bent");
  dir.write("bent/simple.cu", variant);
  const std::string where = dir.str() + "/bent/family.toml:40:";
  const std::string base = "--kernels-dir " + dir.str() + " --compile-only --no-cache ";

  const auto alone = test::run_kernlab(base + "--variant bent.simple --dtype uint8");
  EXPECT_EQ(alone.code, 2) << alone.output;
  EXPECT_NE(alone.output.find("--dtype: no selected family is known to have dtype 'uint8': the "
                              "description of bent cannot be used (" +
                              where),
            std::string::npos)
      << alone.output;
  EXPECT_EQ(alone.output.find("family  has"), std::string::npos) << alone.output;

  const auto both = test::run_kernlab(base + "--variant bent.simple,axpy.simple --dtype uint8");
  EXPECT_EQ(both.code, 2) << both.output;
  EXPECT_NE(both.output.find("--dtype: family axpy has no dtype 'uint8', and the description of "
                             "bent cannot be used (" +
                             where),
            std::string::npos)
      << both.output;
}

// A [pipeline] whose buffer count overflows where the pipeline is probed (at a chunk of 1000003
// units, within the axis' limits) is that family's error, with the buffer's line: once the
// expression's error escaped and every command, --list included, failed without naming the
// file.
TEST(DataFamilyBinary, APipelineCountThatOverflowsCostsItsOwnFamilyOnly) {
  test::temp_dir dir("axpy_pipeline_overflow");
  test::write_axpy_family(dir);
  std::string bent = test::axpy_family_toml;
  bent.replace(bent.find("default = 1000003"), 17, "default = 1000");
  bent.replace(bent.find("count = \"N\""), 11, "count = \"N * 1000000 * 10000000\"");
  bent += "\n[pipeline]\naxis = \"N\"\n";
  dir.write("bent/family.toml", bent);
  dir.write("bent/reference.cu", test::axpy_reference);
  std::string variant = test::axpy_simple;
  variant.replace(variant.find("family:  axpy"), 13, "family:  bent");
  dir.write("bent/simple.cu", variant);

  const auto list = test::run_kernlab("--kernels-dir " + dir.str() + " --list");
  EXPECT_EQ(list.code, 0) << list.output;
  EXPECT_NE(list.output.find("family bent: ERROR " + dir.str() +
                             "/bent/family.toml:10: [pipeline]: buffer x's count at N = 1000003: "
                             "in expression 'N * 1000000 * 10000000': the value does not fit in "
                             "64 bits"),
            std::string::npos)
      << list.output;
  EXPECT_NE(list.output.find("axpy.simple"), std::string::npos) << list.output;

  const auto other =
      test::run_kernlab("--kernels-dir " + dir.str() + " --family axpy --compile-only --no-cache");
  EXPECT_EQ(other.code, 0) << other.output;
}

// A kernel file with tunables is one variant per point of its space, selected by the file's
// name, or a point (or a part of the space) by a wildcard; a data family's launch sees them.
TEST(TunableBinary, EveryPointIsAVariantCompiledWithItsValues) {
  test::temp_dir dir("tunable_bin");
  test::write_axpy_family(dir);
  dir.write("axpy/chunks.cu", R"kl(/* kernlab
family:    axpy
entry:     chunks<T, ITEMS>
blocks:    128 256 512 1024
tune:      ITEMS = 1..8 pow2; SPARE = 0, 1
require:   BLOCK * ITEMS <= 2048; SPARE <= ITEMS / 4
grid_dims: ceil_div(N, BLOCK * ITEMS)
summary:   ITEMS consecutive elements per thread
*/
template <typename T, int ITEMS>
__global__ void chunks(const T* x, const T* y0, T* y, int n) {
  const long long first = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * ITEMS;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k)
    if (first + k < n) y[first + k] = T(3) * x[first + k] + y0[first + k];
}
)kl");
  const std::string base = "--kernels-dir " + dir.str() + " --family axpy --no-cache ";
  const auto list = test::run_kernlab(base + "--variant chunks --list");
  EXPECT_EQ(list.code, 0) << list.output;
  // ITEMS 1, 2, 4, 8 with SPARE 0; SPARE 1 needs ITEMS >= 4.
  for (const char* p : {"axpy.chunks[ITEMS=1;SPARE=0]", "axpy.chunks[ITEMS=4;SPARE=1]",
                        "axpy.chunks[ITEMS=8;SPARE=1]"})
    EXPECT_NE(list.output.find(p), std::string::npos) << p << "\n" << list.output;
  EXPECT_EQ(list.output.find("ITEMS=2;SPARE=1"), std::string::npos) << list.output;
  EXPECT_EQ(test::count_of(list.output, "axpy.chunks["), 6u) << list.output;
  // ITEMS=8 allows blocks up to 256 (8 x 256 = 2048).
  EXPECT_NE(list.output.find("axpy.chunks[ITEMS=8;SPARE=0]  128,256 "), std::string::npos)
      << list.output;

  const auto some = test::run_kernlab(base +
                                      "--variant 'chunks[ITEMS=8*' --block all "
                                      "--dtype float32 --compile-only");
  EXPECT_EQ(some.code, 0) << some.output;
  EXPECT_EQ(test::count_of(some.output, " ok\n"), 3u) << some.output;  // and the reference
  EXPECT_EQ(some.output.find("ITEMS=4"), std::string::npos) << some.output;

  // A requirement that does not evaluate is the file's error, with its line; the family's other
  // variants are unaffected.
  ASSERT_TRUE(test::replace_in_file(dir.str() + "/axpy/chunks.cu", "SPARE <= ITEMS / 4",
                                    "SPARE <= ITEM / 4"));
  const auto broken = test::run_kernlab(base + "--variant all --compile-only");
  EXPECT_EQ(broken.code, 1) << broken.output;
  EXPECT_NE(broken.output.find("chunks.cu:6: require:"), std::string::npos) << broken.output;
  EXPECT_NE(broken.output.find("unknown variable 'ITEM'"), std::string::npos) << broken.output;
  // simple, gridstride and the reference
  EXPECT_EQ(test::count_of(broken.output, " ok\n"), 3u) << broken.output;
}

// A header's require sees the dtype: TSIZE, and DTYPE against a dtype's name. A point it allows at
// some dtypes only keeps its blocks; its rows at the others are skipped with the condition, and
// nothing is compiled for them (once TSIZE and DTYPE were unknown variables there).
TEST(TunableBinary, ARequireOverTheDtypeSkipsItsRowsAtTheOtherDtypes) {
  test::temp_dir dir("tunable_dtype");
  test::write_axpy_family(dir);
  dir.write("axpy/chunks.cu", R"kl(/* kernlab
family:    axpy
entry:     chunks<T, ITEMS>
blocks:    128 256
tune:      ITEMS = 1, 2, 4
require:   ITEMS == 1 || DTYPE == float32; BLOCK * ITEMS * TSIZE <= 2048
grid_dims: ceil_div(N, BLOCK * ITEMS)
*/
template <typename T, int ITEMS>
__global__ void chunks(const T* x, const T* y0, T* y, int n) {}
)kl");
  family_registry fams;
  add_data_families(fams, {dir.str()}, {test::kernels_dir() + "/include", test::cuda_include()});
  registry reg(fams);
  reg.add_source_dir(dir.str());
  std::map<std::string, const registry_entry*> points;
  for (const auto* e : reg.select({"chunks"})) points[e->descriptor.name] = e;
  ASSERT_EQ(points.size(), 3u);
  const registry_entry& one = *points.at("chunks[ITEMS=1]");
  const registry_entry& two = *points.at("chunks[ITEMS=2]");
  const registry_entry& four = *points.at("chunks[ITEMS=4]");
  EXPECT_EQ(one.error + two.error + four.error, "");
  EXPECT_TRUE(one.descriptor.requires.empty());  // it holds at every dtype and block
  EXPECT_EQ(two.descriptor.blocks, (std::vector<unsigned>{128, 256}));
  EXPECT_EQ(four.descriptor.blocks, (std::vector<unsigned>{128}));  // 256 * 4 * 4 > 2048
  EXPECT_EQ(two.descriptor.unmet_requirement(256, "int32"), "ITEMS == 1 || DTYPE == float32");
  EXPECT_EQ(two.descriptor.unmet_requirement(256, "float32"), "");
  cuda::device_info gpu;
  gpu.cc_major = 9;
  gpu.max_threads_per_block = 1024;
  const problem_config int32{"int32", "", "exact", 1, {{"N", std::uint64_t{1000}}}};
  const auto skipped = decide_before_compile(two, 256, int32, gpu);
  ASSERT_TRUE(skipped.has_value());
  EXPECT_EQ(skipped->first, outcome::skipped);
  EXPECT_EQ(skipped->second,
            "its require 'ITEMS == 1 || DTYPE == float32' does not hold for int32 at block 256");
  run_request r;
  r.blocks = {128, 256};
  r.dtypes = {"int32", "float32"};
  std::vector<instantiation> made;
  make_compile_request(*fams.find("axpy"), two, r, "sm_90", &made);
  ASSERT_EQ(made.size(), 1u);  // chunks<float, 2>: the entry does not depend on the block
  EXPECT_EQ(made[0].dtype, "float32");
}

// Every family is a folder now: one named like a shipped family in a --kernels-dir is that
// family's description (the shipped one is not read), so it can be changed there.
TEST(DataFamilyBinary, AFolderNamedLikeAShippedFamilyReplacesItsDescription) {
  test::temp_dir dir("axpy_shadow");
  dir.write("qam256/family.toml", test::axpy_family_toml);
  dir.write("qam256/reference.cu", test::axpy_reference);
  const auto r = test::run_kernlab("--kernels-dir " + dir.str() + " --list --family qam256");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find(dir.str() + "/qam256/family.toml"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("SNR_DB"), std::string::npos) << r.output;
}

// The shipped data families: every variant at every block size and dtype, and the reference,
// compile with NVRTC (no GPU needed).
TEST(DataFamilyCompile, EveryShippedDataFamilyAndItsReference) {
  family_registry fams;
  test::register_shipped_families(fams);
  const std::vector<std::string> includes = {test::kernels_dir() + "/include",
                                             test::cuda_include()};
  EXPECT_TRUE(add_data_families(fams, {test::kernels_dir()}, includes,
                                {std::string(KERNLAB_PLUGIN_DIR) + "/families"})
                  .empty());
  registry reg(fams);
  reg.add_source_dir(test::kernels_dir());
  int families = 0;
  for (const auto& name : fams.names()) {
    const auto* f = fams.find(name);
    if (!f) continue;
    ++families;
    SCOPED_TRACE(name);
    std::vector<std::string> ops = f->ops();
    if (ops.empty()) ops = {""};
    for (const auto& dtype : f->dtypes())
      for (const auto& op : ops) {
        if (!f->spec().reference.plugin_function.empty()) continue;  // on the host (qam256)
        const auto ref = nvrtc::compile(f->reference_request(dtype, "sm_90", op));
        EXPECT_TRUE(ref.ok) << dtype << " " << op << ": " << ref.error_summary();
      }
    run_request r;
    r.variants = reg.select({"all"}, name);
    r.blocks = {128, 256, 512, 1024};
    r.blocks_all = true;  // and the blocks a variant lists besides (wgmma_cp_async's 384)
    r.dtypes = f->dtypes();
    r.include_dirs = includes;
    r.compile_only = true;
    const auto sweep = runner(fams, r).run();
    for (const auto& c : sweep.compiles) {
      SCOPED_TRACE(c.entry->descriptor.qualified_name());
      EXPECT_EQ(c.entry->error, "");
      EXPECT_EQ(c.error, "");
      EXPECT_GE(c.result.lowered_names.size(), f->dtypes().size());
      EXPECT_LE(c.result.lowered_names.size(),
                c.entry->descriptor.blocks.size() * f->dtypes().size());
      for (const auto& kv : c.result.resources)
        EXPECT_EQ(kv.second.spill_store_bytes, 0) << kv.first;
    }
  }
  EXPECT_GE(families, 2);  // softmax, transpose
}

}  // namespace
}  // namespace kl

namespace kl {
namespace {

// The 16-bit floats of the generators and comparisons: round to nearest even, subnormals,
// overflow and NaN, against hand-worked bit patterns.
TEST(HalfTypes, Float16RoundsToNearestEven) {
  EXPECT_EQ(float16(1.0).bits, 0x3c00);
  EXPECT_EQ(float16(-2.0).bits, 0xc000);
  EXPECT_EQ(float16(0.25).bits, 0x3400);
  EXPECT_EQ(float16(65504.0).bits, 0x7bff);                  // the largest finite
  EXPECT_EQ(float16(65520.0).bits, 0x7c00);                  // halfway to 2^16: rounds to infinity
  EXPECT_EQ(float16(0x1p-24).bits, 0x0001);                  // the smallest subnormal
  EXPECT_EQ(float16(0x1p-25).bits, 0x0000);                  // half of it: ties to even (0)
  EXPECT_EQ(float16(0x1p-14).bits, 0x0400);                  // the smallest normal
  EXPECT_EQ(float16(1.0 + 0x1p-11).bits, 0x3c00);            // a tie: to even
  EXPECT_EQ(float16(1.0 + 3 * 0x1p-11).bits, 0x3c02);        // a tie: to even (up)
  EXPECT_EQ(float16(1.0 + 0x1p-11 + 0x1p-20).bits, 0x3c01);  // past the tie
  EXPECT_TRUE(std::isnan(static_cast<double>(float16(std::nan("")))));
  for (double v : {1.0, -0.75, 0x1p-24, 3 * 0x1p-20, 1000.5, 65504.0})
    EXPECT_EQ(static_cast<double>(float16(v)), v) << v;
}

TEST(HalfTypes, Bfloat16IsFloatsTopHalfRoundedToNearestEven) {
  EXPECT_EQ(bfloat16(1.0).bits, 0x3f80);
  EXPECT_EQ(bfloat16(-0.25).bits, 0xbe80);
  EXPECT_EQ(bfloat16(1.0 + 0x1p-8).bits, 0x3f80);            // a tie: to even
  EXPECT_EQ(bfloat16(1.0 + 3 * 0x1p-8).bits, 0x3f82);        // a tie: to even (up)
  EXPECT_EQ(bfloat16(1.0 + 0x1p-8 + 0x1p-12).bits, 0x3f81);  // past the tie
  EXPECT_TRUE(std::isnan(static_cast<double>(bfloat16(std::nan("")))));
  for (double v : {1.0, -0.75, 0x1p-126, 0x1.fep127, 255.0})
    EXPECT_EQ(static_cast<double>(bfloat16(v)), v) << v;
}

double decode(const std::string& dtype, std::uint16_t bits) {
  if (dtype == "float16") {
    float16 h;
    h.bits = bits;
    return static_cast<double>(h);
  }
  bfloat16 b;
  b.bits = bits;
  return static_cast<double>(b);
}

// Generated quarters are exact in both 16-bit types; the comparison reads them as such.
TEST(HalfTypes, GeneratorsAndRulesTakeTheSixteenBitTypes) {
  generator_spec g;
  g.kind = "grid";
  g.den = 4;
  g.min = -1;
  g.max = 1;
  for (const std::string dtype : {"float16", "bfloat16"}) {
    SCOPED_TRACE(dtype);
    EXPECT_EQ(data_dtype_size(dtype), 2u);
    const auto bytes = generate_buffer(g, dtype, 1000, 5, "A");
    ASSERT_EQ(bytes.size(), 2000u);
    for (std::size_t i = 0; i < 1000; ++i) {
      std::uint16_t bits = 0;
      std::memcpy(&bits, bytes.data() + 2 * i, 2);
      const double v = decode(dtype, bits);
      ASSERT_EQ(v * 4, std::trunc(v * 4)) << v;
      ASSERT_LE(std::fabs(v), 1.0) << v;
    }
    // ulp of the 16-bit type: 1.0 + one spacing is 1 ulp (2^-10 for float16, 2^-7 for bfloat16).
    compare_spec ulp;
    ulp.rule = "ulp";
    ulp.max_ulp = 1;
    const double spacing = dtype == "float16" ? 0x1p-10 : 0x1p-7;
    auto one = [&](double v) {
      std::vector<std::uint8_t> out(2);
      const std::uint16_t bits = dtype == "float16" ? float16(v).bits : bfloat16(v).bits;
      std::memcpy(out.data(), &bits, 2);
      return out;
    };
    std::vector<std::uint8_t> ref(8);
    const double r = 1.0;
    std::memcpy(ref.data(), &r, 8);
    EXPECT_TRUE(compare_buffer(ulp, "y", dtype, one(1.0 + spacing), "float64", ref).ok);
    EXPECT_FALSE(compare_buffer(ulp, "y", dtype, one(1.0 + 2 * spacing), "float64", ref).ok);
  }
  cuda::device_info h100;
  h100.cc_major = 9;
  h100.sm_count = 132;
  h100.sm_clock_khz = 1980000;
  EXPECT_NEAR(h100.peak_tensor16_flops() / 1e12, 1070.5, 0.1);  // 132 x 4096 x 1.98 GHz
  h100.cc_major = 8;
  h100.cc_minor = 9;
  EXPECT_EQ(h100.peak_tensor16_flops(), 0.0);  // not known: no % peak rather than a wrong one
  EXPECT_EQ(cxx_type_of("bfloat16"), "__nv_bfloat16");
  EXPECT_EQ(cxx_type_of("float16"), "__half");
}

}  // namespace
}  // namespace kl

namespace kl {
namespace {

// `target: sm_90a`: the file is compiled for the architecture-specific target (which wgmma.fence
// needs; without the key NVRTC refuses it for sm_90), and --resources names the target.
TEST(ArchTarget, AFileThatNeedsSm90aCompilesOnlyForIt) {
  test::temp_dir dir("arch_target");
  test::write_axpy_family(dir);
  dir.write("axpy/fenced.cu", test::axpy_fenced);
  auto r = test::run_kernlab("--kernels-dir " + dir.str() +
                             " --family axpy --variant fenced --dtype float32 --compile-only "
                             "--resources --no-cache");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("fenced (sm_90a)"), std::string::npos) << r.output;

  std::string plain = test::axpy_fenced;
  plain.erase(plain.find("target:  sm_90a\n"), std::string("target:  sm_90a\n").size());
  dir.write("axpy/fenced.cu", plain);
  r = test::run_kernlab("--kernels-dir " + dir.str() +
                        " --family axpy --variant fenced --dtype float32 --compile-only "
                        "--no-cache");
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("wgmma.fence"), std::string::npos) << r.output;
}

// Where the rows of a file with `target` may run: only on a GPU whose own architecture it is.
TEST(ArchTarget, RowsRunOnlyWhereTheTargetIsTheGpus) {
  registry_entry e;
  e.descriptor.family = "axpy";
  e.descriptor.name = "fenced";
  e.descriptor.target = "sm_90a";
  e.descriptor.blocks = {256};
  problem_config c;
  c.dtype = "float32";
  cuda::device_info hopper, ampere;
  hopper.cc_major = 9;
  ampere.cc_major = 8;
  hopper.max_threads_per_block = ampere.max_threads_per_block = 1024;
  EXPECT_FALSE(decide_before_compile(e, 256, c, hopper).has_value());
  const auto verdict = decide_before_compile(e, 256, c, ampere);
  ASSERT_TRUE(verdict.has_value());
  EXPECT_EQ(verdict->first, outcome::skipped);
  EXPECT_EQ(verdict->second,
            "compiled for sm_90a (its 'target'), which runs on sm_90 GPUs only; this GPU is sm_80");
}

}  // namespace
}  // namespace kl
