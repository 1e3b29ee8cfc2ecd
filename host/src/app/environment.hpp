// Where kernlab finds its parts (the binary's folder, the config, the plugins, the headers, the
// toolkit), the families of the kernels folders, and the compile cache the options ask for.
#pragma once

#include "cli/options.hpp"
#include "families/family.hpp"
#include "nvrtc/compile_cache.hpp"
#include "report/output_file.hpp"

#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace kl::app {

/// This program's own path: the worker is this same binary, started with --worker.
std::filesystem::path executable_path();

/// An installed kernlab (bin/kernlab) finds share/kernlab and lib/kernlab/plugins beside it; a
/// build-tree kernlab finds the source tree and the build's plugin folder it was built with.
default_paths find_default_paths();

/// The toolkit's include folder: --cuda-include, else $CUDA_HOME/include, else the build's.
std::string cuda_include_dir(const cli_options& o);

/// The kernels folders' include/ folders first (a folder may bring its own kernlab/*.cuh), then
/// kernlab's own family headers, then the toolkit's.
std::vector<std::string> include_dirs(const cli_options& o);

/// Every family: the built-in ones, then each kernels folder's that holds a family.toml, then
/// the shipped kernels folder's (those of the same name in a given folder come first). The worker
/// is given the same folders and include folders, so it builds the same families.
void load_families(family_registry& families, const std::vector<std::string>& kernels_dirs,
                   const std::vector<std::string>& includes, std::vector<std::string>* warnings);

/// The compile cache's folder: --cache-dir, else the default ("" when there is none).
std::filesystem::path cache_dir(const cli_options& o);

/// The compile cache the options ask for: none with --no-cache or without a folder.
std::shared_ptr<const nvrtc::compile_cache> open_cache(const cli_options& o);

/// "kernlab 0.1.0 (commit abc1234, NVRTC 13.0, plugin ABI 2)"
std::string version_line();

/// An output file (--json, --csv, plot -o): made in memory, then written whole or not at all; a
/// failure throws io_error naming the file (exit code 4) and leaves a previous file as it was.
template <typename Write>
void write_file(const std::string& path, Write write) {
  std::ostringstream text;
  write(text);
  write_output_file(path, text.str());
}

}  // namespace kl::app
