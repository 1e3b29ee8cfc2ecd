#include "app/plan.hpp"

#include "app/environment.hpp"
#include "core/errors.hpp"
#include "cuda/device.hpp"
#include "cuda/driver.hpp"
#include "kernlab_commit.hpp"  // generated at build time: KERNLAB_COMMIT
#include "mpi/world.hpp"
#include "nvrtc/compiler.hpp"
#include "process/command.hpp"
#include "runner/journal.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>

namespace fs = std::filesystem;

namespace kl::app {
namespace {

// Nsight Compute's ncu, for --profile: --ncu PATH, else where compute-sanitizer is looked for
// ($CUDA_HOME/bin, or /usr/local/cuda/bin without CUDA_HOME), else on PATH. Not there is a usage
// error before anything runs.
// A tool of the CUDA toolkit: $CUDA_HOME/bin (or /usr/local/cuda/bin), then PATH; "" when
// neither holds it. Also where the toolkit folder was looked for, for messages.
std::string find_toolkit_program(const std::string& name, std::string* toolkit_bin_out = nullptr) {
  const char* home = std::getenv("CUDA_HOME");
  const std::string toolkit_bin =
      (home && *home ? std::string(home) : std::string("/usr/local/cuda")) + "/bin";
  if (toolkit_bin_out) *toolkit_bin_out = toolkit_bin + (home && *home ? " ($CUDA_HOME/bin)" : "");
  std::vector<std::string> folders = {toolkit_bin};
  for (const auto& f : kl::worker::path_folders(std::getenv("PATH"))) folders.push_back(f);
  return kl::worker::find_program(name, folders);
}

std::string find_ncu(const kl::cli_options& opt) {
  if (!opt.ncu_path.empty()) {
    const fs::path p(opt.ncu_path);
    const std::string found = kl::worker::find_program(
        p.filename().string(), {p.parent_path().empty() ? "." : p.parent_path().string()});
    if (found.empty()) throw kl::usage_error("--ncu " + opt.ncu_path + ": not an executable file");
    return found;
  }
  std::string toolkit_bin;
  const std::string found = find_toolkit_program("ncu", &toolkit_bin);
  if (found.empty())
    throw kl::usage_error("--profile needs Nsight Compute (ncu): not found in " + toolkit_bin +
                          " or on PATH; install it or pass --ncu PATH");
  return found;
}

// Where the profiling pass writes its report: the cache folder's profiles/, a name with the
// local date and time, and the process id for two runs in one second.
std::string profile_report_base(const kl::cli_options& opt) {
  const fs::path dir = cache_dir(opt);
  if (dir.empty())
    throw kl::usage_error(
        "--profile: no folder for the report, since neither XDG_CACHE_HOME nor "
        "HOME is set; give --cache-dir DIR");
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d-%H%M%S", &tm);
  return (dir / "profiles" / ("profile-" + std::string(stamp) + "-" + std::to_string(::getpid())))
      .string();
}

}  // namespace

std::unique_ptr<kl::registry> load_registry(const kl::cli_options& opt,
                                            const kl::family_registry& families) {
  auto reg = std::make_unique<kl::registry>(families);
  try {
    for (const auto& dir : opt.kernels_dirs) reg->add_source_dir(dir);
  } catch (const kl::duplicate_variant_error& e) {
    throw kl::usage_error(std::string(e.what()) +
                          ": rename one (its file and its entry), or give --kernels-dir-only to "
                          "use the command line's folders without the config's");
  }
  if (!opt.no_plugins) {
    // Plugins are probed in a child process (`kernlab --probe-plugin FILE`), never loaded here;
    // the verdicts are kept beside the compile cache (none with --no-cache).
    kl::probe_options probe;
    probe.command = {executable_path().string(), "--probe-plugin"};
    probe.timeout_s = opt.kernel_timeout_s;
    if (!opt.no_cache) probe.cache_dir = cache_dir(opt);
    reg->set_probe_options(probe);
    for (const auto& dir : opt.plugin_dirs) reg->add_plugin_dir(dir);
    for (const auto& dir : kl::plugin_path_dirs(std::getenv("KERNLAB_PLUGIN_PATH")))
      reg->add_plugin_dir(dir);
  }
  return reg;
}

namespace {

// --device N, --devices all|0,2,3 against this machine's GPUs. Without a driver the ordinals
// stand as given (the run then says there is no GPU; --compile-only needs none). Several GPUs must
// share an architecture: each file is compiled once, for the first GPU's, and loaded on all.
std::vector<int> devices_for(const kl::cli_options& opt, bool compile_only) {
  if (!opt.devices.given()) return {0};
  int count = -1;
  try {
    kl::cuda::driver::get();
    count = kl::cuda::device_count();
  } catch (const kl::cuda::no_device_error&) {
  }
  if (count < 0 || compile_only)
    return opt.devices.all || opt.devices.ordinals.empty() ? std::vector<int>{0}
                                                           : opt.devices.ordinals;
  const std::vector<int> devices = kl::resolve_devices(opt.devices, count);
  if (devices.size() < 2) return devices;
  const std::string& option = opt.devices.option;
  if (!opt.sanitize.empty())
    throw kl::usage_error(option + ": --sanitize runs on one GPU; give --device N");
  if (opt.profile) throw kl::usage_error(option + ": --profile runs on one GPU; give --device N");
  if (opt.pipeline) throw kl::usage_error(option + ": --pipeline runs on one GPU; give --device N");
  const kl::cuda::device_info first = kl::cuda::query_device(devices.front());
  for (int n : devices) {
    const kl::cuda::device_info d = kl::cuda::query_device(n);
    if (d.arch() != first.arch())
      throw kl::usage_error(option + ": GPU " + std::to_string(first.ordinal) + " (" + first.name +
                            ") is " + first.arch() + " but GPU " + std::to_string(n) + " (" +
                            d.name + ") is " + d.arch() +
                            "; one run compiles for one architecture: name GPUs of one");
  }
  return devices;
}

// The option that asked for configuration `c`, for a usage error about it: the shape or size,
// else the dtype (the family's default shape is checked when it is read).
std::string option_for(const kl::run_request& req, const kl::problem_config& c) {
  const auto shape = c.shape();
  for (const kl::axis_choice& a : req.axes)
    if (a.name.empty() && (!a.one_axis_families_only || shape.size() == 1))
      return a.option + " " +
             (a.option == "--shape" && shape.size() > 1 ? c.shape_text()
                                                        : std::to_string(shape.front()));
  return "--dtype " + c.dtype;
}

// Every expression the run evaluates, at every configuration and block size it asks for, before
// anything runs: one that overflows, divides by zero or gives a count below 1 is the command's
// usage error, naming the option that asked for the configuration and the expression's file:line
// (family.toml's, or the variant header's).
void check_run_expressions(const kl::run_request& req, const kl::family_registry& families) {
  std::map<const kl::family*, std::vector<kl::problem_config>> configs;
  const auto check = [&](const kl::problem_config& c, const auto& what) {
    try {
      what();
    } catch (const std::invalid_argument& e) {
      throw kl::usage_error(option_for(req, c) + ": " + e.what());
    }
  };
  for (const auto* e : req.variants) {
    const kl::family* f = families.find(e->descriptor.family);
    if (!f || !e->error.empty()) continue;  // a broken family or header: its rows say why
    auto [known, fresh] = configs.try_emplace(f);
    if (fresh) {
      known->second = kl::configs_for(*f, req);
      for (const auto& c : known->second) check(c, [&] { f->check_configuration(c); });
    }
    const kl::variant_descriptor& v = e->descriptor;
    if (v.origin != kl::origin_kind::source) continue;
    for (const auto& c : known->second) {
      if (!v.supports_dtype(c.dtype) || !v.supports_op(c.op)) continue;
      for (unsigned b : kl::blocks_for(v, req))
        if (v.supports_block(b) && v.unmet_requirement(b, c.dtype).empty())
          check(c, [&] { f->check_launch(v, e->key_lines, b, c); });
    }
  }
}

// Each of `names` (--dtype, --op) must be one of `list` of some family of `variants`; a family
// whose description cannot be used is named with its error, its names being unknown.
void check_family_names(const std::vector<const kl::registry_entry*>& variants,
                        const kl::family_registry& families, const std::vector<std::string>& names,
                        const char* option, std::vector<std::string> (kl::family::*list)() const) {
  for (const auto& name : names) {
    bool found = false;
    std::string families_text;
    std::string broken;  // selected families whose description cannot be used, with why
    for (const auto* e : variants) {
      const kl::family* f = families.find(e->descriptor.family);
      if (!f) {
        const std::string why = families.broken(e->descriptor.family);
        if (!why.empty() && broken.find(why) == std::string::npos)
          broken += (broken.empty() ? "" : "; the description of ") + e->descriptor.family +
                    " cannot be used (" + why + ")";
        continue;
      }
      const auto has = (f->*list)();
      if (std::find(has.begin(), has.end(), name) != has.end()) found = true;
      if (families_text.find(f->name()) == std::string::npos)
        families_text += (families_text.empty() ? "" : ", ") + f->name();
    }
    if (found || variants.empty()) continue;
    std::string why;
    if (!families_text.empty())
      why = (families_text.find(',') == std::string::npos
                 ? "family " + families_text
                 : "each selected family (" + families_text + ")") +
            " has no " + option + " '" + name + "'";
    if (!broken.empty())
      why += (why.empty() ? "no selected family is known to have " + std::string(option) + " '" +
                                name + "': "
                          : std::string(", and ")) +
             "the description of " + broken;
    throw kl::usage_error(std::string("--") + option + ": " + why);
  }
}

// --axis NAME=v1,v2: NAME is an axis of a selected family, and each value one of its kind within
// its limits there.
void check_named_axis(const kl::axis_choice& a,
                      const std::vector<const kl::registry_entry*>& variants,
                      const kl::family_registry& families) {
  bool found = false;
  std::string known;
  for (const auto* e : variants) {
    const kl::family* f = families.find(e->descriptor.family);
    if (!f) continue;
    for (const kl::axis_info& axis : f->axes()) {
      if (known.find(f->name() + "." + axis.name) == std::string::npos)
        known += (known.empty() ? "" : ", ") + f->name() + "." + axis.name;
      if (axis.name != a.name) continue;
      found = true;
      for (const auto& point : a.points) {
        const auto v = kl::as_kind_of(point.front(), axis.default_value);
        if (!v)
          throw kl::usage_error("--axis " + a.name + ": " + kl::axis_text(point.front()) +
                                " is not a whole number, which " + a.name + " takes (" +
                                axis.where + ")");
        if (!axis.admits(*v))
          throw kl::usage_error("--axis " + a.name + ": " + kl::axis_text(*v) + " is outside " +
                                a.name + "'s limits " + kl::axis_text(axis.min) + ".." +
                                kl::axis_text(axis.max) + " (" + axis.where + ")");
      }
    }
  }
  if (!found && !variants.empty())
    throw kl::usage_error("--axis " + a.name + ": no selected family has an axis " + a.name + " (" +
                          (known.empty() ? "they have none" : "they have " + known) +
                          "; kernlab --list shows every family's axes)");
}

}  // namespace

std::vector<std::string> worker_command(const kl::cli_options& opt) {
  std::vector<std::string> command = {executable_path().string(), "--worker"};
  for (const auto& dir : opt.kernels_dirs) {
    command.push_back("--kernels-dir");
    command.push_back(dir);
  }
  for (const auto& dir : include_dirs(opt)) {
    command.push_back("--include");
    command.push_back(dir);
  }
  return command;
}

int mpi_device(const kl::cli_options& opt, const kl::mpi::world& world) {
  const std::string launched = "under mpirun or srun (" + std::to_string(world.size()) + " ranks)";
  if (opt.devices.given())
    throw kl::usage_error(opt.devices.option + ": " + launched +
                          " each rank runs on one GPU, its local rank's among those it sees: "
                          "drop " +
                          opt.devices.option + " and start one rank per GPU");
  if (!opt.sanitize.empty()) throw kl::usage_error("--sanitize runs on one GPU: not " + launched);
  if (opt.profile) throw kl::usage_error("--profile runs on one GPU: not " + launched);
  if (opt.pipeline) throw kl::usage_error("--pipeline runs on one GPU: not " + launched);
  int count = 0;
  try {
    kl::cuda::driver::get();
    count = kl::cuda::device_count();
  } catch (const kl::cuda::no_device_error&) {
  }
  return world.local_device(count);
}

kl::run_request make_request(const kl::cli_options& opt, const kl::registry& reg,
                             const kl::family_registry& families,
                             std::shared_ptr<const kl::nvrtc::compile_cache> cache) {
  kl::run_request req;
  try {
    req.variants = reg.select(opt.variants, opt.family);
  } catch (const kl::selection_error& e) {
    throw kl::usage_error(std::string("--variant: ") + e.what());
  }
  // A block size that none of the selected variants takes is a mistake, not a skip.
  for (unsigned b : opt.blocks_explicit ? opt.blocks : std::vector<unsigned>{}) {
    std::string supported;
    bool any = false;
    for (const auto* e : req.variants) {
      const auto& d = e->descriptor;
      if (d.blocks.empty() || d.supports_block(b) || !e->error.empty()) any = true;
      if (supported.empty() && !d.blocks.empty()) {
        supported = d.name + " supports ";
        for (std::size_t i = 0; i < d.blocks.size(); ++i)
          supported += (i ? "," : "") + std::to_string(d.blocks[i]);
      }
    }
    if (!any)
      throw kl::usage_error("--block " + std::to_string(b) + ": no selected variant takes it (" +
                            supported + ")");
  }
  // A dtype or an op named on the command line must belong to some selected family (the
  // defaults, int32,float32 and sum, need not: a family without them runs its own).
  if (opt.dtypes_explicit)
    check_family_names(req.variants, families, opt.dtypes, "dtype", &kl::family::dtypes);
  if (opt.ops_explicit) check_family_names(req.variants, families, opt.ops, "op", &kl::family::ops);
  // --size W on the command line is N = W for a one-axis family (reduce, scan, qam256), and
  // W x W x ... for a family of several axes (matmul) when every selected family has several; in
  // a sweep that also has one-axis families the sizes are theirs, and matmul takes --shape or its
  // default shape.
  std::vector<kl::axis_choice> axes = opt.axes;
  const auto wholes_of = [](const kl::family& f) {
    const auto all = f.axes();
    return std::count_if(all.begin(), all.end(), [](const kl::axis_info& a) { return a.whole(); });
  };
  const bool one_axis_in_sweep =
      std::any_of(req.variants.begin(), req.variants.end(), [&](const auto* e) {
        const kl::family* f = families.find(e->descriptor.family);
        return f && wholes_of(*f) == 1;
      });
  for (auto& a : axes)
    if (a.option == "--size") a.one_axis_families_only = one_axis_in_sweep;
  for (const kl::axis_choice& a : axes) {
    // Each --shape has the rank of every selected family; the values are checked with every
    // expression, once the request is made (check_run_expressions).
    if (a.option == "--shape")
      for (const auto* e : req.variants) {
        const kl::family* f = families.find(e->descriptor.family);
        if (!f) continue;
        for (const auto& point : a.points)
          if (static_cast<std::ptrdiff_t>(point.size()) != wholes_of(*f)) {
            std::string text;
            for (const auto& v : point) text += (text.empty() ? "" : "x") + kl::axis_text(v);
            throw kl::usage_error("--shape " + text + ": family " + f->name() + " needs " +
                                  std::to_string(wholes_of(*f)) + " dimensions");
          }
      }
    // --axis: every name is an axis of a selected family, every value one of its kind within its
    // limits.
    if (a.option == "--axis") check_named_axis(a, req.variants, families);
  }
  std::error_code ec;
  req.blocks = opt.blocks;
  req.blocks_all = !opt.blocks_explicit;
  req.dtypes = opt.dtypes;
  req.ops = opt.ops;
  req.axes = std::move(axes);
  req.input_mode = opt.input_mode;
  req.seed = opt.seed;
  req.fallback_arch = opt.arch;
  req.include_dirs = include_dirs(opt);
  req.toolkit_include_dirs = {cuda_include_dir(opt)};
  req.timing = opt.timing;
  req.compile_only = opt.compile_only || opt.resources;
  if (req.compile_only)  // each selected data family's reference compiles beside its variants
    for (const auto* e : req.variants)
      if (const kl::registry_entry* ref = reg.reference(e->descriptor.family);
          ref &&
          std::find(req.references.begin(), req.references.end(), ref) == req.references.end())
        req.references.push_back(ref);
  req.in_process = opt.in_process;
  req.baseline = opt.baseline;
  req.devices = devices_for(opt, req.compile_only);
  if (kl::mpi::world* world = kl::mpi::world::current()) {
    req.devices = {mpi_device(opt, *world)};
    // Rank 0 runs the command; the other ranks' GPUs are lanes of its pool.
    req.remote_lanes = world->remote_lanes();
  }
  req.worker_command = worker_command(opt);
  req.kernel_timeout_s = opt.kernel_timeout_s;
  req.journal_path = opt.journal_path.empty() ? kl::default_journal_path() : opt.journal_path;
  req.resume = opt.resume;
  req.sanitize = opt.sanitize;
  if (!req.sanitize.empty()) {
    // Under a sanitizer a kernel runs orders of magnitude slower: validate, time once.
    req.timing.warmup_runs = 0;
    req.timing.min_samples = 1;
    req.timing.min_time_s = 0;
    req.timing.timeout_s = 1;
    req.timing.flush = kl::flush_mode::none;
    req.timing.placements = req.timing.max_placements = 1;
    // The sanitizer checks the launches as the code makes them, not a graph's replay.
    req.timing.launch = kl::launch_mode::stream;
    // The toolkit's, else the first on PATH; else the name, whose failure to start says why.
    const std::string found = find_toolkit_program("compute-sanitizer");
    if (!found.empty()) req.sanitizer = found;
  }
  if (opt.profile) {
    req.profiler = find_ncu(opt);
    req.profile_report = profile_report_base(opt);
  }
  req.compile_jobs = opt.compile_jobs;
  req.compile_command = {executable_path().string(), "--compile-child"};
  req.compile_timeout_s = opt.compile_timeout_s;
  req.cache = std::move(cache);
  req.want_keys = opt.watch;  // a round compares the keys of the files it compiled
  req.dtypes_explicit = opt.dtypes_explicit;
  req.ops_explicit = opt.ops_explicit;
  check_run_expressions(req, families);
  return req;
}

kl::run_context context_of(const kl::cli_options& opt, const kl::run_request& req, int argc,
                           char** argv) {
  kl::run_context ctx;
  ctx.command.assign(argv, argv + argc);
  ctx.date = kl::utc_now_iso8601();
  ctx.kernlab_version = KERNLAB_VERSION;
  ctx.kernlab_commit = KERNLAB_COMMIT;
  ctx.nvrtc_version = kl::nvrtc::version();
  ctx.seed = req.seed;
  ctx.timing = req.timing;
  ctx.baseline = opt.baseline;
  return ctx;
}

}  // namespace kl::app
