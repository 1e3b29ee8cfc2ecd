// `kernlab new family` and `kernlab new variant`: what they write compiles as written for every
// shipped family, nothing is written over, and each mistake is a usage error naming it. The GPU
// runs of the same skeletons are in test_gpu_scaffold.cpp.
#include "app/scaffold.hpp"
#include "shipped_families.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace kl {
namespace {

namespace fs = std::filesystem;

// kernlab in `dir` with the shipped kernels folder behind the command line's (as the shipped
// config gives it), so that `new` writes into the first --kernels-dir.
test::command_result kernlab_in(const test::temp_dir& dir, const std::string& args) {
  return test::run_command("cd " + dir.str() + " && " + KERNLAB_BINARY + " --config /dev/null " +
                           args + " --kernels-dir " + test::kernels_dir());
}

// The compile table's row of `variant` says ok.
void expect_compiled(const std::string& output, const std::string& variant) {
  const auto at = output.find("\n" + variant + " ");
  ASSERT_NE(at, std::string::npos) << variant << "\n" << output;
  const std::string line = output.substr(at + 1, output.find('\n', at + 1) - at - 1);
  EXPECT_EQ(line.substr(line.size() - 4), "  ok") << line;
}

TEST(Scaffold, ANewFamilyCompilesAsWrittenAndIsNeverWrittenOver) {
  test::temp_dir dir("scaffold_family");
  const auto made = kernlab_in(dir, "new family my_map --kernels-dir mine");
  ASSERT_EQ(made.code, 0) << made.output;
  for (const char* f : {"family.toml", "reference.cu", "simple.cu"})
    EXPECT_TRUE(fs::exists(dir.path() / "mine/my_map" / f)) << f;
  // It says how to run it, with the folder it wrote into.
  EXPECT_NE(made.output.find("--kernels-dir mine --family my_map --compile-only"),
            std::string::npos)
      << made.output;
  const auto list = kernlab_in(dir, "--kernels-dir mine --family my_map --list");
  ASSERT_EQ(list.code, 0) << list.output;
  EXPECT_NE(list.output.find("my_map.d2d_copy"), std::string::npos) << list.output;
  const auto compiled =
      kernlab_in(dir, "--kernels-dir mine --family my_map --dtype float32,float64 --compile-only");
  ASSERT_EQ(compiled.code, 0) << compiled.output;
  expect_compiled(compiled.output, "my_map.simple");
  expect_compiled(compiled.output, "my_map.reference");

  // Again: refused, and the folder is as it was.
  const std::string before = test::read_file((dir.path() / "mine/my_map/simple.cu").string());
  dir.write("mine/my_map/simple.cu", before + "// mine\n");
  const auto again = kernlab_in(dir, "new family my_map --kernels-dir mine");
  EXPECT_EQ(again.code, 2) << again.output;
  EXPECT_NE(again.output.find("exists"), std::string::npos) << again.output;
  EXPECT_EQ(test::read_file((dir.path() / "mine/my_map/simple.cu").string()), before + "// mine\n");
  // A shipped family's name is taken.
  const auto shipped = kernlab_in(dir, "new family reduce --kernels-dir mine");
  EXPECT_EQ(shipped.code, 2) << shipped.output;
  EXPECT_NE(shipped.output.find("a family of that name exists"), std::string::npos)
      << shipped.output;
  EXPECT_FALSE(fs::exists(dir.path() / "mine/reduce"));
}

// For every shipped family, a new variant from its first kernel file compiles as written, in a
// folder of its own (my_kernels without --kernels-dir).
TEST(Scaffold, ANewVariantOfEveryShippedFamilyCompilesAsWritten) {
  family_registry fams;
  test::register_shipped_families(fams);
  test::temp_dir dir("scaffold_variant");
  for (const auto& family : fams.names()) {
    SCOPED_TRACE(family);
    // Without --kernels-dir on the command line the shipped folder is the config's.
    dir.write("shipped.cfg", "kernels-dir = " + test::kernels_dir() + "\n");
    const auto made =
        test::run_command("cd " + dir.str() + " && " + KERNLAB_BINARY + " --config shipped.cfg " +
                          "new variant " + family + " idea");
    ASSERT_EQ(made.code, 0) << made.output;
    ASSERT_TRUE(fs::exists(dir.path() / "my_kernels" / family / "idea.cu")) << made.output;
    const auto compiled =
        kernlab_in(dir, "--kernels-dir my_kernels --variant " + family + ".idea --compile-only");
    ASSERT_EQ(compiled.code, 0) << compiled.output;
    expect_compiled(compiled.output, family + ".idea");
  }
}

TEST(Scaffold, ANewVariantFromATunableFileIsItsSpaceWithoutItsNamedPoints) {
  test::temp_dir dir("scaffold_tunable");
  const auto made =
      kernlab_in(dir, "new variant reduce wider --from reduce_unrolling --kernels-dir mine");
  ASSERT_EQ(made.code, 0) << made.output;
  const std::string text = test::read_file(dir.str() + "/mine/reduce/wider.cu");
  EXPECT_EQ(text.find("points:"), std::string::npos) << text;
  EXPECT_NE(text.find("tune:"), std::string::npos) << text;
  const auto list = kernlab_in(dir, "--kernels-dir mine --list --variant 'wider*'");
  ASSERT_EQ(list.code, 0) << list.output;
  EXPECT_NE(list.output.find("reduce.wider[UNROLL=2]"), std::string::npos) << list.output;
}

TEST(Scaffold, EachMistakeIsAUsageErrorNamingIt) {
  test::temp_dir dir("scaffold_errors");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"new family 9lives", "'9lives' is not a name"},
      {"new family my-map", "'my-map' is not a name"},
      {"new variant reduce my.idea", "'my.idea' is not a name"},
      {"new variant reduc idea", "unknown family 'reduc'; did you mean 'reduce'?"},
      {"new variant reduce reduce5", "reduce.reduce5 exists"},
      {"new variant reduce reduce_unrolling", "reduce.reduce_unrolling exists"},
      {"new variant reduce idea --from reduce55", "did you mean 'reduce5'?"},
      {"new family", "usage: kernlab new family NAME"},
      {"new variant reduce", "usage: kernlab new family NAME"},
      {"new thing x", "usage: kernlab new family NAME"},
      {"new family x --from reduce5", "--from is for kernlab new variant"},
      {"new family x --block 256", "--block"},
  };
  for (const auto& [args, said] : cases) {
    const auto r = kernlab_in(dir, args + " --kernels-dir mine");
    EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(said), std::string::npos) << args << "\n" << r.output;
  }
  EXPECT_FALSE(fs::exists(dir.path() / "mine")) << "a refused command wrote a file";
}

TEST(Scaffold, ACopySaysWhereItCameFromAndLeavesTheSequence) {
  const std::string source =
      "// step 3\n/* kernlab\nfamily:  reduce\nentry:   k<BLOCK, T, OP>\nblocks:  128\n"
      "tile: BLOCK\nsummary:  the original\norder:   3\npoints:  a(U=1)\n*/\n__global__ void k() "
      "{}\n// order: in the code stays\n";
  const std::string copy = app::variant_from(source, "reduce.r3", "reduce", "mine");
  EXPECT_EQ(copy.rfind("// mine: written by `kernlab new variant reduce mine` from reduce.r3.", 0),
            0u)
      << copy;
  EXPECT_NE(copy.find("\nsummary: started from reduce.r3: the original\n"), std::string::npos)
      << copy;
  EXPECT_EQ(copy.find("order:   3"), std::string::npos) << copy;
  EXPECT_EQ(copy.find("points:"), std::string::npos) << copy;
  EXPECT_NE(copy.find("// order: in the code stays"), std::string::npos) << copy;
  EXPECT_NE(copy.find("// step 3\n/* kernlab\nfamily:  reduce\n"), std::string::npos) << copy;
  // A header without a summary gets one.
  const std::string bare =
      app::variant_from("/* kernlab\nfamily: reduce\n*/\n", "reduce.b", "reduce", "mine");
  EXPECT_NE(bare.find("family: reduce\nsummary: started from reduce.b\n*/"), std::string::npos)
      << bare;
  // The family skeleton names itself in every file.
  for (const auto& [file, text] : app::family_skeleton("my_map", "kernlab --family my_map")) {
    EXPECT_NE(text.find("my_map"), std::string::npos) << file;
    EXPECT_EQ(text.find("@NAME@"), std::string::npos) << file;
  }
}

}  // namespace
}  // namespace kl
