// Plugin loading without a GPU: the shipped plugins register, every bad plugin gives one warning
// that names the file and the reason, and nothing else is affected.
#include "families/family.hpp"
#include "registry/metadata.hpp"
#include "registry/registry.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace kl {
namespace {

class Plugins : public ::testing::Test {
 protected:
  Plugins() : reg(fams) { register_builtin_families(fams); }
  const registry_entry* entry(const std::string& name) const { return reg.find("reduce." + name); }
  std::string warning_about(const std::string& file) const {
    for (const auto& w : reg.warnings())
      if (w.find(file) != std::string::npos) return w;
    return "";
  }
  family_registry fams;
  registry reg;
};

TEST_F(Plugins, ShippedPluginsRegisterBesideTheSources) {
  reg.add_source_dir(test::kernels_dir());
  reg.add_plugin_dir(KERNLAB_PLUGIN_DIR);
  EXPECT_TRUE(reg.warnings().empty()) << reg.warnings().front();
  const auto* cub = entry("cub");
  ASSERT_NE(cub, nullptr);
  EXPECT_EQ(cub->descriptor.origin, origin_kind::plugin);
  EXPECT_NE(cub->descriptor.origin_path.find("kernlab_cub.so"), std::string::npos);
  EXPECT_TRUE(cub->descriptor.is_baseline);
  EXPECT_TRUE(cub->descriptor.blocks.empty());  // the block size does not apply
  EXPECT_TRUE(cub->descriptor.supports_dtype("int32") && cub->descriptor.supports_dtype("float32"));
  for (const char* n : {"reduce5_nvcc", "reduce6_nvcc"}) {
    const auto* e = entry(n);
    ASSERT_NE(e, nullptr) << n;
    EXPECT_EQ(e->descriptor.blocks, (std::vector<unsigned>{128, 256, 512, 1024}));
    EXPECT_FALSE(e->descriptor.is_baseline);
  }
  ASSERT_NE(entry("atomic_sum"), nullptr);  // the README's example plugin
  // Selection treats plugin variants like source variants.
  EXPECT_EQ(reg.select({"reduce5*"}).size(), 2u);
  EXPECT_EQ(reg.select({"reduce.cub"}).front(), cub);
}

TEST_F(Plugins, BadPluginsWarnOnceEachAndTheRestLoads) {
  reg.add_plugin_dir(KERNLAB_TEST_PLUGIN_DIR);
  const std::string dir = KERNLAB_TEST_PLUGIN_DIR;
  EXPECT_NE(warning_about("not_a_plugin.so").find("cannot be loaded as a shared object"), std::string::npos)
      << warning_about("not_a_plugin.so");
  EXPECT_NE(warning_about("kernlab_no_entry.so").find("no 'kernlab_plugin' entry point"), std::string::npos);
  EXPECT_NE(warning_about("kernlab_bad_abi.so").find("built for plugin ABI version 2, this kernlab needs version 1"),
            std::string::npos) << warning_about("kernlab_bad_abi.so");
  EXPECT_NE(warning_about("kernlab_unknown_family.so").find("unknown family 'no_such_family'"), std::string::npos);
  EXPECT_EQ(reg.warnings().size(), 4u);
  for (const auto& w : reg.warnings()) EXPECT_EQ(w.rfind("plugin " + dir, 0), 0u) << w;
  // The working test plugins are registered; run-time failures are the GPU tests' business.
  for (const char* n : {"always_fails", "planted_wrong", "throws_inside"}) EXPECT_NE(entry(n), nullptr) << n;
}

TEST_F(Plugins, DuplicateNameIsRefusedWithAWarning) {
  reg.add_plugin_dir(KERNLAB_PLUGIN_DIR);
  reg.add_plugin_file(std::string(KERNLAB_PLUGIN_DIR) + "/kernlab_cub.so");
  ASSERT_EQ(reg.warnings().size(), 1u);
  EXPECT_NE(reg.warnings()[0].find("'reduce.cub' is already taken"), std::string::npos);
}

TEST_F(Plugins, MissingFolderGivesNothing) {
  reg.add_plugin_dir("/no/such/folder");
  EXPECT_TRUE(reg.entries().empty());
  EXPECT_TRUE(reg.warnings().empty());
}

// nvcc_reduce restates its twins' launch geometry in C++; if a kernel file's header changes,
// this test says the plugin must follow.
TEST(PluginTwins, NvccTwinsMatchTheirKernelHeaders) {
  auto header = [](const std::string& name) {
    return parse_header(test::read_file(test::kernels_dir() + "/reduce/" + name + ".cu"), name).descriptor;
  };
  const auto r5 = header("reduce5");
  EXPECT_EQ(r5.tile, "2 * BLOCK");
  EXPECT_EQ(r5.grid, grid_kind::tiles);
  EXPECT_EQ(r5.bounds, bounds_kind::padded);
  const auto r6 = header("reduce6");
  EXPECT_EQ(r6.tile, "2 * BLOCK");
  EXPECT_EQ(r6.grid, grid_kind::resident);
  EXPECT_EQ(r6.bounds, bounds_kind::checked);
  // The plugin's traits for each twin say the same.
  const std::string p5 = test::read_file(test::source_dir() + "/plugins/nvcc_reduce/reduce5_nvcc.cu");
  EXPECT_NE(p5.find("grid = grid_mode::tiles;"), std::string::npos);
  EXPECT_NE(p5.find("bounds = bounds_mode::padded;"), std::string::npos);
  EXPECT_NE(p5.find("tile(unsigned block) { return 2 * block; }"), std::string::npos);
  const std::string p6 = test::read_file(test::source_dir() + "/plugins/nvcc_reduce/reduce6_nvcc.cu");
  EXPECT_NE(p6.find("grid = grid_mode::resident;"), std::string::npos);
  EXPECT_NE(p6.find("bounds = bounds_mode::checked;"), std::string::npos);
  EXPECT_NE(p6.find("tile(unsigned block) { return 2 * block; }"), std::string::npos);
}

}  // namespace
}  // namespace kl
