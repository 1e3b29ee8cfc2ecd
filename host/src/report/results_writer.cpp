#include "report/results_writer.hpp"

#include "core/errors.hpp"
#include "core/json_text.hpp"
#include "record/record_json.hpp"
#include "report/exports.hpp"
#include "report/output_file.hpp"

#include <cerrno>
#include <cstring>
#include <sstream>

namespace kl {

results_writer::results_writer(results_paths paths, std::function<run_context()> context,
                               double rewrite_every_s)
    : paths_(std::move(paths)),
      context_(std::move(context)),
      rewrite_every_s_(rewrite_every_s),
      last_rewrite_(std::chrono::steady_clock::now()) {}

void results_writer::warn(const std::string& what) { warnings_.push_back(what); }

void results_writer::row(const result_record& r, const sweep_result& so_far) {
  rows_.push_back(r);
  if (!paths_.jsonl.empty() && !jsonl_failed_) {
    nlohmann::json line = record_in_context(r, device_of(r, so_far));
    line["run"] = run_json(context_());
    std::string why;
    if (is_standard_output(paths_.jsonl)) {  // `--jsonl -`: a line at a time to stdout
      try {
        write_output_file(paths_.jsonl, json_text(line) + "\n");
      } catch (const io_error& e) {
        why = e.what();
      }
    } else {
      // Opened (and emptied) at the first row, so a run that measures nothing keeps an older
      // file.
      if (!jsonl_.is_open()) jsonl_.open(paths_.jsonl, std::ios::out | std::ios::trunc);
      errno = 0;
      jsonl_ << json_text(line) << '\n' << std::flush;
      if (!jsonl_)
        why = "--jsonl " + paths_.jsonl + ": " + (errno ? std::strerror(errno) : "cannot write");
    }
    if (!why.empty()) {
      jsonl_failed_ = true;
      warn(why + "; no further lines are written (--json and --csv still are)");
    }
  }
  // A stream (`--json -`, a FIFO) is written once, whole, when the run ends: the rewrites below
  // would reach it as several documents.
  if ((paths_.json.empty() || is_stream_output(paths_.json)) &&
      (paths_.csv.empty() || is_stream_output(paths_.csv)))
    return;
  const auto now = std::chrono::steady_clock::now();
  if (std::chrono::duration<double>(now - last_rewrite_).count() < rewrite_every_s_) return;
  sweep_result partial;
  partial.device = so_far.device;
  partial.devices = so_far.devices;
  partial.arch = so_far.arch;
  partial.launch_floor = so_far.launch_floor;
  partial.no_device_reason = so_far.no_device_reason;
  partial.results = rows_;
  try {
    rewrite(partial, false, false);
  } catch (const io_error& e) {
    // Once: the final write says it again, as an error, if it still fails then.
    if (!rewrite_failed_)
      warn(std::string(e.what()) + " (while the run goes on; tried again at the end)");
    rewrite_failed_ = true;
  }
  last_rewrite_ = std::chrono::steady_clock::now();
}

void results_writer::rewrite(const sweep_result& sweep, bool complete, bool final) {
  if (paths_.json.empty() && paths_.csv.empty()) return;
  nlohmann::json results = results_to_json(sweep, context_());
  results["complete"] = complete;
  const auto now = [&](const std::string& path) {
    return !path.empty() && (final || !is_stream_output(path));
  };
  if (now(paths_.json)) write_output_file(paths_.json, json_text(results, 1) + "\n");
  if (now(paths_.csv)) {
    std::ostringstream csv;
    write_csv(results, csv);
    write_output_file(paths_.csv, csv.str());
  }
}

void results_writer::finish(const sweep_result& final) {
  if (jsonl_.is_open()) jsonl_.close();
  rewrite(final, !final.interrupted, true);
  if (jsonl_failed_) throw io_error(warnings_.front());
}

}  // namespace kl
