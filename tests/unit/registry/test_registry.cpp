// Discovery of kernel files, registry errors, and selection by name, wildcard and family.
#include "families/family.hpp"
#include "registry/registry.hpp"
#include "report/table.hpp"
#include "shipped_families.hpp"
#include "spec/names.hpp"
#include "test_util.hpp"
#include "tune_fixture.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

namespace fs = std::filesystem;

namespace kl {
namespace {

std::string kernel(const std::string& name, const std::string& family = "reduce") {
  return "/* kernlab\nfamily: " + family + "\nentry: " + name +
         "<BLOCK, T, OP>\nblocks: 128 256\ntile: BLOCK\n*/\n";
}

class Registry : public ::testing::Test {
 protected:
  Registry() : reg(fams) { test::register_shipped_families(fams); }
  family_registry fams;
  registry reg;
  test::temp_dir dir{"registry"};
};

TEST_F(Registry, DiscoversInNaturalOrder) {
  for (const char* n : {"v10", "v2", "v1"})
    dir.write(std::string("reduce/") + n + ".cu", kernel(n));
  dir.write("reduce/notes.txt", "not a kernel");
  dir.write("include/kernlab/x.cuh", "// headers live here");
  reg.add_source_dir(dir.str());
  ASSERT_EQ(reg.entries().size(), 3u);
  EXPECT_EQ(reg.entries()[0].descriptor.name, "v1");
  EXPECT_EQ(reg.entries()[1].descriptor.name, "v2");
  EXPECT_EQ(reg.entries()[2].descriptor.name, "v10");
  EXPECT_TRUE(reg.warnings().empty());
}

TEST_F(Registry, OrderKeyGivesTheFamilySequence) {
  auto with_order = [](const std::string& name, int order) {
    return "/* kernlab\nfamily: reduce\nentry: " + name +
           "\nblocks: 128\ntile: BLOCK\norder: " + std::to_string(order) + "\n*/\n";
  };
  dir.write("reduce/zeta.cu", with_order("zeta", 1));
  dir.write("reduce/alpha.cu", with_order("alpha", 2));
  dir.write("reduce/unordered.cu", kernel("unordered"));
  dir.write("reduce/beta.cu", with_order("beta", 2));
  reg.add_source_dir(dir.str());
  std::vector<std::string> names;
  for (const auto& e : reg.entries()) names.push_back(e.descriptor.name);
  EXPECT_EQ(names, (std::vector<std::string>{"zeta", "alpha", "beta", "unordered"}));
}

TEST_F(Registry, ShippedSeedsFollowTheSeedsSequence) {
  reg.add_source_dir(test::kernels_dir());
  std::vector<std::string> names;  // the default job's: plain files and named points
  for (const auto& e : reg.entries())
    if (e.descriptor.family == "reduce" && e.descriptor.in_default_selection())
      names.push_back(e.descriptor.name);
  const std::vector<std::string> head = {"reduce0",
                                         "reduce1",
                                         "reduce2",
                                         "reduce3",
                                         "reduce4",
                                         "reduce5",
                                         "reduce6",
                                         "reduce_unrolling2",
                                         "reduce_unrolling4",
                                         "reduce_unrolling8",
                                         "reduce_unroll_warps8",
                                         "reduce_complete_unroll_warps8",
                                         "reduce_complete_unroll",
                                         "reduce_shfl",
                                         "reduce_vec4",
                                         "reduce_multi_acc",
                                         "reduce_persistent",
                                         "reduce_single_pass"};
  ASSERT_GE(names.size(), head.size());
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + head.size()), head);
}

TEST_F(Registry, BadFilesBecomeFailedEntriesAndTheRestStays) {
  dir.write("reduce/good.cu", kernel("good"));
  dir.write("reduce/bad.cu", "/* kernlab\nfamily: reduce\nentry: bad\nblocks: 128\nwat: 1\n*/\n");
  dir.write("reduce/other.cu", kernel("other", "matmul_not_yet"));
  dir.write("reduce/empty.cu", "");
  dir.write("reduce/binary.cu", std::string("\0\1\2\3", 4));
  dir.write("reduce/notile.cu", "/* kernlab\nfamily: reduce\nentry: k\nblocks: 128\n*/\n");
  dir.write("reduce/badtype.cu", kernel("badtype") + "/* */");
  dir.write("nosuchfamily/k.cu", kernel("k", "nosuchfamily"));
  reg.add_source_dir(dir.str());
  auto error_of = [&](const std::string& name) {
    for (const auto& e : reg.entries())
      if (e.descriptor.name == name) return e.error;
    return std::string("<missing>");
  };
  EXPECT_EQ(error_of("good"), "");
  EXPECT_NE(error_of("bad").find("bad.cu:5: unknown key 'wat'"), std::string::npos)
      << error_of("bad");
  EXPECT_NE(
      error_of("other").find("family 'matmul_not_yet' but the file is in the 'reduce' folder"),
      std::string::npos);
  EXPECT_NE(error_of("empty").find("empty.cu:1: no kernlab header"), std::string::npos);
  EXPECT_NE(error_of("binary").find("not a text file"), std::string::npos);
  EXPECT_NE(error_of("notile").find("needs 'tile"), std::string::npos);
  ASSERT_EQ(reg.warnings().size(), 1u);
  EXPECT_NE(reg.warnings()[0].find("no family named 'nosuchfamily'"), std::string::npos);
}

// A symlink loop anywhere in a kernels folder costs the entries it loops through, each with a
// warning naming it; every other variant is still found.
TEST_F(Registry, SymlinkLoopsCostOnlyThemselves) {
  dir.write("reduce/good.cu", kernel("good"));
  dir.write("include/kernlab/x.cuh", "// a header\n");
  fs::create_symlink("self.cu", dir.path() / "reduce/self.cu");  // reduce/self.cu -> itself
  fs::create_symlink("pong.cu", dir.path() / "reduce/ping.cu");
  fs::create_symlink("ping.cu", dir.path() / "reduce/pong.cu");
  fs::create_symlink("loop", dir.path() / "loop");               // a family folder -> itself
  fs::create_symlink("x.cuh", dir.path() / "include/loop.cuh");  // harmless: never listed
  fs::create_symlink("nowhere.cu", dir.path() / "reduce/dangling.cu");
  reg.add_source_dir(dir.str());
  ASSERT_EQ(reg.entries().size(), 1u);
  EXPECT_EQ(reg.entries()[0].descriptor.name, "good");
  EXPECT_EQ(reg.entries()[0].error, "");
  std::string all;
  for (const auto& w : reg.warnings()) all += w + "\n";
  EXPECT_EQ(reg.warnings().size(), 4u) << all;
  for (const char* looped : {"reduce/self.cu: skipped", "reduce/ping.cu: skipped",
                             "reduce/pong.cu: skipped", "/loop: skipped"})
    EXPECT_NE(all.find(looped), std::string::npos) << looped << " in\n" << all;
}

// NVRTC reads a UTF-8 byte-order mark as a stray token, so the registry drops it.
TEST_F(Registry, AByteOrderMarkIsDroppedFromTheSource) {
  dir.write("reduce/bom.cu", "\xEF\xBB\xBF" + kernel("bom"));
  reg.add_source_dir(dir.str());
  ASSERT_EQ(reg.entries().size(), 1u);
  EXPECT_EQ(reg.entries()[0].error, "");
  EXPECT_EQ(reg.entries()[0].source, kernel("bom"));
}

// reduce's only axis is N: shared_bytes may not name K there (matmul's may).
TEST_F(Registry, AFamilyWithoutAShapeRefusesItInSharedBytes) {
  dir.write("reduce/a.cu",
            "/* kernlab\nfamily: reduce\nentry: a\nblocks: 128\ntile: BLOCK\n"
            "shared_bytes: K * TSIZE\n*/\n");
  dir.write("reduce/b.cu",
            "/* kernlab\nfamily: reduce\nentry: b\nblocks: 128\ntile: BLOCK\n"
            "params: U = 2\nshared_bytes: U * BLOCK * TSIZE\n*/\n");
  reg.add_source_dir(dir.str());
  ASSERT_EQ(reg.entries().size(), 2u);
  EXPECT_NE(reg.entries()[0].error.find("a.cu:6: shared_bytes: in expression 'K * TSIZE': unknown "
                                        "variable 'K'"),
            std::string::npos)
      << reg.entries()[0].error;
  EXPECT_NE(reg.entries()[0].error.find("(known: BLOCK, N, RESIDENT_BLOCKS"), std::string::npos)
      << reg.entries()[0].error;
  EXPECT_EQ(reg.entries()[1].error, "");
}

TEST_F(Registry, FamilyRejectsUnknownDtypeAndOp) {
  dir.write("reduce/a.cu",
            "/* kernlab\nfamily: reduce\nentry: a\nblocks: 128\ntile: BLOCK\ndtypes: int64\n*/\n");
  dir.write("reduce/b.cu",
            "/* kernlab\nfamily: reduce\nentry: b\nblocks: 128\ntile: BLOCK\nops: prod\n*/\n");
  reg.add_source_dir(dir.str());
  EXPECT_NE(reg.entries()[0].error.find("a.cu:6: reduce has no dtype 'int64'"), std::string::npos);
  EXPECT_NE(reg.entries()[1].error.find("b.cu:6: reduce has no op 'prod'"), std::string::npos);
}

// tensor_maps name buffers of the family, in expressions over its axes and the params, in a family
// that launches a variant once.
TEST_F(Registry, TensorMapsAreCheckedAgainstTheFamily) {
  const std::string head = "/* kernlab\nfamily: transpose\nentry: k<T>\nblocks: 256\n";
  dir.write("transpose/a.cu", head + "tensor_maps: C[ROWS][COLS] box [32][32]\n*/\n");
  dir.write("transpose/b.cu", head + "tensor_maps: in[ROWS][X] box [32][32]\n*/\n");
  dir.write("transpose/c.cu", head + "tensor_maps: in[ROWS][COLS] box [32][BLOCK / 8]\n*/\n");
  dir.write("reduce/d.cu",
            "/* kernlab\nfamily: reduce\nentry: d\nblocks: 128\ntile: BLOCK\n"
            "tensor_maps: in[N] box [BLOCK]\n*/\n");
  reg.add_source_dir(dir.str());
  std::map<std::string, std::string> error;
  for (const auto& e : reg.entries()) error[e.descriptor.name] = e.error;
  EXPECT_NE(error["a"].find("a.cu:5: tensor_maps: C is not a buffer of transpose (in, out) nor "
                            "of the header's scratch"),
            std::string::npos)
      << error["a"];
  EXPECT_NE(error["b"].find("b.cu:5: tensor_maps: in: in expression 'X': unknown variable 'X'"),
            std::string::npos)
      << error["b"];
  EXPECT_EQ(error["c"], "");
  EXPECT_NE(error["d"].find("d.cu:6: tensor_maps: reduce launches its variants in passes"),
            std::string::npos)
      << error["d"];
}

// scratch: a type the family knows, a name apart from its buffers, a count over the axes and the
// params, in a family that launches a variant once; a tensor map may name a scratch buffer.
TEST_F(Registry, ScratchIsCheckedAgainstTheFamily) {
  const std::string head = "/* kernlab\nfamily: transpose\nentry: k<T>\nblocks: 256\n";
  dir.write("transpose/a.cu", head + "scratch: T in[8]\n*/\n");
  dir.write("transpose/b.cu", head + "scratch: half h[8]\n*/\n");
  dir.write("transpose/c.cu", head + "scratch: int32 n[ROWS * X]\n*/\n");
  dir.write("transpose/d.cu", head +
                                  "scratch: T staged[ROWS * ceil_div(COLS, 4) * 4]; int32 n[1]\n"
                                  "tensor_maps: staged[ROWS][ceil_div(COLS, 4) * 4] box [8][32]\n"
                                  "*/\n");
  dir.write("reduce/e.cu",
            "/* kernlab\nfamily: reduce\nentry: e\nblocks: 128\ntile: BLOCK\n"
            "scratch: T w[N]\n*/\n");
  // A count below 1 (once accepted, and allocated as 4 bytes).
  dir.write("transpose/f.cu", head + "scratch: T s[-5]\n*/\n");
  dir.write("transpose/g.cu", head + "scratch: int32 n[1]; T s[BLOCK - 256]\n*/\n");
  reg.add_source_dir(dir.str());
  std::map<std::string, std::string> error;
  for (const auto& e : reg.entries()) error[e.descriptor.name] = e.error;
  EXPECT_NE(error["a"].find("a.cu:5: scratch: in is already a buffer of transpose"),
            std::string::npos)
      << error["a"];
  EXPECT_NE(error["b"].find("b.cu:5: scratch: h's type 'half' is not T or a dtype"),
            std::string::npos)
      << error["b"];
  EXPECT_NE(error["c"].find("c.cu:5: scratch: n: in expression 'ROWS * X': unknown variable 'X'"),
            std::string::npos)
      << error["c"];
  EXPECT_EQ(error["d"], "");
  EXPECT_NE(error["e"].find("e.cu:6: scratch: reduce launches its variants in passes"),
            std::string::npos)
      << error["e"];
  EXPECT_NE(error["f"].find("f.cu:5: scratch: s: '-5' is -5 at BLOCK=256 (at least 1)"),
            std::string::npos)
      << error["f"];
  EXPECT_NE(error["g"].find("g.cu:5: scratch: s: 'BLOCK - 256' is 0 at BLOCK=256 (at least 1)"),
            std::string::npos)
      << error["g"];
}

TEST_F(Registry, SelectsByNameWildcardAndQualifiedName) {
  for (const char* n : {"reduce0", "reduce5", "reduce6", "my_idea"})
    dir.write(std::string("reduce/") + n + ".cu", kernel(n));
  reg.add_source_dir(dir.str());
  auto names = [](const std::vector<const registry_entry*>& v) {
    std::vector<std::string> out;
    for (auto* e : v) out.push_back(e->descriptor.name);
    return out;
  };
  EXPECT_EQ(names(reg.select({"all"})).size(), 4u);
  EXPECT_EQ(names(reg.select({"reduce5"})), std::vector<std::string>{"reduce5"});
  EXPECT_EQ(names(reg.select({"reduce.my_idea"})), std::vector<std::string>{"my_idea"});
  EXPECT_EQ(names(reg.select({"reduce*"})),
            (std::vector<std::string>{"reduce0", "reduce5", "reduce6"}));
  EXPECT_EQ(names(reg.select({"reduce6", "reduce0"})),
            (std::vector<std::string>{"reduce0", "reduce6"}));
  EXPECT_EQ(names(reg.select({"reduce?"}, "reduce")).size(), 3u);
  try {
    reg.select({"reduce55"});
    FAIL();
  } catch (const selection_error& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'reduce5'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(reg.select({"all"}, "matmul"), selection_error);
}

TEST(Names, WildcardsAndDistance) {
  EXPECT_TRUE(wildcard_match("reduce*", "reduce5"));
  EXPECT_TRUE(wildcard_match("*unroll*", "reduce_complete_unroll"));
  EXPECT_TRUE(wildcard_match("r?duce5", "reduce5"));
  EXPECT_FALSE(wildcard_match("reduce", "reduce5"));
  EXPECT_TRUE(wildcard_match("*", ""));
  EXPECT_EQ(edit_distance("reduce5", "reduce6"), 1u);
  EXPECT_EQ(nearest_names("redcue5", {"reduce5", "matmul", "reduce6"})[0], "reduce5");
  EXPECT_TRUE(nearest_names("zzzzzzzz", {"reduce5"}).empty());
  EXPECT_EQ(split_list(" a, b ,,c "), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(natural_less("reduce2", "reduce10"));
  EXPECT_FALSE(natural_less("reduce10", "reduce2"));
}

TEST(Substitute, WholeWordsOnly) {
  EXPECT_EQ(
      substitute_words("k<BLOCK, T, OP>", {{"BLOCK", "256"}, {"T", "int"}, {"OP", "kl::sum<int>"}}),
      "k<256, int, kl::sum<int>>");
  EXPECT_EQ(substitute_words("k<BLOCKS, TT>", {{"BLOCK", "1"}, {"T", "x"}}), "k<BLOCKS, TT>");
}

}  // namespace
}  // namespace kl

namespace kl {
namespace {

// A tunable file's points are a space for `kernlab tune`: "all", "family.*" and a family alone
// leave them out (the default job stays the ladder); a pattern that names the file takes them.
TEST(RegistryTunables, EverythingLeavesPointsOutAndNamingTheFileTakesThem) {
  family_registry fams;
  test::register_shipped_families(fams);
  registry reg(fams);
  test::temp_dir dir("registry_tunables");
  test::write_tunable_reduce(dir, "tsum");
  dir.write("reduce/plain.cu", test::read_file(test::kernels_dir() + "/reduce/reduce5.cu"));
  reg.add_source_dir(dir.str());
  auto names = [&](const std::vector<std::string>& patterns, const std::string& family = "") {
    std::vector<std::string> out;
    for (const auto* e : reg.select(patterns, family)) out.push_back(e->descriptor.name);
    return out;
  };
  const std::vector<std::string> plain = {"plain"};
  EXPECT_EQ(names({"all"}), plain);
  EXPECT_EQ(names({"all"}, "reduce"), plain);
  EXPECT_EQ(names({"reduce.*"}), plain);
  EXPECT_EQ(names({"tsum"}).size(), 4u);  // ITEMS = 1, 2, 4, 8
  EXPECT_EQ(names({"reduce.tsum"}).size(), 4u);
  EXPECT_EQ(names({"ts*"}).size(), 4u);
  EXPECT_EQ(names({"tsum[ITEMS=8]"}), std::vector<std::string>{"tsum[ITEMS=8]"});
  // --list without a selection shows the file once, with its number of points.
  std::ostringstream os;
  print_list(os, reg);
  EXPECT_NE(os.str().find("4 points: kernlab tune --variant tsum"), std::string::npos) << os.str();
  EXPECT_EQ(os.str().find("tsum[ITEMS=8]"), std::string::npos) << os.str();
}

// A tunable file whose `points:` names two of its four points (the reverse of their natural
// order, so that the listed order shows), between two plain files of the sequence.
const char* named_points_file = R"(/* kernlab
family:  reduce
entry:   tn<BLOCK, ITEMS, T, OP>
blocks:  128 256
tune:    ITEMS = 1, 2, 4, 8
tile:    ITEMS * BLOCK
summary: ITEMS elements per thread
points:  tn_eight(ITEMS=8) "eight elements per thread"
points:  tn_two(ITEMS=2)
order:   5
*/
)";

std::string plain_kernel(const std::string& name, int order) {
  return "/* kernlab\nfamily: reduce\nentry: " + name +
         "<BLOCK, T, OP>\nblocks: 128 256\ntile: BLOCK\nsummary: plain " + name +
         (order < 0 ? "" : "\norder: " + std::to_string(order)) + "\n*/\n";
}

class NamedPoints : public ::testing::Test {
 protected:
  NamedPoints() : reg(fams) {
    test::register_shipped_families(fams);
    dir.write("reduce/tn.cu", named_points_file);
    dir.write("reduce/first.cu", plain_kernel("first", 1));
    dir.write("reduce/later.cu", plain_kernel("later", 9));
    dir.write("reduce/unordered.cu", plain_kernel("unordered", -1));
    reg.add_source_dir(dir.str());
  }
  std::vector<std::string> names(const std::vector<std::string>& patterns,
                                 const std::string& family = "") const {
    std::vector<std::string> out;
    for (const auto* e : reg.select(patterns, family)) out.push_back(e->descriptor.name);
    return out;
  }
  family_registry fams;
  registry reg;
  test::temp_dir dir{"named_points"};
};

// The named points stand at the file's place in the sequence, in the order `points:` gives,
// then the file's other points.
TEST_F(NamedPoints, TheSequenceHasThemAtTheFilesOrderInTheListedOrder) {
  std::vector<std::string> all;
  for (const auto& e : reg.entries()) {
    EXPECT_EQ(e.error, "") << e.descriptor.name;
    all.push_back(e.descriptor.name);
  }
  EXPECT_EQ(all, (std::vector<std::string>{"first", "tn_eight", "tn_two", "tn[ITEMS=1]",
                                           "tn[ITEMS=4]", "later", "unordered"}));
  EXPECT_TRUE(reg.warnings().empty());
}

TEST_F(NamedPoints, SelectingEverythingTakesTheNamedPointsAndLeavesTheRestOut) {
  const std::vector<std::string> sequence = {"first", "tn_eight", "tn_two", "later", "unordered"};
  EXPECT_EQ(names({"all"}), sequence);
  EXPECT_EQ(names({"all"}, "reduce"), sequence);  // --family reduce alone: the default job
  EXPECT_EQ(names({"reduce.*"}), sequence);
  EXPECT_EQ(names({"*"}), sequence);
}

TEST_F(NamedPoints, TheFilesNameTakesEveryPointAndAPointsNameTakesItAlone) {
  const std::vector<std::string> file = {"tn_eight", "tn_two", "tn[ITEMS=1]", "tn[ITEMS=4]"};
  EXPECT_EQ(names({"tn"}), file);
  EXPECT_EQ(names({"reduce.tn"}), file);
  EXPECT_EQ(names({"tn"}, "reduce"), file);
  EXPECT_EQ(names({"tn_two"}), std::vector<std::string>{"tn_two"});
  EXPECT_EQ(names({"reduce.tn_eight"}), std::vector<std::string>{"tn_eight"});
  EXPECT_EQ(names({"tn[ITEMS=4]"}), std::vector<std::string>{"tn[ITEMS=4]"});
  EXPECT_EQ(names({"tn_*"}), (std::vector<std::string>{"tn_eight", "tn_two"}));
  EXPECT_EQ(names({"tn_two", "first"}), (std::vector<std::string>{"first", "tn_two"}));
  // A typo of the file's name is answered with the file's name.
  try {
    reg.select({"tm"});
    FAIL();
  } catch (const selection_error& e) {
    EXPECT_NE(std::string(e.what()).find("'tn'"), std::string::npos) << e.what();
  }
}

TEST_F(NamedPoints, ListShowsTheFileOnceAndEachNamedPointOnItsOwnLine) {
  std::ostringstream os;
  print_list(os, reg);
  const std::string out = os.str();
  const auto at = [&](const std::string& text) {
    const auto p = out.find(text);
    EXPECT_NE(p, std::string::npos) << text << " in\n" << out;
    return p;
  };
  // The file: one line, all four points counted.
  const auto file = at("reduce.tn ");
  at("4 points: kernlab tune --variant tn searches them; --list --variant tn lists them");
  // Each named point: its blocks, its origin with its values, its summary (or the file's).
  const std::string origin = "source " + dir.str() + "/reduce/tn.cu";
  const auto eight = at("reduce.tn_eight");
  at(origin + " (ITEMS=8)\n    eight elements per thread\n");
  const auto two = at("reduce.tn_two");
  at(origin + " (ITEMS=2)\n    ITEMS elements per thread\n");
  EXPECT_NE(out.substr(eight, two - eight).find(" 128,256 "), std::string::npos) << out;
  EXPECT_EQ(out.find("tn[ITEMS="), std::string::npos) << out;
  // In the sequence: first, the file, its named points, later.
  EXPECT_LT(at("reduce.first"), file);
  EXPECT_LT(file, eight);
  EXPECT_LT(eight, two);
  EXPECT_LT(two, at("reduce.later"));

  // --list --variant tn: every point on its own line, the file line gone.
  std::ostringstream one;
  print_list(one, reg, reg.select({"tn"}));
  for (const char* name :
       {"reduce.tn_eight", "reduce.tn_two", "reduce.tn[ITEMS=1]", "reduce.tn[ITEMS=4]"})
    EXPECT_NE(one.str().find(name), std::string::npos) << name << " in\n" << one.str();
  EXPECT_EQ(one.str().find("points: kernlab tune"), std::string::npos) << one.str();
}

// A named point's name is a variant name like any: the first registered keeps it, the other is
// refused with a warning naming both, as for two files.
TEST(NamedPointsClash, ANamedPointsNameTakenTwiceIsRefusedLikeAnyDuplicate) {
  family_registry fams;
  test::register_shipped_families(fams);
  registry reg(fams);
  test::temp_dir dir("named_points_clash");
  dir.write("reduce/tn.cu", named_points_file);
  dir.write("reduce/tn_two.cu", plain_kernel("tn_two", 7));  // later in the sequence than tn
  reg.add_source_dir(dir.str());
  const registry_entry* kept = reg.find("reduce.tn_two");
  ASSERT_NE(kept, nullptr);
  EXPECT_TRUE(kept->descriptor.named_point);
  ASSERT_EQ(reg.warnings().size(), 1u);
  EXPECT_NE(reg.warnings()[0].find("tn_two.cu: variant name 'reduce.tn_two' is already taken by "
                                   "source " +
                                   dir.str() + "/reduce/tn.cu"),
            std::string::npos)
      << reg.warnings()[0];
}

// The seeds' steps merged into tunable files are still the sequence's steps, by their names,
// with their summaries, at their places; the files' other points are not.
TEST(ShippedNamedPoints, TheMergedStepsKeepTheirNamesPlacesAndSummaries) {
  family_registry fams;
  test::register_shipped_families(fams);
  registry reg(fams);
  reg.add_source_dir(test::kernels_dir());
  auto sequence = [&](const std::string& family) {
    std::vector<std::string> out;
    for (const auto* e : reg.select({"all"}, family)) out.push_back(e->descriptor.name);
    return out;
  };
  const auto reduce = sequence("reduce");
  const auto at = std::find(reduce.begin(), reduce.end(), "reduce6");
  ASSERT_NE(at, reduce.end());
  EXPECT_EQ(std::vector<std::string>(at, std::min(at + 5, reduce.end())),
            (std::vector<std::string>{"reduce6", "reduce_unrolling2", "reduce_unrolling4",
                                      "reduce_unrolling8", "reduce_unroll_warps8"}));
  const auto qam = sequence("qam256");
  EXPECT_EQ(qam, (std::vector<std::string>{"baseline", "coalesced", "branch_free",
                                           "vec2_gridstride", "vec2_unroll4", "vec2_stream",
                                           "d2d_copy"}));  // the family.toml's baseline last
  struct step {
    const char* name;
    const char* file;
    std::vector<std::pair<std::string, std::int64_t>> point;
    const char* summary;
  };
  for (const step& s :
       {step{"reduce.reduce_unrolling2",
             "reduce_unrolling",
             {{"UNROLL", 2}},
             "a block consumes 2 data blocks, then the in-block tree"},
        step{"reduce.reduce_unrolling4",
             "reduce_unrolling",
             {{"UNROLL", 4}},
             "a block consumes 4 data blocks, then the in-block tree"},
        step{"reduce.reduce_unrolling8",
             "reduce_unrolling",
             {{"UNROLL", 8}},
             "a block consumes 8 data blocks, then the in-block tree"},
        step{"qam256.vec2_unroll4",
             "vec2_unroll",
             {{"UNROLL", 4}, {"STREAM", 0}},
             "eight symbols per thread, four 16-byte loads in flight, 16-byte stores"},
        step{"qam256.vec2_stream",
             "vec2_unroll",
             {{"UNROLL", 4}, {"STREAM", 1}},
             "as vec2_unroll4, with evict-first (streaming) loads and stores"}}) {
    SCOPED_TRACE(s.name);
    const registry_entry* e = reg.find(s.name);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->error, "");
    EXPECT_TRUE(e->descriptor.named_point);
    EXPECT_EQ(e->descriptor.tunable_file, s.file);
    EXPECT_EQ(e->descriptor.point, s.point);
    EXPECT_EQ(e->descriptor.summary, s.summary);
    EXPECT_EQ(e->descriptor.blocks, (std::vector<unsigned>{128, 256, 512, 1024}));
  }
  // The files' other points: for a tune or a selection that names the file.
  EXPECT_EQ(reg.select({"reduce_unrolling"}, "reduce").size(), 4u);  // UNROLL = 2, 4, 8, 16
  EXPECT_EQ(reg.select({"vec2_unroll"}, "qam256").size(), 8u);       // 4 UNROLL x 2 STREAM
  ASSERT_NE(reg.find("reduce.reduce_unrolling[UNROLL=16]"), nullptr);
  EXPECT_FALSE(reg.find("reduce.reduce_unrolling[UNROLL=16]")->descriptor.in_default_selection());
}

}  // namespace
}  // namespace kl
