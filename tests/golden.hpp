// Golden files: a text a test makes, compared with its copy under tests/data/, byte for byte.
#pragma once

#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace kl::test {

/// Compares `now` with tests/data/`name`, or rewrites that file when KERNLAB_UPDATE_GOLDEN is
/// set (and skips). A difference fails naming its first line and the last "$ " line before it
/// (the command or heading it belongs to), and how to accept a deliberate change: `ctest -R
/// filter` with KERNLAB_UPDATE_GOLDEN=1, then a review of the file's diff.
inline void expect_golden(const std::string& name, const std::string& now,
                          const std::string& filter) {
  const std::string path = source_dir() + "/tests/data/" + name;
  if (std::getenv("KERNLAB_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << now;
    GTEST_SKIP() << "wrote " << path;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path << " is missing";
  std::stringstream golden;
  golden << in.rdbuf();
  if (now == golden.str()) return;
  std::istringstream a(golden.str()), b(now);
  std::string la, lb, heading;
  for (int line = 1;; ++line) {
    const bool ga = static_cast<bool>(std::getline(a, la)),
               gb = static_cast<bool>(std::getline(b, lb));
    if (gb && lb.rfind("$ ", 0) == 0) heading = lb;
    if (!ga && !gb) break;
    if (!ga || !gb || la != lb) {
      FAIL() << name << " line " << line << " (" << heading
             << "):\n  golden: " << (ga ? la : "<end>") << "\n  now:    " << (gb ? lb : "<end>")
             << "\nA deliberate change: KERNLAB_UPDATE_GOLDEN=1 ctest -R " << filter
             << ", then review the diff of tests/data/" << name;
    }
  }
}

}  // namespace kl::test
