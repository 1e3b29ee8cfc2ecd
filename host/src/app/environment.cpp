#include "app/environment.hpp"

#include "families/family.hpp"
#include "kernlab_commit.hpp"  // generated at build time: KERNLAB_COMMIT
#include "nvrtc/compiler.hpp"
#include "plugin_host/plugin_loader.hpp"

#include <kernlab/plugin_api.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>

namespace fs = std::filesystem;

namespace kl::app {

fs::path executable_path() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() / "kernlab" : exe;
}

namespace {
fs::path executable_dir() { return executable_path().parent_path(); }
}  // namespace

default_paths find_default_paths() {
  kl::default_paths d;
  const fs::path exe = executable_dir();
  const fs::path share = exe / ".." / "share" / "kernlab";
  std::error_code ec;
  if (fs::is_directory(share, ec)) {
    d.config = (share / "config" / "kernlab.cfg").lexically_normal().string();
    d.plugin_dirs.push_back(
        (exe / ".." / "lib" / "kernlab" / "plugins").lexically_normal().string());
    d.kernel_headers = (share / "kernels_src" / "include").lexically_normal().string();
  } else {
    d.config = std::string(KERNLAB_SOURCE_DIR) + "/config/kernlab.cfg";
    d.plugin_dirs.push_back(KERNLAB_BUILD_PLUGIN_DIR);
    d.kernel_headers = std::string(KERNLAB_SOURCE_DIR) + "/kernels_src/include";
  }
  return d;
}

std::string cuda_include_dir(const kl::cli_options& o) {
  if (!o.cuda_include.empty()) return o.cuda_include;
  const char* home = std::getenv("CUDA_HOME");
  return home ? std::string(home) + "/include" : KERNLAB_CUDA_INCLUDE_DIR;
}

std::vector<std::string> include_dirs(const kl::cli_options& o) {
  std::vector<std::string> dirs;
  std::error_code ec;
  auto add = [&](const fs::path& dir) {
    if (!fs::is_directory(dir, ec)) return;
    for (const auto& d : dirs)
      if (fs::equivalent(d, dir, ec)) return;
    dirs.push_back(dir.string());
  };
  for (const auto& k : o.kernels_dirs) add(fs::path(k) / "include");
  add(find_default_paths().kernel_headers);
  dirs.push_back(cuda_include_dir(o));
  // CUDA 13 keeps CCCL (cub/, thrust/, cuda/std) under include/cccl, which nvcc adds by itself:
  // so CUB's block and warp primitives (`#include <cub/block/block_reduce.cuh>`) are found as
  // under nvcc. `<cub/cub.cuh>` still fails: its device-wide algorithms need the host's headers.
  add(fs::path(cuda_include_dir(o)) / "cccl");
  return dirs;
}

void load_families(kl::family_registry& families, const std::vector<std::string>& kernels_dirs,
                   const std::vector<std::string>& includes, std::vector<std::string>* warnings) {
  // The shipped families (matmul, scan, ...) exist whatever --kernels-dir names: a folder of the
  // user's own variants needs no copy of the family's description. A description in a given
  // folder comes first, so it can be changed there.
  std::vector<std::string> dirs = kernels_dirs;
  const fs::path shipped = fs::path(find_default_paths().kernel_headers).parent_path();
  std::error_code ec;
  if (fs::is_directory(shipped, ec) &&
      std::none_of(dirs.begin(), dirs.end(),
                   [&](const std::string& d) { return fs::equivalent(d, shipped, ec); }))
    dirs.push_back(shipped.string());
  // Family plugins (include/kernlab/family_api.h): beside the family.toml, else in the
  // families/ folder of kernlab's plugin folder (not the folder itself: every .so there is
  // probed as a variant plugin), else in KERNLAB_PLUGIN_PATH's folders.
  std::vector<std::string> plugin_dirs;
  for (const auto& d : find_default_paths().plugin_dirs) plugin_dirs.push_back(d + "/families");
  for (const auto& d : kl::plugin_path_dirs(std::getenv("KERNLAB_PLUGIN_PATH")))
    plugin_dirs.push_back(d);
  auto w = kl::add_data_families(families, dirs, includes, plugin_dirs);
  if (warnings) warnings->insert(warnings->end(), w.begin(), w.end());
}

fs::path cache_dir(const kl::cli_options& o) {
  return o.cache_dir.empty() ? kl::nvrtc::default_cache_dir() : fs::path(o.cache_dir);
}

std::shared_ptr<const kl::nvrtc::compile_cache> open_cache(const kl::cli_options& o) {
  if (o.no_cache) return nullptr;
  const fs::path dir = cache_dir(o);
  if (dir.empty()) {
    std::cerr << "kernlab: warning: neither XDG_CACHE_HOME nor HOME is set, so there is no compile "
                 "cache; give --cache-dir to have one\n";
    return nullptr;
  }
  return std::make_shared<const kl::nvrtc::compile_cache>(
      dir, o.cache_max_bytes.value_or(kl::nvrtc::kDefaultCacheMaxBytes));
}

std::string version_line() {
  return std::string("kernlab ") + KERNLAB_VERSION + " (commit " + KERNLAB_COMMIT + ", NVRTC " +
         nvrtc::version() + ", plugin ABI " + std::to_string(KERNLAB_PLUGIN_ABI_VERSION) + ")";
}

}  // namespace kl::app
