#include "runner/profile_pass.hpp"

#include "core/file_read.hpp"
#include "measure/ncu_report.hpp"
#include "process/command.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>

namespace fs = std::filesystem;

namespace kl {
namespace {

// The most read of ncu's log and of its import of a report (a raw page of every kernel profiled).
constexpr std::uint64_t max_ncu_text_bytes = std::uint64_t{1} << 30;

}  // namespace

std::vector<std::string> ncu_command(const std::string& ncu, const std::string& report_base,
                                     flush_mode flush) {
  return {ncu,
          // The clocks as the sweep timed them (locking them needs rights a container may lack).
          "--clock-control", "none",
          // ncu replays each kernel as often as its metrics need; before each replay it flushes
          // the caches, unless the sweep is hot, where a warm L2 is what was timed.
          "--cache-control", flush == flush_mode::none ? "none" : "all",
          // Only the kernels inside a row's range (validation, flushes and the launch floor run
          // outside any).
          "--nvtx", "--nvtx-include", "regex:kl/", "--metrics", ncu_metrics, "--export",
          report_base, "--force-overwrite"};
}

std::vector<std::string> ncu_import_command(const std::string& ncu, const std::string& report) {
  return {ncu, "--import", report, "--csv", "--page", "raw", "--print-nvtx-rename", "kernel"};
}

std::string ncu_first_error(const std::string& log_path) {
  std::istringstream in(read_regular_file(log_path, max_ncu_text_bytes).bytes);
  const std::string prefix = "==ERROR==";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::string text = line.substr(prefix.size());
    while (!text.empty() && (text.front() == ' ')) text.erase(text.begin());
    while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.pop_back();
    if (!text.empty()) return text;
  }
  return "";
}

namespace {

std::string row_name(const row_job& job) {
  return job.variant.name + (job.block ? " block " + std::to_string(job.block) : std::string()) +
         ", " + job.config.describe();
}

}  // namespace

void profile_rows(const family_registry& families, const run_request& request,
                  std::vector<profile_target> targets, sweep_result& out,
                  const progress_callback& progress) {
  profile_run& p = out.profile;
  p.requested = true;
  p.tool = request.profiler;
  p.rows = targets.size();
  if (targets.empty()) {
    p.error = "no row passed, so none was profiled";
    return;
  }
  const std::string report = request.profile_report + ".ncu-rep";
  p.log = request.profile_report + ".log";
  std::error_code ec;
  fs::create_directories(fs::path(report).parent_path(), ec);
  if (ec) {
    p.error = "cannot make the folder " + fs::path(report).parent_path().string() +
              " for the report: " + ec.message();
    return;
  }
  fs::remove(report, ec);  // an older file of that name must not pass for this run's

  // One worker under ncu runs every row; a row that does not pass again ends the pass, since a
  // fresh worker would be a fresh ncu writing over the report.
  run_request under = request;
  under.kernel_timeout_s = std::max(request.kernel_timeout_s, profiled_kernel_timeout_s);
  std::size_t ran = 0;
  std::string stopped;
  try {
    const auto executor = make_executor(
        families, under,
        ncu_command(request.profiler, request.profile_report, request.timing.flush), p.log);
    for (auto& t : targets) {
      if (progress) progress("profiling", ran + 1, targets.size(), row_name(t.job));
      t.job.profile_range = profile_range_name(t.index);
      const result_record r = executor->run(t.job);
      if (r.status != outcome::passed) {
        stopped =
            row_name(t.job) + " was " + to_string(r.status) + " under ncu (" + r.message + ")";
        break;
      }
      ++ran;
    }
  } catch (const std::exception& e) {  // the worker did not start under ncu
    stopped = e.what();
  }
  // The executor has shut its worker down: ncu has written the report by now, or never will.
  const std::string why = ncu_first_error(p.log);
  const std::string see = "; see " + p.log;
  if (!fs::exists(report, ec)) {
    p.error = "ncu wrote no report" + (why.empty() ? "" : ": " + why) +
              (stopped.empty() ? "" : " (" + stopped + ")") + see;
    return;
  }
  p.report = report;

  // The report's raw page, each kernel named after the range it ran in.
  const std::string csv = request.profile_report + ".csv";
  std::vector<ncu_kernel> kernels;
  try {
    const worker::command_end end =
        worker::run_to_file(ncu_import_command(request.profiler, report), csv, 600);
    std::istringstream in(read_regular_file(csv, max_ncu_text_bytes).bytes);
    try {
      kernels = parse_ncu_raw_csv(in);
    } catch (const std::exception& e) {
      p.error = std::string("cannot read ncu's import of the report (ncu ") + end.how +
                "): " + e.what() + "; see " + csv;
      return;
    }
  } catch (const std::exception& e) {
    p.error = std::string("cannot import the report: ") + e.what();
    return;
  }
  fs::remove(csv, ec);
  if (kernels.empty()) {
    p.error = "ncu profiled no kernel" + (why.empty() ? "" : ": " + why) + see;
    return;
  }
  const auto by_range = kernels_by_range(kernels);
  for (std::size_t i = 0; i < ran; ++i) {
    const profile_target& t = targets[i];
    const std::string range = profile_range_name(t.index);
    const auto it = by_range.find(range);
    profile_summary s =
        summarize_kernels(it == by_range.end() ? std::vector<const ncu_kernel*>{} : it->second);
    s.range = range;
    s.report = report;
    if (s.kernels == 0)
      s.note = "no kernel ran in its range (a copy launches none), or ncu skipped it" + see;
    out.results[t.index].profile = std::move(s);
  }
  if (!stopped.empty())
    p.error = "the profiling pass stopped after " + std::to_string(ran) + " of " +
              std::to_string(targets.size()) + " rows: " + stopped + see;
}

}  // namespace kl
