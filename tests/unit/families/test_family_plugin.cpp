// Family plugins (include/kernlab/family_api.h) without a GPU: the description's `plugin`,
// plugin generators and a plugin reference, their mistakes, and the loader's checks of the file.
// tests/gpu/test_gpu_data_family.cpp runs the same family on the GPU.
#include "core/errors.hpp"
#include "data_family_fixture.hpp"
#include "plugin_host/family_plugin.hpp"
#include "spec/family_spec.hpp"
#include "spec/metadata.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace kl {
namespace {

family_spec parse_affine(const std::string& toml, const test::temp_dir& dir,
                         const std::vector<std::string>& plugin_dirs = {}) {
  return parse_family_spec(toml, "affine/family.toml", dir.str() + "/affine", "affine",
                           plugin_dirs);
}

TEST(FamilyPlugin, TheDescriptionNamesItsFileGeneratorsAndReference) {
  test::temp_dir dir("family_plugin_spec");
  test::write_affine_family(dir);
  const family_spec s = parse_affine(test::affine_family_toml, dir);
  EXPECT_EQ(s.plugin, dir.str() + "/affine/kernlab_affine_family.so");
  EXPECT_EQ(s.plugin_line, 3);
  ASSERT_EQ(s.buffers.size(), 2u);
  EXPECT_EQ(s.buffers[0].exact->kind, "plugin");
  EXPECT_EQ(s.buffers[0].exact->function, "quarters");
  EXPECT_EQ(s.reference.plugin_function, "affine");
  EXPECT_EQ(s.reference.type, "T");  // the plugin writes each output in its own type
  EXPECT_TRUE(s.reference.file.empty());
}

TEST(FamilyPlugin, FoundInAPluginFolderWhenNotBesideTheDescription) {
  test::temp_dir dir("family_plugin_dirs");
  test::write_affine_family(dir, /*with_plugin=*/false);
  const std::string folder = std::string(KERNLAB_TEST_PLUGIN_DIR) + "/families";
  const family_spec s = parse_affine(test::affine_family_toml, dir, {"/nonexistent", folder});
  EXPECT_EQ(s.plugin, folder + "/kernlab_affine_family.so");
}

struct plugin_mistake {
  std::string from, to;
  int line;
  std::string says;
};
class FamilyPluginMistake : public ::testing::TestWithParam<plugin_mistake> {};

TEST_P(FamilyPluginMistake, NamesTheLineAndWhatWasExpected) {
  const plugin_mistake& m = GetParam();
  test::temp_dir dir("family_plugin_mistake");
  test::write_affine_family(dir);
  std::string toml = test::affine_family_toml;
  const auto at = toml.find(m.from);
  ASSERT_NE(at, std::string::npos) << m.from;
  toml.replace(at, m.from.size(), m.to);
  try {
    parse_affine(toml, dir, {"/nonexistent/plugins"});
    FAIL() << "no error for " << m.to;
  } catch (const metadata_error& e) {
    EXPECT_EQ(e.line(), m.line) << e.what();
    EXPECT_NE(std::string(e.what()).find(m.says), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Examples, FamilyPluginMistake,
    ::testing::Values(
        plugin_mistake{"\"kernlab_affine_family.so\"", "\"missing.so\"", 3,
                       "family plugin 'missing.so' not found (looked in "},
        plugin_mistake{"\"kernlab_affine_family.so\"", "\"missing.so\"", 3, "/nonexistent/plugins"},
        plugin_mistake{"plugin  = \"kernlab_affine_family.so\"\n", "", 15,
                       "a plugin generator needs the family's 'plugin'"},
        plugin_mistake{"exact  = { kind = \"plugin\", function = \"quarters\" }",
                       "exact  = { kind = \"plugin\" }", 16, "needs a 'function'"},
        plugin_mistake{"exact  = { kind = \"plugin\", function = \"quarters\" }",
                       "exact  = { kind = \"plugin\", function = \"quarters\", den = 4 }", 16,
                       "unknown key 'den'"},
        plugin_mistake{"plugin = \"affine\"", "plugin = \"affine\"\nfile = \"reference.cu\"", 31,
                       "[reference] plugin takes no 'file'"},
        plugin_mistake{"plugin = \"affine\"", "", 29, "needs 'file' and 'entry', or 'plugin'"}));

// The loader, on the built test plugin: its table is checked, its functions found by name.
TEST(FamilyPlugin, LoadsTheTableAndFindsFunctionsByName) {
  const auto p = open_family_plugin(test::affine_plugin_file());
  EXPECT_EQ(open_family_plugin(test::affine_plugin_file()), p);  // once per process
  const kl_family_generate_fn gen = p->generator("quarters");
  const char* names[] = {"N", "SCALE"};
  const double values[] = {100, 3};
  const kl_family_point point = {"affine", "float32", "", "exact", 42, names, values, 2};
  // Element i depends on i alone, whatever the range it comes in.
  std::vector<float> whole(100), parts(100);
  char error[256] = "";
  ASSERT_EQ(gen(&point, "x", "float32", whole.data(), 0, 100, error, sizeof error), KL_FAMILY_OK);
  ASSERT_EQ(gen(&point, "x", "float32", parts.data(), 0, 37, error, sizeof error), KL_FAMILY_OK);
  ASSERT_EQ(gen(&point, "x", "float32", parts.data() + 37, 37, 63, error, sizeof error),
            KL_FAMILY_OK);
  EXPECT_EQ(whole, parts);
  EXPECT_EQ(whole[1], static_cast<float>((7919 + 42) % 4001 - 2000) / 4.0f);
  try {
    p->generator("gaussian");
    FAIL() << "found a generator the plugin does not have";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("has no generator 'gaussian' (it has quarters)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(p->reference("quarters"), std::runtime_error);
  EXPECT_NE(p->reference("affine"), nullptr);
}

TEST(FamilyPlugin, RefusesFilesThatAreNotFamilyPlugins) {
  const std::string dir = KERNLAB_TEST_PLUGIN_DIR;
  auto why = [](const std::string& path) {
    try {
      family_plugin p(path);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  // A variant plugin: the right kind of file, the wrong entry point.
  EXPECT_NE(why(dir + "/kernlab_run_error.so").find("no 'kernlab_family' entry point"),
            std::string::npos);
  EXPECT_NE(why(dir + "/not_a_plugin.so").find("cannot be loaded as a shared object"),
            std::string::npos);
  EXPECT_NE(why(dir + "/no_such_file.so").find("cannot be loaded"), std::string::npos);
}

// Without a GPU the binary lists the family, and a description whose plugin is missing is
// reported with its line while the other families still list.
TEST(FamilyPlugin, ListedByTheBinaryAndAMissingPluginNamed) {
  test::temp_dir dir("family_plugin_cli");
  test::write_affine_family(dir);
  auto r = test::run_kernlab("--kernels-dir " + dir.str() + " --list");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("affine"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("affine.simple"), std::string::npos) << r.output;

  std::filesystem::remove(dir.str() + "/affine/kernlab_affine_family.so");
  r = test::run_kernlab("--kernels-dir " + dir.str() + " --family affine --compile-only");
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("family.toml:3: family plugin 'kernlab_affine_family.so' not found"),
            std::string::npos)
      << r.output;
  r = test::run_kernlab("--kernels-dir " + dir.str() + " --list");
  EXPECT_NE(r.output.find("matmul"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kl
