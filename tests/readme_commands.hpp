// The README's examples as data, for the README tests of both labels: its fenced code blocks and
// the commands of its shell blocks, read from the README's text so that a command added to the
// README is tested without a change here.
#pragma once

#include "test_util.hpp"

#include <sstream>
#include <string>
#include <vector>

namespace kl::test {

/// The fenced code blocks of a markdown file with the given info string ("sh", "cpp").
inline std::vector<std::string> code_blocks(const std::string& md, const std::string& lang) {
  std::vector<std::string> out;
  std::istringstream in(md);
  std::string line, block;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside && line == "```" + lang) {
      inside = true;
      block.clear();
    } else if (inside && line == "```") {
      inside = false;
      out.push_back(block);
    } else if (inside) {
      block += line + "\n";
    }
  }
  return out;
}

inline std::string readme() { return read_file(source_dir() + "/README.md"); }

/// The README's complete example variant (the "Adding a variant" section), "" if it is missing.
inline std::string readme_example_variant() {
  for (const auto& b : code_blocks(readme(), "cpp"))
    if (b.rfind("/* kernlab", 0) == 0) return b;
  return "";
}

/// One line of a shell block that the README tests replay: a `cp` (run as is) or a
/// `build/kernlab` command (args: what follows `build/kernlab`, comment and trailing blanks cut).
struct readme_command {
  std::string line;  ///< the README's line, for messages
  bool is_kernlab = false;
  std::string text;  ///< the `cp` command, or kernlab's arguments (starting with a blank)
};

inline std::vector<readme_command> readme_commands() {
  std::vector<readme_command> out;
  for (const auto& block : code_blocks(readme(), "sh")) {
    std::istringstream in(block);
    std::string line;
    while (std::getline(in, line)) {
      std::string cmdline = line.substr(0, line.find(" #"));
      cmdline.erase(cmdline.find_last_not_of(' ') + 1);
      if (cmdline.rfind("cp ", 0) == 0) {
        out.push_back({line, false, cmdline});
      } else if (cmdline.rfind("build/kernlab", 0) == 0) {
        out.push_back({line, true, cmdline.substr(std::string("build/kernlab").size())});
      }
    }
  }
  return out;
}

/// The shell command that runs `c` in `dir` (a scratch copy of kernels_src is in dir/kernels_src),
/// with an empty config, as the README's reader would from the source tree.
inline std::string readme_shell_command(const readme_command& c, const std::string& dir,
                                        const std::string& config) {
  if (!c.is_kernlab) return "cd " + dir + " && " + c.text;
  return "cd " + dir + " && " + KERNLAB_BINARY + " --config " + config +
         " --kernels-dir kernels_src --plugin-dir " + KERNLAB_PLUGIN_DIR + c.text;
}

}  // namespace kl::test
