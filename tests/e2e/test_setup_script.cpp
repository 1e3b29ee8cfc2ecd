// scripts/check_cmake.sh, the CMake version check scripts/setup.sh runs after installing the
// packages: run here with a fake `cmake` first on PATH that prints a chosen version.
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace kl {
namespace {

// Runs check_cmake.sh with a fake cmake whose `--version` prints `first_line`.
test::command_result check_with_fake_cmake(const std::string& first_line) {
  test::temp_dir dir("fake_cmake");
  const std::string fake =
      dir.write("bin/cmake", "#!/bin/sh\necho '" + first_line +
                                 "'\necho\necho 'CMake suite maintained and "
                                 "supported by Kitware (kitware.com/cmake).'\n");
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  return test::run_command("PATH=" + dir.str() + "/bin:$PATH bash " + test::source_dir() +
                           "/scripts/check_cmake.sh 3.24");
}

TEST(SetupScript, RefusesUbuntu2204sCMakeWithWhatToDo) {
  const auto r = check_with_fake_cmake("cmake version 3.22.1");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("CMake 3.22.1 is too old, kernlab needs 3.24 or newer"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("pip install cmake"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Kitware's APT repository"), std::string::npos) << r.output;
  EXPECT_EQ(test::count_of(r.output, "\n"), 1u) << "one line: " << r.output;
}

TEST(SetupScript, ComparesVersionsAsNumbersNotText) {
  // "3.9" sorts after "3.24" as text; as a version it is older.
  EXPECT_EQ(check_with_fake_cmake("cmake version 3.9.6").code, 1);
  EXPECT_EQ(check_with_fake_cmake("cmake version 2.8.12").code, 1);
}

TEST(SetupScript, AcceptsTheSupportedReleasesCMake) {
  for (const char* line : {"cmake version 3.24.0", "cmake version 3.25.1", "cmake version 3.28.3",
                           "cmake version 3.31.0-rc2", "cmake version 4.0.2"}) {
    const auto r = check_with_fake_cmake(line);
    EXPECT_EQ(r.code, 0) << line << ": " << r.output;
    EXPECT_EQ(r.output, "") << line;
  }
}

TEST(SetupScript, UnreadableVersionIsAnError) {
  const auto r = check_with_fake_cmake("something else entirely");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("could not read the version"), std::string::npos) << r.output;
}

TEST(SetupScript, SetupRunsTheCheckBeforeBuilding) {
  const std::string setup = test::read_file(test::source_dir() + "/scripts/setup.sh");
  const auto check = setup.find("scripts/check_cmake.sh 3.24");
  ASSERT_NE(check, std::string::npos);
  EXPECT_LT(check, setup.find("cmake -S . -B build"));
  // The minimum it checks is the one the build asks for.
  EXPECT_NE(test::read_file(test::source_dir() + "/CMakeLists.txt")
                .find("cmake_minimum_required(VERSION 3.24)"),
            std::string::npos);
}

}  // namespace
}  // namespace kl
