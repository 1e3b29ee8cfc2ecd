// The examples of the README and of the pages of docs/ as data, for the README tests of both
// labels: their fenced code blocks, the commands of their shell blocks and the files they tell the
// reader to write, read from the pages' text so that a command added to a page is tested without
// a change here.
#pragma once

#include "test_util.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
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

/// The pages whose commands are tested, in the order a reader meets them: README.md, then
/// docs/*.md by name. docs/results.md is left out: it records runs made on particular machines
/// (their commands as they were run), not instructions.
inline std::vector<std::string> doc_pages() {
  namespace fs = std::filesystem;
  std::vector<std::string> pages;
  for (const auto& e : fs::directory_iterator(fs::path(source_dir()) / "docs"))
    if (e.is_regular_file() && e.path().extension() == ".md" && e.path().filename() != "results.md")
      pages.push_back("docs/" + e.path().filename().string());
  std::sort(pages.begin(), pages.end());
  pages.insert(pages.begin(), "README.md");
  return pages;
}

inline std::string doc_page(const std::string& page) {
  return read_file(source_dir() + "/" + page);
}

/// The files a page tells its reader to write: every fenced block whose first line is a comment
/// naming a path under my_kernels/ (`# my_kernels/twice/family.toml`,
/// `// my_kernels/twice/reference.cu`), as {path, the whole block}.
inline std::vector<std::pair<std::string, std::string>> doc_files() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& page : doc_pages()) {
    std::istringstream in(doc_page(page));
    std::string line, block, path;
    bool inside = false;
    while (std::getline(in, line)) {
      if (!inside && line.rfind("```", 0) == 0) {
        inside = true;
        block.clear();
        path.clear();
      } else if (inside && line == "```") {
        inside = false;
        if (!path.empty()) out.emplace_back(path, block);
      } else if (inside) {
        if (block.empty())
          for (const char* prefix : {"# my_kernels/", "// my_kernels/"})
            if (line.rfind(prefix, 0) == 0) path = line.substr(line.find("my_kernels/"));
        block += line + "\n";
      }
    }
  }
  return out;
}

/// Writes doc_files() under `dir`, as the reader would before running the pages' commands.
inline void write_doc_files(const std::string& dir) {
  namespace fs = std::filesystem;
  for (const auto& [path, text] : doc_files()) {
    const fs::path file = fs::path(dir) / path;
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text;
  }
}

/// The README's complete example variant (the "Adding a variant" section), "" if it is missing.
inline std::string readme_example_variant() {
  for (const auto& b : code_blocks(readme(), "cpp"))
    if (b.rfind("/* kernlab", 0) == 0) return b;
  return "";
}

/// One line of a shell block that the README tests replay: a `cp` (run as is) or a
/// `build/kernlab` command (args: what follows `build/kernlab`, comment and trailing blanks cut).
struct readme_command {
  std::string line;  ///< the page and its line, for messages
  bool is_kernlab = false;
  std::string text;  ///< the `cp` command, or kernlab's arguments (starting with a blank)
};

/// The commands of every page's shell blocks (doc_pages(), in that order).
inline std::vector<readme_command> readme_commands() {
  std::vector<readme_command> out;
  for (const auto& page : doc_pages()) {
    for (const auto& block : code_blocks(doc_page(page), "sh")) {
      std::istringstream in(block);
      std::string line;
      while (std::getline(in, line)) {
        std::string cmdline = line.substr(0, line.find(" #"));
        cmdline.erase(cmdline.find_last_not_of(' ') + 1);
        if (cmdline.rfind("cp ", 0) == 0) {
          out.push_back({page + ": " + line, false, cmdline});
        } else if (cmdline.rfind("build/kernlab", 0) == 0) {
          out.push_back(
              {page + ": " + line, true, cmdline.substr(std::string("build/kernlab").size())});
        }
      }
    }
  }
  return out;
}

/// Whether `c` is `kernlab new ...`, which writes files to start from.
inline bool is_new_command(const readme_command& c) {
  return c.is_kernlab && c.text.rfind(" new ", 0) == 0;
}

/// The shell command that runs `c` in `dir` (a scratch copy of kernels_src is in dir/kernels_src),
/// with an empty config, as the pages' reader would from the source tree (the files the pages
/// tell them to write are in dir/my_kernels: write_doc_files). `kernlab new` gets a config that
/// names the scratch kernels_src instead, as the shipped config names the shipped one: it writes
/// into the command line's first --kernels-dir, else my_kernels, as the reader's does.
inline std::string readme_shell_command(const readme_command& c, const std::string& dir,
                                        const std::string& config) {
  if (!c.is_kernlab) return "cd " + dir + " && " + c.text;
  if (is_new_command(c)) {
    const std::string shipped = dir + "/kernels_src.cfg";
    std::ofstream(shipped) << "kernels-dir = kernels_src\n";
    return "cd " + dir + " && " + KERNLAB_BINARY + " --config " + shipped + c.text;
  }
  return "cd " + dir + " && " + KERNLAB_BINARY + " --config " + config +
         " --kernels-dir kernels_src --plugin-dir " + KERNLAB_PLUGIN_DIR + c.text;
}

}  // namespace kl::test
