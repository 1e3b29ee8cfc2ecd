#include "app/commands.hpp"

#include "app/environment.hpp"
#include "app/plan.hpp"
#include "core/errors.hpp"
#include "cuda/driver.hpp"
#include "report/exports.hpp"
#include "report/results_json.hpp"
#include "report/table.hpp"
#include "runner/journal.hpp"
#include "runner/runner.hpp"
#include "worker/executor.hpp"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace kl::app {

namespace {

// The results files (*.json) of two folders, paired by name; the names found in one folder only
// go to `unpaired`, as a line each.
std::vector<std::pair<std::string, std::string>> results_pairs(const fs::path& old_dir,
                                                               const fs::path& new_dir,
                                                               std::vector<std::string>& unpaired) {
  auto names_in = [](const fs::path& dir) {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".json" && e.is_regular_file())
        names.insert(e.path().filename().string());
    return names;
  };
  const std::set<std::string> olds = names_in(old_dir), news = names_in(new_dir);
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& n : news)
    if (olds.count(n))
      pairs.emplace_back((old_dir / n).string(), (new_dir / n).string());
    else
      unpaired.push_back((new_dir / n).string() + "  (only in the new folder)");
  for (const auto& n : olds)
    if (!news.count(n)) unpaired.push_back((old_dir / n).string() + "  (only in the old folder)");
  if (pairs.empty())
    throw kl::io_error("no results file (*.json) of " + new_dir.string() + " has a namesake in " +
                       old_dir.string());
  return pairs;
}

}  // namespace

int results_command(const kl::cli_options& opt) {
  auto load = [](const std::string& path) {
    nlohmann::json j = kl::read_results_file(path);
    try {
      kl::records_from_results(j);  // checks the format and every record
    } catch (const std::exception& e) {
      throw kl::io_error(path + ": " + e.what());
    }
    return j;
  };
  if (opt.command[0] == "compare") {
    // Two files, or two folders whose results files pair by name.
    std::vector<std::pair<std::string, std::string>> pairs;
    std::vector<std::string> unpaired;
    const bool folders = fs::is_directory(opt.command[1]) && fs::is_directory(opt.command[2]);
    if (folders)
      pairs = results_pairs(opt.command[1], opt.command[2], unpaired);
    else
      pairs = {{opt.command[1], opt.command[2]}};
    kl::compare_summary total;
    for (const auto& [old_path, new_path] : pairs) {
      const nlohmann::json before = load(old_path), after = load(new_path);
      // Medians from two GPU models differ by design, not by regression.
      const std::string a = kl::results_device_name(before), b = kl::results_device_name(after);
      if (!a.empty() && !b.empty() && a != b && !opt.force)
        throw kl::usage_error(old_path + " was measured on " + a + " and " + new_path + " on " + b +
                              ": pass --force to compare them anyway");
      if (folders)
        std::cout << (opt.markdown ? "### " : "== ") << fs::path(new_path).filename().string()
                  << "\n"
                  << (opt.markdown ? "\n" : "");
      const auto s =
          kl::compare_results(before, after, std::cout, opt.compare_threshold_pct, opt.markdown);
      total.matched += s.matched;
      total.regressions += s.regressions;
      if (folders) std::cout << "\n";
    }
    for (const auto& u : unpaired) std::cout << u << "\n";
    if (total.matched == 0)
      throw kl::io_error("no row of " + opt.command[2] + " matches a row of " + opt.command[1] +
                         ": nothing was compared (other families, sizes or configurations?)");
    if (folders)
      std::cout << pairs.size() << " file(s) compared, " << total.matched << " rows matched, "
                << total.regressions << " regression(s)\n";
    return total.regressions > 0 ? 1 : 0;
  }
  const nlohmann::json results = load(opt.command[1]);
  const std::string out = !opt.output_path.empty() ? opt.output_path
                          : opt.roofline           ? "roofline.svg"
                          : opt.timeline           ? "timeline.svg"
                                                   : "sweep.svg";
  std::ostringstream svg;
  std::size_t not_drawn = 0;  // --timeline's rows past its cap
  try {
    if (opt.roofline)
      kl::write_roofline_svg(results, svg);
    else if (opt.timeline)
      not_drawn = kl::write_timeline_svg(results, svg);
    else
      kl::write_svg(results, svg);
  } catch (const std::exception& e) {
    throw kl::io_error(opt.command[1] + ": " + e.what());
  }
  kl::write_output_file(out, svg.str());
  if (opt.timeline)
    std::cout << "wrote " << out << " (" << results.at("pipeline").size() << " pipeline"
              << (results.at("pipeline").size() == 1 ? "" : "s")
              << (not_drawn
                      ? "; " + std::to_string(not_drawn) + (not_drawn == 1 ? " row" : " rows") +
                            " not drawn: the picture stops at " +
                            std::to_string(kl::timeline_max_svg_bytes >> 20) + " MiB"
                      : std::string())
              << ")\n";
  else
    std::cout << "wrote " << out << " (" << results.at("records").size() << " records)\n";
  return 0;
}

int cache_command(const kl::cli_options& o) {
  const fs::path dir = cache_dir(o);
  if (dir.empty())
    throw kl::usage_error(
        "no cache folder: neither XDG_CACHE_HOME nor HOME is set; give --cache-dir");
  const kl::nvrtc::compile_cache cache(
      dir, o.cache_max_bytes.value_or(kl::nvrtc::kDefaultCacheMaxBytes));
  try {
    if (o.command[1] == "info") {
      kl::print_cache_info(std::cout, cache.info());
    } else if (o.command[1] == "prune") {
      const std::uint64_t limit = o.prune_max_bytes.value_or(cache.max_bytes());
      kl::print_prune_result(std::cout, cache.prune(limit), limit, dir);
    } else {
      const std::uint64_t removed = cache.clear();
      std::cout << "removed " << removed << " entr" << (removed == 1 ? "y" : "ies")
                << " and the counters from " << dir.string() << "\n";
    }
  } catch (const kl::nvrtc::cache_error& e) {  // a folder or file kernlab cannot use: exit code 4
    throw kl::io_error(e.what());
  }
  return 0;
}

int worker_entry(int argc, char** argv) {
  std::vector<std::string> dirs, includes;
  int ordinal = 0;  // the GPU this worker runs rows on (--device N; kernlab passes it when not 0)
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--device")
      ordinal = std::stoi(argv[i + 1]);
    else if (key == "--kernels-dir")
      dirs.push_back(argv[i + 1]);
    else if (key == "--include")
      includes.push_back(argv[i + 1]);
    else
      throw std::invalid_argument("unknown worker argument '" + key + "'");
  }
  if (includes.empty()) {
    // Started without --include (by a test, say): the folders kernlab itself would search, so
    // that a data family's reference finds its headers (kernlab/reduce.cuh) in the worker too.
    kl::cli_options o;
    o.kernels_dirs = dirs;
    includes = include_dirs(o);
  }
  kl::family_registry families;
  load_families(families, dirs, includes, nullptr);
  return kl::worker_main(families, ordinal);
}

std::vector<std::string> mpi_transports() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("KERNLAB_MPI_TRANSPORT"); env && *env) out.push_back(env);
  const std::filesystem::path dir = executable_path().parent_path();
  out.push_back((dir / "libkernlab_mpi.so").string());
  out.push_back((dir.parent_path() / "lib" / "kernlab" / "libkernlab_mpi.so").string());
  return out;
}

int serve_rank(int argc, char** argv, mpi::world& world) {
  kl::family_registry families;      // in process (--in-process) only; outlives the executor
  mpi::world::rank_journal journal;  // the run's, as rank 0 has it (app/plan.cpp)
  return world.serve(
      [&]() -> std::unique_ptr<kl::row_executor> {
        const kl::cli_options opt = kl::parse_command_line(argc, argv, find_default_paths());
        journal.path = opt.journal_path.empty() ? kl::default_journal_path() : opt.journal_path;
        journal.resume = opt.resume;
        kl::run_request req;
        req.devices = {mpi_device(opt, world)};
        req.in_process = opt.in_process;
        req.worker_command = worker_command(opt);
        req.kernel_timeout_s = opt.kernel_timeout_s;
        if (req.in_process) load_families(families, opt.kernels_dirs, include_dirs(opt), nullptr);
        kl::cuda::driver::get();  // no GPU here: rank 0 is told why
        return kl::make_executor(families, req, {}, "", req.devices.front());
      },
      &journal);
}

}  // namespace kl::app
