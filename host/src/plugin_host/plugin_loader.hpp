// Loading precompiled variants from plugin shared objects (Boost.DLL), and probing them first.
//
// A plugin file is foreign code: loading it runs its constructors, and its table may be wrong.
// So kernlab never loads a plugin in its own process before a probe has done it without harm: the
// probe is kernlab's own binary in a hidden mode (`kernlab --probe-plugin FILE`), which loads the
// file, calls the entry point, reads the whole table (every string, every array up to its
// count) and sends it back as data, under a time limit. Only a plugin that passed is loaded
// in-process (by the row runner, in the worker or with --in-process). Verdicts are kept per file
// content, so an unchanged plugin is probed once.
#pragma once

#include <kernlab/plugin_api.h>

#include <boost/dll/shared_library.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kl {

/// An open plugin. The library stays loaded for as long as any of its variants is in use; a
/// version-2 plugin's `release` is called when this goes, before the library is unloaded.
struct loaded_plugin {
  std::string path;
  boost::dll::shared_library library;
  const kl_plugin* table = nullptr;

  loaded_plugin() = default;
  loaded_plugin(const loaded_plugin&) = delete;
  loaded_plugin& operator=(const loaded_plugin&) = delete;
  ~loaded_plugin();
};

/// dlopen()s `path` into `library` (RTLD_LOCAL | RTLD_NOW): "" when it loaded, else why not, in
/// the loader's own words ("cannot be loaded as a shared object (file too short)").
std::string open_shared_library(boost::dll::shared_library& library, const std::string& path);

/// Opens one plugin file and checks its table (entry point, ABI version, descriptors' shape).
/// Throws std::runtime_error with "<path>: <reason>" for anything that makes it unusable.
/// Runs the plugin's code in this process: call it only for a file that passed probe_plugin.
std::shared_ptr<loaded_plugin> load_plugin(const std::string& path);

/// The plugin files (*.so) in a directory, sorted; a missing directory gives none.
std::vector<std::string> list_plugin_files(const std::string& dir);

/// KERNLAB_PLUGIN_PATH's folders: split on ':' only (a folder may hold spaces or commas), empty
/// entries dropped (an empty entry is not the current folder). `value` may be null.
std::vector<std::string> plugin_path_dirs(const char* value);

/// One variant of a plugin's table, as plain data (what the probe sends back).
struct probed_variant {
  std::string family, name, summary;
  std::vector<unsigned> blocks;
  std::vector<std::string> dtypes, ops;
  bool is_baseline = false;
  bool has_run = false;
};

/// What probing a plugin file found: its table, or why it cannot be used.
struct plugin_verdict {
  bool ok = false;
  std::string reason;  ///< when !ok: why, without the path ("not a regular file (a FIFO)")
  /// When the probe was killed at its time limit: that limit. A cached verdict of this kind is
  /// trusted only by a probe whose limit is no longer (a larger --kernel-timeout probes again).
  double timed_out_after_s = 0;
  std::uint32_t abi_version = 0;
  std::string name;
  std::vector<probed_variant> variants;
};

nlohmann::json to_json(const plugin_verdict& v);
plugin_verdict plugin_verdict_from_json(const nlohmann::json& j);

/// Loads the plugin in this process and reads its whole table into a verdict. A bad table gives
/// a verdict with a reason; a plugin that faults or hangs takes this process with it, which is
/// why kernlab runs this only in the probe process (and tests on trusted files).
plugin_verdict read_plugin_in_this_process(const std::string& path);

/// The largest plugin file kernlab reads (to hash its content); a larger one is refused unread.
constexpr std::uint64_t max_plugin_file_bytes = std::uint64_t{1} << 30;

struct probe_options {
  /// The probe process's command, to which the file's path is appended (kernlab's own binary
  /// and "--probe-plugin"). Empty: the plugin is read in this process (trusted files only).
  std::vector<std::string> command;
  double timeout_s = 10;  ///< a probe still running after this is killed; the plugin refused
  /// Where verdicts are kept (one small JSON file each, keyed by a hash of the file's bytes and
  /// the ABI version). Empty: no cache, every file is probed.
  std::filesystem::path cache_dir;
};

/// The verdict on one plugin file: from the cache when the same bytes were probed before, else
/// from a probe process (which is then remembered). Never loads the plugin in this process when
/// `opt.command` is set, and never opens a file that is not a regular file. Verdicts are read
/// and written as core/file_read.hpp and core/file_write.hpp say: a FIFO or a link in place of
/// one is no verdict (the plugin is probed again), and a new one replaces it.
plugin_verdict probe_plugin(const std::string& path, const probe_options& opt);

/// `kernlab --probe-plugin FILE`: reads the plugin and sends the verdict as one result frame on
/// the probe's output pipe (worker::child_out_fd); progress frames name the phase it is in, so
/// that a crash or a hang can be reported with the phase. Returns the process's exit code.
int probe_main(const std::string& path);

}  // namespace kl
