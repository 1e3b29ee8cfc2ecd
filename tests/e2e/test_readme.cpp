// The README's and the docs' examples are true: the plugin of docs/plugins.md is the file the
// project builds, every page's commands run (the README's `kernlab new` among them:
// test_scaffold.cpp tests what it writes), the README's example variant compiles, and the README
// stays a quick start that maps every page. Their GPU runs are in
// test_gpu_readme.cpp.
#include "families/family.hpp"
#include "readme_commands.hpp"
#include "registry/registry.hpp"
#include "runner/runner.hpp"
#include "shipped_families.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace kl {
namespace {

using test::code_blocks;
using test::readme;

TEST(Readme, PluginExampleIsTheBuiltFile) {
  const std::string file =
      test::read_file(test::source_dir() + "/plugins/example/example_plugin.cu");
  ASSERT_FALSE(file.empty());
  bool found = false;
  for (const auto& b : code_blocks(test::doc_page("docs/plugins.md"), "cpp"))
    found = found || b == file;
  EXPECT_TRUE(found)
      << "docs/plugins.md's plugin example differs from plugins/example/example_plugin.cu";
}

// The README is a quick start: short, and a map of docs/ with a line for every page.
TEST(Readme, IsAQuickStartThatMapsEveryPage) {
  const std::string md = readme();
  EXPECT_LE(std::count(md.begin(), md.end(), '\n'), 200);
  for (const auto& page : test::doc_pages()) {
    if (page == "README.md") continue;
    EXPECT_NE(md.find("- [" + page + "](" + page + "):"), std::string::npos)
        << "README.md's map of the docs has no line for " << page;
  }
}

// Replays the shell blocks of the README and of every page of docs/ as a user would, in a scratch
// copy of kernels_src (so the `cp` of the README's first variant works) with the files the pages
// tell the reader to write: every kernlab command must succeed. This binary sees no GPU, so runs
// stop after compiling and --compile-only makes that the success case;
// GpuReadme.CommandsRunAndPrintTheirTables runs them for real.
TEST(Readme, CommandsRun) {
  test::temp_dir dir("readme_cmds");
  std::filesystem::copy(test::kernels_dir(), dir.path() / "kernels_src",
                        std::filesystem::copy_options::recursive);
  test::write_doc_files(dir.str());
  const std::string config = dir.write("empty.cfg", "");
  int commands = 0;
  for (auto c : test::readme_commands()) {
    if (c.is_kernlab && c.text.find(" tune ") != std::string::npos) {
      // A tune has nothing to compile without its device: it shows the space, then says so.
      const auto r = test::run_command(test::readme_shell_command(c, dir.str(), config));
      EXPECT_EQ(r.code, 3) << c.line << "\n" << r.output;
      EXPECT_NE(r.output.find(" points over "), std::string::npos) << c.line << "\n" << r.output;
      ++commands;
      continue;
    }
    if (c.is_kernlab && c.text.find(" compare ") != std::string::npos) {
      // Without a GPU the runs before it timed nothing: no row to pair, which is an error (a
      // comparison of nothing must not pass a CI job), naming the files, exit code 4.
      const auto r = test::run_command(test::readme_shell_command(c, dir.str(), config));
      EXPECT_EQ(r.code, 4) << c.line << "\n" << r.output;
      EXPECT_NE(r.output.find("nothing was compared"), std::string::npos) << c.line << "\n"
                                                                          << r.output;
      ++commands;
      continue;
    }
    if (c.is_kernlab && (c.text.find(" plot --roofline ") != std::string::npos ||
                         c.text.find(" plot --timeline ") != std::string::npos)) {
      // Without a GPU the run before it timed nothing (a --pipeline run writes no file): the
      // picture is refused, naming the file, exit code 4.
      const auto r = test::run_command(test::readme_shell_command(c, dir.str(), config));
      EXPECT_EQ(r.code, 4) << c.line << "\n" << r.output;
      EXPECT_TRUE(r.output.find(".json: no timed rows to draw") != std::string::npos ||
                  r.output.find(".json: cannot be read") != std::string::npos)
          << c.line << "\n"
          << r.output;
      ++commands;
      continue;
    }
    if (c.is_kernlab) {
      const bool compiles_only = c.text.find("--list") != std::string::npos ||
                                 c.text.find("--compile-only") != std::string::npos ||
                                 test::is_new_command(c);
      if (!compiles_only) c.text += " --compile-only";
      ++commands;
    }
    const auto r = test::run_command(test::readme_shell_command(c, dir.str(), config));
    EXPECT_EQ(r.code, 0) << c.line << "\n" << r.output;
  }
  EXPECT_GE(commands, 6);
  // The README's own: the first variant's and the first family's.
  int in_readme = 0;
  for (const auto& c : test::readme_commands()) in_readme += c.line.rfind("README.md: ", 0) == 0;
  EXPECT_GE(in_readme, 3);
}

// The project's documents stand alone: no link or path leads outside the repository (the
// qam256 definition once lived in ../shared/specs/, which a clone does not have).
TEST(Readme, DocsLinkNothingOutsideTheRepository) {
  namespace fs = std::filesystem;
  std::vector<fs::path> docs = {fs::path(test::source_dir()) / "README.md"};
  for (const auto& e : fs::recursive_directory_iterator(fs::path(test::source_dir()) / "docs"))
    if (e.path().extension() == ".md") docs.push_back(e.path());
  const fs::path root = fs::weakly_canonical(test::source_dir());
  for (const auto& path : docs) {
    const std::string md = test::read_file(path.string());
    EXPECT_EQ(md.find("shared/"), std::string::npos) << path;
    // Every relative link resolves to a file or folder inside the repository.
    for (std::size_t at = md.find("]("); at != std::string::npos; at = md.find("](", at + 2)) {
      const std::size_t end = md.find(')', at);
      if (end == std::string::npos) break;
      std::string target = md.substr(at + 2, end - at - 2);
      if (target.rfind("http", 0) == 0 || target.rfind("#", 0) == 0) continue;
      target = target.substr(0, target.find('#'));
      const fs::path resolved = fs::weakly_canonical(path.parent_path() / target);
      EXPECT_EQ(resolved.string().rfind(root.string(), 0), 0u) << path << " links " << target;
      EXPECT_TRUE(fs::exists(resolved)) << path << " links " << target;
    }
  }
  // The qam256 definition the README and the contract point to is there.
  EXPECT_NE(readme().find("](docs/qam256.md)"), std::string::npos);
  const std::string def = test::read_file(test::source_dir() + "/docs/qam256.md");
  EXPECT_NE(def.find("13.0384048f"), std::string::npos);
  EXPECT_NE(def.find("rint(128 - 8 * L)"), std::string::npos);
}

TEST(Readme, TheTwoCommandsAreThere) {
  const std::string md = readme();
  EXPECT_NE(md.find("scripts/setup.sh && build/kernlab\n"), std::string::npos);
  EXPECT_NE(md.find("scripts/setup.sh && ctest --test-dir build --output-on-failure\n"),
            std::string::npos);
  // CI runs the README's test command.
  const std::string ci = test::read_file(test::source_dir() + "/.ci/run");
  EXPECT_NE(ci.find("scripts/setup.sh && ctest --test-dir build --output-on-failure"),
            std::string::npos);
}

TEST(Readme, ExampleVariantCompiles) {
  const std::string src = test::readme_example_variant();
  ASSERT_FALSE(src.empty());
  test::temp_dir dir("readme");
  dir.write("reduce/my_idea.cu", src);
  family_registry fams;
  test::register_shipped_families(fams);
  registry reg(fams);
  reg.add_source_dir(dir.str());
  ASSERT_EQ(reg.entries().size(), 1u);
  ASSERT_EQ(reg.entries()[0].error, "");
  run_request r;
  r.variants = reg.select({"my_idea"});
  r.blocks = {128, 256, 512, 1024};
  r.dtypes = {"int32", "float32"};
  r.ops = {"sum", "min", "max"};
  r.axes = {axis_choice::sizes({1, 1000003})};
  r.include_dirs = {test::kernels_dir() + "/include", test::cuda_include()};
  r.compile_only = true;  // validated on a GPU by GpuReadme.ExampleVariantValidates
  const auto sweep = runner(fams, r).run();
  ASSERT_EQ(sweep.compiles.size(), 1u);
  EXPECT_EQ(sweep.compiles[0].error, "");
  EXPECT_EQ(sweep.compiles[0].result.lowered_names.size(), 24u);
}

}  // namespace
}  // namespace kl
