// The kernel header parser and the expression evaluator: good headers, and every kind of bad one
// giving file:line.
#include "spec/expression.hpp"
#include "spec/metadata.hpp"

#include "cuda/tensor_map.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace kl {
namespace {

const char* good = R"(// a comment before the header
/* kernlab
family:  reduce
entry:   my_idea<BLOCK, T, OP>   # trailing comment
blocks:  128, 256 512
tile:    2 * BLOCK
grid:    resident
bounds:  checked
shared_bytes: BLOCK * TSIZE
dtypes:  int32
ops:     sum max
summary: an idea
order:   7
*/
template <unsigned BLOCK, typename T, typename OP>
__global__ void my_idea(const T*, T*, unsigned) {}
)";

TEST(Metadata, ParsesEveryKey) {
  const parsed_header h = parse_header(good, "dir/reduce/my_idea.cu");
  const auto& d = h.descriptor;
  EXPECT_EQ(d.name, "my_idea");
  EXPECT_EQ(d.family, "reduce");
  EXPECT_EQ(d.entry, "my_idea<BLOCK, T, OP>");
  EXPECT_EQ(d.blocks, (std::vector<unsigned>{128, 256, 512}));
  EXPECT_EQ(d.tile, "2 * BLOCK");
  EXPECT_EQ(d.grid, grid_kind::resident);
  EXPECT_EQ(d.bounds, bounds_kind::checked);
  EXPECT_EQ(d.shared_bytes, "BLOCK * TSIZE");
  EXPECT_EQ(d.dtypes, std::vector<std::string>{"int32"});
  EXPECT_EQ(d.ops, (std::vector<std::string>{"sum", "max"}));
  EXPECT_EQ(d.summary, "an idea");
  EXPECT_EQ(d.order, 7);
  EXPECT_EQ(h.header_line, 2);
  EXPECT_EQ(h.key_lines.at("tile"), 6);
  EXPECT_EQ(d.origin_path, "dir/reduce/my_idea.cu");
}

TEST(Metadata, OutputAndWorkspace) {
  const auto h = parse_header(
      "/* kernlab\nfamily: reduce\nentry: k<BLOCK>\nblocks: 256\noutput: single\n"
      "workspace: 16 + GRID * TSIZE\n*/\n",
      "k.cu");
  EXPECT_EQ(h.descriptor.output, output_kind::single);
  EXPECT_EQ(h.descriptor.workspace, "16 + GRID * TSIZE");
}

// Some Windows editors start a UTF-8 file with a byte-order mark; the header on line 1 is still
// the header, and lines keep their numbers.
TEST(Metadata, AByteOrderMarkIsSkipped) {
  const auto h = parse_header(
      "\xEF\xBB\xBF/* kernlab\nfamily: reduce\nentry: k<BLOCK>\nblocks: 256\n*/\n", "k.cu");
  EXPECT_EQ(h.header_line, 1);
  EXPECT_EQ(h.descriptor.family, "reduce");
  EXPECT_EQ(h.key_lines.at("blocks"), 4);
}

TEST(Metadata, DefaultsApply) {
  const auto h =
      parse_header("/* kernlab\nfamily: reduce\nentry: k<BLOCK>\nblocks: 256\n*/\n", "k.cu");
  EXPECT_EQ(h.descriptor.grid, grid_kind::tiles);
  EXPECT_EQ(h.descriptor.bounds, bounds_kind::padded);
  EXPECT_EQ(h.descriptor.shared_bytes, "0");
  EXPECT_EQ(h.descriptor.output, output_kind::per_block);
  EXPECT_EQ(h.descriptor.workspace, "");
  EXPECT_TRUE(h.descriptor.supports_dtype("float32"));
}

// Each bad header must fail with the file and the line of the problem in what().
struct bad_case {
  const char* name;
  std::string text;
  int line;
  const char* needle;
};

class MetadataErrors : public ::testing::TestWithParam<bad_case> {};

TEST_P(MetadataErrors, NameFileAndLine) {
  const auto& c = GetParam();
  try {
    parse_header(c.text, "kernels/reduce/bad.cu");
    FAIL() << "expected a metadata_error";
  } catch (const metadata_error& e) {
    EXPECT_EQ(e.file(), "kernels/reduce/bad.cu");
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_NE(std::string(e.what()).find("kernels/reduce/bad.cu:" + std::to_string(c.line) + ": "),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(c.needle), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, MetadataErrors,
    ::testing::Values(
        bad_case{"no_header", "__global__ void k() {}\n", 1, "no kernlab header"},
        bad_case{"empty_file", "", 1, "no kernlab header"},
        bad_case{"binary",
                 std::string("\x7f"
                             "ELF\0\0\x01",
                             7),
                 1, "not a text file"},
        bad_case{"unclosed", "/* kernlab\nfamily: reduce\n", 1, "never closed"},
        bad_case{"unknown_key", "/* kernlab\nfamily: reduce\nblock: 256\n*/", 3,
                 "did you mean 'blocks'"},
        bad_case{"no_colon", "/* kernlab\nfamily reduce\n*/", 2, "expected 'key: value'"},
        bad_case{"plain_target", "/* kernlab\nfamily: reduce\nentry: k\ntarget: sm_90\n*/", 4,
                 "target 'sm_90': expected an architecture-specific target such as sm_90a"},
        bad_case{"odd_target", "/* kernlab\nfamily: reduce\nentry: k\ntarget: sm_9xa\n*/", 4,
                 "target 'sm_9xa'"},
        bad_case{"defines_not_a_tunable",
                 "/* kernlab\nfamily: reduce\nentry: k\nblocks: 256\ntile: BLOCK\n"
                 "tune: U = 1, 2\ndefines: U; V\n*/",
                 7,
                 "defines: 'V' is not a tunable of this file (tune:); a constant is 'V = value'"},
        bad_case{"defines_real_constant",
                 "/* kernlab\nfamily: reduce\nentry: k\ndefines: X = 1.5\n*/", 4,
                 "defines: 'X = 1.5': the value of a constant is a whole number"},
        bad_case{"defines_twice", "/* kernlab\nfamily: reduce\nentry: k\ndefines: X = 1; X\n*/", 4,
                 "defines: X given twice"},
        bad_case{"defines_not_a_name", "/* kernlab\nfamily: reduce\nentry: k\ndefines: 2X = 1\n*/",
                 4, "defines: '2X = 1' is not NAME"},
        bad_case{"repeated", "/* kernlab\nfamily: reduce\nfamily: reduce\n*/", 3,
                 "first given on line 2"},
        bad_case{"tensor_map_no_box",
                 "/* kernlab\nfamily: reduce\nentry: k\ntensor_maps: A[M][K]\n*/", 4,
                 "no 'box [..]' after the dimensions"},
        bad_case{"tensor_map_ranks",
                 "/* kernlab\nfamily: reduce\nentry: k\ntensor_maps: A[M][K] box [8]\n*/", 4,
                 "the box has 1 dimensions, the buffer 2"},
        bad_case{"tensor_map_swizzle",
                 "/* kernlab\nfamily: reduce\nentry: k\n"
                 "tensor_maps: A[M][K] box [8][8] swizzle 16\n*/",
                 4, "swizzle '16' is not 0, 32, 64 or 128"},
        bad_case{"tensor_map_twice",
                 "/* kernlab\nfamily: reduce\nentry: k\n"
                 "tensor_maps: A[M] box [8]; A[K] box [8]\n*/",
                 4, "tensor_maps: A given twice"},
        bad_case{"scratch_no_count", "/* kernlab\nfamily: reduce\nentry: k\nscratch: T Ap\n*/", 4,
                 "scratch: 'T Ap': no [count] after the name"},
        bad_case{"scratch_no_type", "/* kernlab\nfamily: reduce\nentry: k\nscratch: Ap[8]\n*/", 4,
                 "scratch: 'Ap[8]': no type first"},
        bad_case{"scratch_two_counts",
                 "/* kernlab\nfamily: reduce\nentry: k\nscratch: T Ap[8][8]\n*/", 4,
                 "the count is not one expression in []"},
        bad_case{"scratch_twice",
                 "/* kernlab\nfamily: reduce\nentry: k\nscratch: T a[1]; int32 a[2]\n*/", 4,
                 "scratch: a given twice"},
        bad_case{"tensor_map_unclosed",
                 "/* kernlab\nfamily: reduce\nentry: k\ntensor_maps: A[M box [8]\n*/", 4,
                 "an unclosed [ in the buffer's dimensions"},
        bad_case{"bad_block", "/* kernlab\nfamily: reduce\nentry: k\nblocks: 128 2048\n*/", 4,
                 "'2048'"},
        bad_case{"text_block", "/* kernlab\nfamily: reduce\nentry: k\nblocks: many\n*/", 4,
                 "'many'"},
        bad_case{"dup_block", "/* kernlab\nfamily: reduce\nentry: k\nblocks: 128 128\n*/", 4,
                 "listed twice"},
        bad_case{"bad_grid", "/* kernlab\nfamily: reduce\nentry: k\nblocks: 1\ngrid: all\n*/", 5,
                 "grid must be"},
        bad_case{"bad_bounds", "/* kernlab\nbounds: maybe\n*/", 2, "bounds must be"},
        bad_case{"missing_entry", "/* kernlab\nfamily: reduce\nblocks: 128\n*/", 1, "'entry'"},
        bad_case{"bad_entry", "/* kernlab\nfamily: reduce\nentry: 3k<>\nblocks: 1\n*/", 3,
                 "template-id"},
        bad_case{"bad_tile",
                 "/* kernlab\nfamily: reduce\nentry: k\nblocks: 128\ntile: 2 * BLOK\n*/", 5,
                 "unknown variable 'BLOK'"},
        bad_case{"zero_tile",
                 "/* kernlab\nfamily: reduce\nentry: k\nblocks: 128\ntile: BLOCK - 128\n*/", 5,
                 "is 0 for BLOCK=128"},
        bad_case{"tile_syntax",
                 "/* kernlab\nfamily: reduce\nentry: k\nblocks: 128\ntile: (BLOCK\n*/", 5,
                 "missing ')'"},
        bad_case{"empty_value", "/* kernlab\nfamily:\n*/", 2, "has no value"},
        bad_case{"bad_order", "/* kernlab\norder: first\n*/", 2, "order 'first'"},
        bad_case{"bad_output", "/* kernlab\noutput: many\n*/", 2, "output must be"},
        bad_case{"grid_in_tile",
                 "/* kernlab\nfamily: reduce\nentry: k\nblocks: 128\ntile: GRID\n*/", 5,
                 "unknown variable 'GRID'"},
        bad_case{"bad_workspace",
                 "/* kernlab\nfamily: reduce\nentry: k\nblocks: 128\nworkspace: 4 - GRID\n*/", 5,
                 "workspace '4 - GRID' is -65532"},
        // Found by tests/fuzz (results history: 2026-11-22-fuzzing.md).
        bad_case{"no_blocks", "/* kernlab\nfamily: reduce\nentry: k\nblocks: , ,\n*/", 4,
                 "no block size"},
        bad_case{"tile_overflow",
                 "/* kernlab\nfamily: reduce\nentry: k\nblocks: 128\ntile: 1099511627776 * "
                 "1099511627776\n*/",
                 5, "does not fit in 64 bits"},
        bad_case{"deep_tile",
                 "/* kernlab\nfamily: reduce\nentry: k\nblocks: 128\ntile: " +
                     std::string(100000, '(') + "1\n*/",
                 5, "nested more than 100 deep"},
        // The shape (matmul's M, N, K) is no variable of a tile: one block's elements are fixed
        // per block size. Found by tests/fuzz.
        bad_case{"shape_in_tile", "/* kernlab\nfamily: reduce\nentry: k\nblocks: 128\ntile: K\n*/",
                 5, "unknown variable 'K'"},
        bad_case{"shape_in_qam_tile",
                 "/* kernlab\nfamily: qam256\nentry: k\nblocks: 128\nbounds: checked\ntile: BLOCK "
                 "* M\n*/",
                 6, "unknown variable 'M'"},
        bad_case{"shape_in_workspace",
                 "/* kernlab\nfamily: reduce\nentry: k\nblocks: 128\nworkspace: N * 4\n*/", 5,
                 "unknown variable 'N'"},
        bad_case{
            "unknown_param_in_tile",
            "/* kernlab\nfamily: reduce\nentry: k\nblocks: 128\nparams: U = 2\ntile: V * BLOCK\n*/",
            6, "unknown variable 'V'"},
        bad_case{"no_dtypes", "/* kernlab\nfamily: reduce\nentry: k\nblocks: 128\ndtypes: ,\n*/", 5,
                 "dtypes lists no element type"},
        bad_case{"no_ops", "/* kernlab\nfamily: reduce\nentry: k\nblocks: 128\nops:  , ,\n*/", 5,
                 "ops lists no operation"},
        bad_case{
            "long_bad_entry",
            "/* kernlab\nfamily: reduce\nentry: 3" + std::string(100000, 'k') + "\nblocks: 1\n*/",
            3, "template-id"}),
    [](const auto& info) { return std::string(info.param.name); });

// libstdc++'s std::regex recursed once per character and overflowed the stack on lines of tens
// of KB (found by tests/fuzz); the names are now checked without it.
TEST(Metadata, LongLinesParse) {
  const std::string args(100000, 'T');
  const auto h = parse_header("/* kernlab\nfamily: " + std::string(100000, 'r') + "\nentry: k<" +
                                  args + ">\nblocks: 128\n*/\n",
                              "k.cu");
  EXPECT_EQ(h.descriptor.entry, "k<" + args + ">");
  EXPECT_EQ(h.descriptor.family.size(), 100000u);
}

// What the regular expressions accepted is still what is accepted.
TEST(Metadata, NamesAndEntries) {
  auto entry_ok = [](const std::string& entry) {
    try {
      parse_header("/* kernlab\nfamily: reduce\nentry: " + entry + "\nblocks: 1\n*/", "k.cu");
      return true;
    } catch (const metadata_error&) {
      return false;
    }
  };
  for (const char* good_entry :
       {"k", "_k", "ns::k<BLOCK, T, OP>", "k <a>", "k\t<>", "k<<>>", "K9_:"})
    EXPECT_TRUE(entry_ok(good_entry)) << good_entry;
  for (const char* bad_entry : {"9k", "k<", "k>", "k <a> b", "k(a)", "k-1", ":k", "k<\ra>"})
    EXPECT_FALSE(entry_ok(bad_entry)) << bad_entry;
  const std::string rest = "\nentry: k\nblocks: 1\n*/";
  EXPECT_THROW(parse_header("/* kernlab\nfamily: Reduce" + rest, "k.cu"), metadata_error);
  EXPECT_THROW(parse_header("/* kernlab\nfamily: 9r" + rest, "k.cu"), metadata_error);
  EXPECT_THROW(parse_header("/* kernlab\nfamily: r" + rest, "dir/-k.cu"), metadata_error);
  EXPECT_NO_THROW(parse_header("/* kernlab\nfamily: r_9" + rest, "dir/9-k_.cu"));
}

TEST(Metadata, BadFileName) {
  EXPECT_THROW(parse_header("/* kernlab\n*/", "reduce/my idea.cu"), metadata_error);
}

TEST(Expression, Evaluates) {
  EXPECT_EQ(evaluate("2 * BLOCK", {{"BLOCK", 256}}), 512);
  EXPECT_EQ(evaluate("(BLOCK + 1) * TSIZE - 4 / 2 % 3", {{"BLOCK", 3}, {"TSIZE", 4}}), 14);
  EXPECT_EQ(evaluate("-BLOCK + 10", {{"BLOCK", 3}}), 7);
  EXPECT_THROW(evaluate("BLOCK / 0", {{"BLOCK", 3}}), expression_error);
  EXPECT_THROW(evaluate("BLOCK +", {{"BLOCK", 3}}), expression_error);
  EXPECT_THROW(evaluate("2 3", {}), expression_error);
  EXPECT_THROW(evaluate("99999999999999999999", {}), expression_error);
}

// Found by tests/fuzz: values past 64 bits were signed overflow (undefined behaviour, and
// INT64_MIN / -1 a SIGFPE), and deep nesting overflowed the stack. Both are errors now.
TEST(Expression, OverflowIsAnError) {
  const std::string big = "1099511627776";  // 2^40, the largest literal
  EXPECT_THROW(evaluate(big + " * " + big, {}), expression_error);
  EXPECT_THROW(evaluate("GRID * 9223372017", {{"GRID", 2147483647}}), expression_error);
  EXPECT_THROW(evaluate("-" + big + " * 8388608 - 1", {}), expression_error);
  EXPECT_THROW(evaluate("(-" + big + " * 8388608) / -1", {}), expression_error);
  EXPECT_THROW(evaluate("-(-" + big + " * 8388608)", {}), expression_error);
  EXPECT_EQ(evaluate("(-" + big + " * 8388608) % -1", {}), 0);
  EXPECT_EQ(evaluate("-" + big + " * 8388608", {}), INT64_MIN);
  EXPECT_EQ(evaluate(big + " * 8388607 + 1099511627775", {}), INT64_MAX);
  EXPECT_THROW(evaluate(big + " * 8388607 + " + big, {}), expression_error);
  try {
    evaluate(big + " * " + big, {});
  } catch (const expression_error& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit in 64 bits"), std::string::npos) << e.what();
  }
}

TEST(Expression, MinMaxAndCeilDiv) {
  EXPECT_EQ(evaluate("min(RESIDENT_BLOCKS, ceil_div(N, BLOCK))",
                     {{"RESIDENT_BLOCKS", 528}, {"N", 1000}, {"BLOCK", 256}}),
            4);
  EXPECT_EQ(evaluate("max(2, 3) * min(-1, 5)", {}), -3);
  EXPECT_EQ(evaluate("ceil_div(7, 2)", {}), 4);
  EXPECT_EQ(evaluate("ceil_div(8, 2)", {}), 4);
  EXPECT_EQ(evaluate("ceil_div(-7, 2)", {}), -3);  // towards plus infinity
  EXPECT_EQ(evaluate("ceil_div(-7, -2)", {}), 4);
  EXPECT_THROW(evaluate("ceil_div(7, 0)", {}), expression_error);
  EXPECT_THROW(evaluate("ceil_div(-1099511627776 * 8388608, -1)", {}), expression_error);
  EXPECT_THROW(evaluate("min(1)", {}), expression_error);
  EXPECT_THROW(evaluate("max(1, 2", {}), expression_error);
  // A variable of that name wins, as sqrt's does.
  EXPECT_EQ(evaluate("min", {{"min", 3}}), 3);
}

TEST(Expression, ComparisonsLogicAndTheConditional) {
  const std::map<std::string, std::int64_t> v = {{"BLOCK", 256}, {"ITEMS", 8}};
  EXPECT_EQ(evaluate("BLOCK * ITEMS <= 8192", v), 1);
  EXPECT_EQ(evaluate("BLOCK * ITEMS < 2048", v), 0);
  EXPECT_EQ(evaluate("BLOCK >= 256 && ITEMS != 4", v), 1);
  EXPECT_EQ(evaluate("BLOCK > 256 || ITEMS == 8", v), 1);
  EXPECT_EQ(evaluate("!(BLOCK == 256)", v), 0);
  EXPECT_EQ(evaluate("!0 + !5", v), 1);
  EXPECT_EQ(evaluate("ITEMS > 4 ? BLOCK / ITEMS : BLOCK", v), 32);
  EXPECT_EQ(evaluate("ITEMS > 8 ? 1 : ITEMS > 4 ? 2 : 3", v), 2);  // right-associative
  // C's precedence: arithmetic, then comparisons, then &&, then ||, then ?:.
  EXPECT_EQ(evaluate("1 + 2 < 4 && 2 * 3 == 6 || 0", {}), 1);
  EXPECT_EQ(evaluate("0 || 1 && 0", {}), 0);
  // The side that is not taken is not evaluated: no division by zero there.
  EXPECT_EQ(evaluate("ITEMS == 0 ? BLOCK / ITEMS : 7", v), 7);
  EXPECT_EQ(evaluate("0 && 1 / 0", {}), 0);
  EXPECT_EQ(evaluate("1 || 1 / 0", {}), 1);
  EXPECT_THROW(evaluate("1 ? 1 / 0 : 0", {}), expression_error);
  // But it must still parse.
  EXPECT_THROW(evaluate("0 && (1 +", {}), expression_error);
  EXPECT_THROW(evaluate("1 ? 2", {}), expression_error);
  EXPECT_THROW(evaluate("BLOCK = 256", v), expression_error);
  EXPECT_THROW(evaluate("BLOCK =< 256", v), expression_error);
  EXPECT_THROW(evaluate(std::string(200, '1') + "", {}), expression_error);
  std::string chain;
  for (int i = 0; i < 200; ++i) chain += "1 ? ";
  chain += "1";
  for (int i = 0; i < 200; ++i) chain += " : 0";
  EXPECT_THROW(evaluate(chain, {}), expression_error);  // nested too deep, not a crash
}

// tensor_maps: each buffer's dimensions (outermost first), its box and its swizzle.
TEST(Metadata, TensorMaps) {
  const auto h = parse_header(R"(/* kernlab
family:      matmul_tc
entry:       k<BLOCK, BN>
blocks:      384
params:      BN = 128
tensor_maps: A[M][K] box [128][64] swizzle 128; B [K] [N] box [64] [BN / 2]
*/
)",
                              "matmul_tc/k.cu", {"M", "N", "K"});
  const auto& t = h.descriptor.tensor_maps;
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].buffer, "A");
  EXPECT_EQ(t[0].dims, (std::vector<std::string>{"M", "K"}));
  EXPECT_EQ(t[0].box, (std::vector<std::string>{"128", "64"}));
  EXPECT_EQ(t[0].swizzle, 128u);
  EXPECT_EQ(t[1].buffer, "B");
  EXPECT_EQ(t[1].box, (std::vector<std::string>{"64", "BN / 2"}));
  EXPECT_EQ(t[1].swizzle, 0u);
}

// What the TMA cannot copy is said before any launch, with the limit it breaks.
TEST(TensorMap, ProblemsAreSaidWithTheLimit) {
  cuda::tensor_map_request r;
  r.name = "A";
  r.address = 1 << 20;
  r.element_bytes = 2;
  r.dims = {4096, 4096};
  r.box = {128, 64};
  r.swizzle = 128;
  EXPECT_EQ(cuda::tensor_map_problem(r), "");
  r.dims = {4095, 1023};  // rows of 2046 bytes
  EXPECT_NE(cuda::tensor_map_problem(r).find("tensor map A: a row is 2046 bytes, not a multiple "
                                             "of 16"),
            std::string::npos)
      << cuda::tensor_map_problem(r);
  r.dims = {4096, 4096};
  r.box = {512, 64};
  EXPECT_NE(cuda::tensor_map_problem(r).find("a box of 512 elements"), std::string::npos);
  r.box = {128, 128};  // 256-byte box rows under a 128-byte swizzle
  EXPECT_NE(cuda::tensor_map_problem(r).find("wider than the 128-byte swizzle"), std::string::npos);
  r.box = {128, 4};  // 8-byte box rows
  EXPECT_NE(cuda::tensor_map_problem(r).find("not a multiple of 16"), std::string::npos);
  r.box = {128, 64};
  r.address += 8;
  EXPECT_NE(cuda::tensor_map_problem(r).find("not 16-byte aligned"), std::string::npos);
  r.address -= 8;
  r.dims = {7};  // one dimension: no stride to align
  r.box = {8};
  r.swizzle = 0;
  EXPECT_EQ(cuda::tensor_map_problem(r), "");
  r.buffer_bytes = 14;  // the array fits its buffer exactly
  EXPECT_EQ(cuda::tensor_map_problem(r), "");
  r.buffer_bytes = 12;  // a header's dimensions larger than the buffer: the TMA would read past it
  EXPECT_NE(cuda::tensor_map_problem(r).find("the array is 14 bytes, larger than the buffer (12 "
                                             "bytes)"),
            std::string::npos)
      << cuda::tensor_map_problem(r);
}

// scratch: C-like declarations, each a type, a name and an element count in [].
TEST(Metadata, Scratch) {
  const auto h = parse_header(R"(/* kernlab
family:      matmul_tc
entry:       k<BLOCK>
blocks:      384
scratch:     T Ap[M * (ceil_div(K, 8) * 8)]; int32  arrivals [1]
tensor_maps: Ap[M][ceil_div(K, 8) * 8] box [128][64] swizzle 128
*/
)",
                              "matmul_tc/k.cu", {"M", "N", "K"});
  const auto& s = h.descriptor.scratch;
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0], (scratch_spec{"T", "Ap", "M * (ceil_div(K, 8) * 8)"}));
  EXPECT_EQ(s[1], (scratch_spec{"int32", "arrivals", "1"}));
  EXPECT_EQ(h.descriptor.tensor_maps.at(0).buffer, "Ap");
}

// A comma inside parentheses belongs to a function's arguments, not to the list of dimensions.
TEST(Metadata, DimensionsSplitOnTopLevelCommasOnly) {
  const auto h = parse_header(R"(/* kernlab
family:    axpy
entry:     k<T>
blocks:    256
grid_dims: min(RESIDENT_BLOCKS, ceil_div(N, BLOCK)), max(1, N / 2)
*/
)",
                              "axpy/k.cu", {"N", "RESIDENT_BLOCKS"});
  EXPECT_EQ(
      h.descriptor.grid_dims,
      (std::vector<std::string>{"min(RESIDENT_BLOCKS, ceil_div(N, BLOCK))", "max(1, N / 2)"}));
  EXPECT_THROW(parse_header("/* kernlab\nfamily: axpy\nentry: k<T>\nblocks: 256\ngrid_dims: "
                            "min(N, 1),\n*/\n",
                            "axpy/k.cu", {"N"}),
               metadata_error);  // an empty dimension
}

TEST(Expression, NestingIsLimited) {
  EXPECT_EQ(evaluate(std::string(100, '(') + "7" + std::string(100, ')'), {}), 7);
  EXPECT_EQ(evaluate(std::string(100, '-') + "7", {}), 7);
  EXPECT_THROW(evaluate(std::string(101, '(') + "7" + std::string(101, ')'), {}), expression_error);
  EXPECT_THROW(evaluate(std::string(100000, '(') + "7", {}), expression_error);
  EXPECT_THROW(evaluate(std::string(100000, '-') + "7", {}), expression_error);
}

}  // namespace
}  // namespace kl

namespace kl {
namespace {

TEST(Tunables, ValueLists) {
  EXPECT_EQ(parse_tunable_values("1, 2, 4"), (std::vector<std::int64_t>{1, 2, 4}));
  EXPECT_EQ(parse_tunable_values("3..6"), (std::vector<std::int64_t>{3, 4, 5, 6}));
  EXPECT_EQ(parse_tunable_values("20..300 pow2"), (std::vector<std::int64_t>{32, 64, 128, 256}));
  EXPECT_EQ(parse_tunable_values("4..16 step 4"), (std::vector<std::int64_t>{4, 8, 12, 16}));
  EXPECT_EQ(parse_tunable_values("-2..0"), (std::vector<std::int64_t>{-2, -1, 0}));
  for (const char* bad : {"", "x", "1, 1", "4..2", "1..5000", "1..8 pow3", "1..8 step 0",
                          "1..8 step", "5..7 pow2", "1.5", "1..8 step 2 3"})
    EXPECT_THROW(parse_tunable_values(bad), std::invalid_argument) << bad;
}

std::string tunable_header(const std::string& tune, const std::string& require = "",
                           const std::string& extra = "") {
  return "/* kernlab\nfamily:  reduce\nentry:   k<BLOCK, ITEMS, T, OP>\nblocks:  128 256 512 "
         "1024\ntile:    ITEMS * BLOCK\ntune:    " +
         tune + "\n" + (require.empty() ? "" : "require: " + require + "\n") + extra + "*/\n";
}

// defines: tunables and constants, carried by every point (the compile gives each its value).
TEST(Tunables, DefinesAreCarriedByEveryPoint) {
  const parsed_header h = parse_header(
      tunable_header("ITEMS = 1, 2; U = 1, 2", "", "defines: U; SCALE = -3\n"), "reduce/k.cu");
  ASSERT_EQ(h.points.size(), 4u);
  for (const auto& p : h.points)
    EXPECT_EQ(p.defines, (std::vector<define_spec>{{"U", std::nullopt}, {"SCALE", -3}})) << p.name;
}

TEST(Tunables, OneVariantPerPointWithTheBlocksTheRequirementsAllow) {
  const parsed_header h = parse_header(
      tunable_header("ITEMS = 1..8 pow2; U = 1, 2", "BLOCK * ITEMS <= 2048; U <= ITEMS"),
      "reduce/k.cu");
  EXPECT_EQ(h.descriptor.tunables.size(), 2u);
  const auto points = expand_tunables(h, {"M", "N", "K"});
  std::vector<std::string> names;
  for (const auto& p : points) names.push_back(p.descriptor.name);
  // ITEMS=1 allows U=1 only (U <= ITEMS).
  EXPECT_EQ(names, (std::vector<std::string>{"k[ITEMS=1;U=1]", "k[ITEMS=2;U=1]", "k[ITEMS=2;U=2]",
                                             "k[ITEMS=4;U=1]", "k[ITEMS=4;U=2]", "k[ITEMS=8;U=1]",
                                             "k[ITEMS=8;U=2]"}));
  const auto& p = points[3].descriptor;  // ITEMS=4, U=1
  EXPECT_EQ(p.params,
            (std::vector<std::pair<std::string, std::string>>{{"ITEMS", "4"}, {"U", "1"}}));
  EXPECT_EQ(p.blocks, (std::vector<unsigned>{128, 256, 512}));  // 1024 * 4 > 2048
  EXPECT_TRUE(p.tunables.empty());
  EXPECT_TRUE(p.requires.empty());  // met at its blocks; a results file keeps no requirements
  EXPECT_EQ(points[5].descriptor.blocks, (std::vector<unsigned>{128, 256}));
  // Which point of which file it is, as plain data (not read back from the name).
  EXPECT_EQ(p.tunable_file, "k");
  EXPECT_EQ(p.point, (std::vector<std::pair<std::string, std::int64_t>>{{"ITEMS", 4}, {"U", 1}}));
  EXPECT_FALSE(p.named_point);
  EXPECT_TRUE(p.is_point());
  EXPECT_FALSE(p.in_default_selection());
  EXPECT_TRUE(h.descriptor.tunable_file.empty());  // the file itself is no point
  EXPECT_FALSE(h.descriptor.is_point());
}

// `points:` names points of the space: the name (and summary) replace "k[...]", the values are
// put in the tune: order, and the named points come first, in the order given.
TEST(Tunables, NamedPointsTakeTheirNamesAndComeFirst) {
  const parsed_header h = parse_header(
      tunable_header("ITEMS = 1..8 pow2; U = 1, 2", "BLOCK * ITEMS <= 2048; U <= ITEMS",
                     "summary: the file's summary\n"
                     "points:  k_wide(U=1, ITEMS=8) \"eight items; one accumulator\"\n"
                     "points:  k2(ITEMS=2,U=2);k-one( ITEMS = 1 , U = 1 )  ;\n"),
      "reduce/k.cu");
  ASSERT_EQ(h.named_points.size(), 3u);
  EXPECT_EQ(h.named_points[0].line, 9);
  EXPECT_EQ(h.named_points[2].line, 10);
  EXPECT_EQ(h.key_lines.at("points"), 9);  // its first line
  std::vector<std::string> names;
  for (const auto& p : h.points) names.push_back(p.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"k_wide", "k2", "k-one", "k[ITEMS=2;U=1]", "k[ITEMS=4;U=1]",
                                      "k[ITEMS=4;U=2]", "k[ITEMS=8;U=2]"}));
  const variant_descriptor& wide = h.points[0];
  EXPECT_TRUE(wide.named_point);
  EXPECT_TRUE(wide.in_default_selection());
  EXPECT_EQ(wide.tunable_file, "k");
  EXPECT_EQ(wide.point,
            (std::vector<std::pair<std::string, std::int64_t>>{{"ITEMS", 8}, {"U", 1}}));
  EXPECT_EQ(wide.params,
            (std::vector<std::pair<std::string, std::string>>{{"ITEMS", "8"}, {"U", "1"}}));
  EXPECT_EQ(wide.blocks, (std::vector<unsigned>{128, 256}));  // require's, as for any point
  EXPECT_EQ(wide.summary, "eight items; one accumulator");    // the quotes hold the ';'
  EXPECT_EQ(h.points[1].summary, "the file's summary");       // none given: the file's
  EXPECT_EQ(h.points[2].blocks, (std::vector<unsigned>{128, 256, 512, 1024}));
  EXPECT_FALSE(h.points[3].named_point);
  EXPECT_EQ(h.points[3].summary, "the file's summary");
}

TEST(Tunables, NamedPointMistakesNameThePointsLine) {
  auto error_of = [](const std::string& points, const std::string& more = "") -> std::string {
    try {
      parse_header(tunable_header("ITEMS = 1, 2, 4; U = 1, 2", "BLOCK * ITEMS <= 1024",
                                  more + "points:  " + points + "\n"),
                   "reduce/k.cu");
    } catch (const metadata_error& e) {
      return e.what();
    }
    return "";
  };
  // The header: 1 "/* kernlab", ..., 6 tune, 7 require, then `more`, then points.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a(ITEMS=1)", "reduce/k.cu:8: points: a: no value for U"},
      {"a(ITEMS=1, U=1, V=2)",
       "reduce/k.cu:8: points: a: 'V' is not a tunable (the tunables: "
       "ITEMS, U)"},
      {"a(ITEMS=3, U=1)", "reduce/k.cu:8: points: a: ITEMS=3 is not one of its values (1, 2, 4)"},
      {"a(ITEMS=1, ITEMS=2, U=1)",
       "reduce/k.cu:8: points: 'a(ITEMS=1, ITEMS=2, U=1)': ITEMS "
       "given twice"},
      {"a(ITEMS=1, U=1); a(ITEMS=2, U=1)", "reduce/k.cu:8: points: 'a' named twice"},
      {"a(ITEMS=1, U=1); b(U=1, ITEMS=1)", "reduce/k.cu:8: points: b: the same point as 'a'"},
      {"k(ITEMS=1, U=1)", "reduce/k.cu:8: points: k: a point cannot take the file's name"},
      {"a b(ITEMS=1, U=1)",
       "reduce/k.cu:8: points: 'a b(ITEMS=1, U=1)': 'a b' cannot be a "
       "variant name"},
      {"a[1](ITEMS=1, U=1)", "cannot be a variant name"},
      {"a", "reduce/k.cu:8: points: 'a' is not 'name(NAME=value, ...)'"},
      {"a(ITEMS=1, U=1", "reduce/k.cu:8: points: 'a(ITEMS=1, U=1' is not 'name(NAME=value"},
      {"a(ITEMS=x, U=1)",
       "reduce/k.cu:8: points: 'a(ITEMS=x, U=1)': 'ITEMS=x' is not "
       "'NAME=value'"},
      {"a(ITEMS=1, U=1) extra", "reduce/k.cu:8: points: 'a(ITEMS=1, U=1) extra' is not"},
      {"a(ITEMS=1, U=1) \"open",
       "reduce/k.cu:8: points: 'a(ITEMS=1, U=1) \"open': the summary "
       "has no closing"},
      {"a(ITEMS=1, U=1) \"\"", "an empty summary"},
      {"a; b(ITEMS=1, U=1)", "reduce/k.cu:8: points: 'a' is not 'name(NAME=value, ...)'"},
      {";", "reduce/k.cu:8: points lists no point"},
  };
  for (const auto& [points, expected] : cases)
    EXPECT_NE(error_of(points).find(expected), std::string::npos)
        << points << "\n  gave: " << error_of(points);
  // The same mistake on a later `points:` line names that line.
  EXPECT_NE(error_of("b(ITEMS=9, U=1)", "points:  a(ITEMS=1, U=1)\n")
                .find("reduce/k.cu:9: points: b: ITEMS=9 is not one of its values"),
            std::string::npos);
  EXPECT_NE(error_of("b(U=1, ITEMS=1)", "points:  a(ITEMS=1, U=1)\n")
                .find("reduce/k.cu:9: points: b: the same point as 'a' (line 8)"),
            std::string::npos);
  EXPECT_NE(error_of("a(ITEMS=2, U=1)", "points:  a(ITEMS=1, U=1)\n")
                .find("reduce/k.cu:9: points: 'a' named twice (first on line 8)"),
            std::string::npos);
  EXPECT_EQ(error_of("a(ITEMS=4, U=2)"), "");  // a good one, for contrast
}

TEST(Tunables, ANamedPointTheRequirementsLeaveOutIsAnError) {
  // ITEMS=8 is one of the values, but BLOCK * 8 > 512 at every block: the space has no such
  // point, so the name would name nothing.
  try {
    parse_header(tunable_header("ITEMS = 1, 2, 4, 8", "BLOCK * ITEMS <= 512",
                                "points:  fine(ITEMS=4)\npoints:  big(ITEMS=8)\n"),
                 "reduce/k.cu");
    FAIL() << "no error";
  } catch (const metadata_error& e) {
    EXPECT_EQ(e.line(), 9);
    EXPECT_NE(std::string(e.what()).find("reduce/k.cu:9: points: big(ITEMS=8) meets the "
                                         "requirements (require:) at none of the blocks"),
              std::string::npos)
        << e.what();
  }
}

TEST(Tunables, PointsWithoutTuneIsAnError) {
  try {
    parse_header(
        "/* kernlab\nfamily: reduce\nentry: k<BLOCK, T, OP>\nblocks: 128\ntile: "
        "BLOCK\npoints: a(X=1)\n*/\n",
        "reduce/k.cu");
    FAIL() << "no error";
  } catch (const metadata_error& e) {
    EXPECT_NE(std::string(e.what()).find("reduce/k.cu:6: points names points of the tunables: the "
                                         "header has no 'tune:'"),
              std::string::npos)
        << e.what();
  }
}

TEST(Tunables, MistakesNameTheirLine) {
  auto error_of = [](const std::string& text) -> std::string {
    try {
      parse_header(text, "reduce/k.cu");
    } catch (const metadata_error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of(tunable_header("BLOCK = 1, 2"))
                .find("reduce/k.cu:6: tune: 'BLOCK' is a "
                      "reserved name"),
            std::string::npos);
  EXPECT_NE(error_of(tunable_header("ITEMS = 1; ITEMS = 2")).find("given twice"),
            std::string::npos);
  EXPECT_NE(error_of(tunable_header("ITEMS = 1..")).find("reduce/k.cu:6: tune: ITEMS:"),
            std::string::npos);
  EXPECT_NE(error_of(tunable_header("ITEMS = 1, 2", "ITEM < 2"))
                .find("reduce/k.cu:7: require: in expression 'ITEM < 2': unknown variable 'ITEM'"),
            std::string::npos)
      << error_of(tunable_header("ITEMS = 1, 2", "ITEM < 2"));
  EXPECT_NE(error_of(tunable_header("ITEMS = 1, 2", "ITEMS > 2"))
                .find("reduce/k.cu:7: require leaves none of the 2 points"),
            std::string::npos);
  EXPECT_NE(error_of(tunable_header("ITEMS = 1..64; B = 1..64; C = 1..32"))
                .find("more than 65536 combinations"),
            std::string::npos);
  // Past 4096 points that meet the requirements (65 x 64 = 4160 here, each at some block).
  EXPECT_NE(error_of(tunable_header("ITEMS = 1..65; B = 1..64"))
                .find("more than 4096 points meet the requirements"),
            std::string::npos)
      << error_of(tunable_header("ITEMS = 1..65; B = 1..64"));
  EXPECT_NE(
      error_of(tunable_header("ITEMS = 1, 2", "", "params:  ITEMS = 4\n")).find("also a tunable"),
      std::string::npos);
  // An expression that fails at one point is the file's error, with the key's line.
  EXPECT_NE(error_of(tunable_header("ITEMS = 1, 0")).find("reduce/k.cu:5: tile"), std::string::npos)
      << error_of(tunable_header("ITEMS = 1, 0"));
  // require without tune.
  EXPECT_NE(error_of("/* kernlab\nfamily: reduce\nentry: k<BLOCK, T, OP>\nblocks: 128\ntile: "
                     "BLOCK\nrequire: BLOCK < 256\n*/\n")
                .find("has no 'tune:'"),
            std::string::npos);
}

}  // namespace
}  // namespace kl
