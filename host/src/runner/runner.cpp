#include "runner/runner.hpp"

#include "core/errors.hpp"
#include "core/file_read.hpp"
#include "core/file_write.hpp"
#include "core/interrupt.hpp"
#include "core/json_text.hpp"
#include "cuda/resources.hpp"
#include "exec/record_json.hpp"
#include "nvrtc/hash.hpp"
#include "plugin_host/plugin_loader.hpp"
#include "runner/compile_stage.hpp"
#include "runner/device_pool.hpp"
#include "runner/journal.hpp"
#include "runner/profile_pass.hpp"
#include "worker/executor.hpp"
#include "worker/spread_executor.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>

namespace kl {
namespace {

// The most read of a sanitizer's log (for its verdict).
constexpr std::uint64_t max_sanitizer_log_bytes = std::uint64_t{256} << 20;

std::string join(const std::vector<unsigned>& v) {
  std::string s;
  for (auto x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}
std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

}  // namespace

std::string journal_key(const registry_entry& e, unsigned block, const problem_config& c) {
  std::string code = e.source;
  if (code.empty())  // a plugin: the library file's bytes (none when they cannot be read)
    code = read_regular_file(e.descriptor.origin_path, max_plugin_file_bytes).bytes;
  return configuration_key(e.descriptor.qualified_name(), block, c) + "|seed " +
         std::to_string(c.seed) + "|source " + std::to_string(nvrtc::checksum64(code));
}

namespace {

// "478" from "478 errors..." at `pos`; -1 when no number starts there.
long leading_count(const std::string& s, std::size_t pos) {
  while (pos < s.size() && s[pos] == ' ') ++pos;
  std::size_t end = pos;
  while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end]))) ++end;
  return end == pos ? -1 : std::stol(s.substr(pos, end - pos));
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

std::string plural(long n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// A finished row's record from the journal; std::nullopt when the journal has none for it (an
// older journal) or the line was cut short when the machine went down.
std::optional<result_record> resumed_record(const std::string& line) {
  if (line.empty()) return std::nullopt;
  try {
    return record_from_json(nlohmann::json::parse(line));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

sanitizer_summary parse_sanitizer_log(std::istream& in) {
  // The summary lines, as compute-sanitizer writes them:
  //   ========= ERROR SUMMARY: 478 errors
  //   ========= ERROR SUMMARY: 378 errors were not printed. Use --print-limit option to adjust ...
  //   ========= RACECHECK SUMMARY: 96 hazards displayed (96 errors, 0 warnings)
  // The second line repeats the first's prefix: only a count followed by nothing but "error(s)"
  // is the total.
  sanitizer_summary s;
  std::string line;
  while (std::getline(in, line)) {
    if (!starts_with(line, "========= ")) continue;
    std::string text = line.substr(10);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.pop_back();
    if (starts_with(text, "ERROR SUMMARY:")) {
      const std::size_t at = std::string("ERROR SUMMARY:").size();
      const long n = leading_count(text, at);
      if (n < 0) continue;
      const std::string rest = text.substr(text.find_first_of("0123456789", at));
      const std::string words = rest.substr(rest.find_first_not_of("0123456789"));
      if (words == " error" || words == " errors")
        s.errors = n;
      else if (starts_with(words, " error") && words.find("not printed") != std::string::npos)
        s.not_printed = n;
    } else if (starts_with(text, "RACECHECK SUMMARY:")) {
      s.hazards = leading_count(text, std::string("RACECHECK SUMMARY:").size());
      const auto open = text.find('(');
      if (open != std::string::npos) {
        s.hazard_errors = leading_count(text, open + 1);
        const auto comma = text.find(',', open);
        if (comma != std::string::npos) s.hazard_warnings = leading_count(text, comma + 1);
      }
    } else if (s.first.empty()) {
      for (const char* word : {"Invalid", "Race", "hazard", "Error"})
        if (text.find(word) != std::string::npos) {
          s.first = text;
          break;
        }
    }
  }
  return s;
}

std::string sanitizer_log_path(const std::string& journal_path, std::string& folder,
                               const std::string& tool, const std::string& variant) {
  if (!journal_path.empty()) return journal_path + "." + tool + "." + variant + ".log";
  if (folder.empty()) folder = make_private_folder("kernlab-sanitize-");
  return folder + "/" + tool + "-" + variant + ".log";
}

std::string sanitizer_verdict(const std::string& tool, const std::string& path) {
  std::istringstream in(read_regular_file(path, max_sanitizer_log_bytes).bytes);
  const sanitizer_summary s = parse_sanitizer_log(in);
  if (s.errors < 0 && s.hazards < 0) return tool + ": no summary (see " + path + ")";
  if (s.errors <= 0 && s.hazards <= 0) return tool + ": clean";
  // The count first, then what explains it: racecheck's split, the errors not printed, the first.
  std::string count, notes;
  if (s.hazards > 0) {
    count = plural(s.hazards, "hazard");
    if (s.hazard_errors >= 0)
      notes = plural(s.hazard_errors, "error") + ", " +
              plural(std::max(0L, s.hazard_warnings), "warning");
  } else {
    count = plural(s.errors, "error");
  }
  if (s.not_printed > 0)
    notes += (notes.empty() ? "" : "; ") + std::to_string(s.not_printed) + " not printed";
  if (!s.first.empty()) notes += (notes.empty() ? "" : "; ") + std::string("first: ") + s.first;
  return tool + ": " + count + (notes.empty() ? "" : " (" + notes + ")") + " [" + path + "]";
}

row_job source_job(const family& f, const variant_descriptor& v, unsigned block,
                   const problem_config& c, const compile_record& compiled) {
  row_job job;
  job.variant = v;
  job.config = c;
  job.block = block;
  const std::string expr = f.name_expression(v, block, c);
  job.cubin = compiled.result.cubin;
  job.lowered_name = compiled.result.lowered_names.at(expr);
  if (auto it = compiled.result.resources.find(expr); it != compiled.result.resources.end())
    job.resources = it->second;
  job.compile_ms = compiled.milliseconds;
  return job;
}

std::unique_ptr<row_executor> make_executor(const family_registry& families,
                                            const run_request& request,
                                            const std::vector<std::string>& prefix,
                                            const std::string& log, int ordinal) {
  if (ordinal < 0) ordinal = request.devices.empty() ? 0 : request.devices.front();
  if (request.in_process) return make_in_process_executor(families, ordinal);
  if (request.worker_command.empty())
    throw std::logic_error("run_request: no worker command (set worker_command or in_process)");
  worker_options o;
  o.command = request.worker_command;
  // Device 0 is the worker's default: its command stays as it always was.
  if (ordinal != 0) {
    o.command.push_back("--device");
    o.command.push_back(std::to_string(ordinal));
  }
  o.command.insert(o.command.begin(), prefix.begin(), prefix.end());
  o.kernel_timeout_s = request.kernel_timeout_s;
  o.fault_grace_s = fault_grace_for(request.kernel_timeout_s);
  o.log_path = log;
  if (!prefix.empty()) o.shutdown_grace_s = 120;  // a sanitizer's report takes its time
  return make_isolated_executor(o);
}

// GPU `ordinal`'s executor. With --placement-workers N (rows in workers, timed in more than one
// placement), N workers started side by side, whose placements each row spreads over
// (worker/spread_executor.hpp). A worker beyond the first that cannot start (a GPU in
// exclusive-process mode) leaves the placements to fewer, and the run says why.
std::unique_ptr<row_executor> gpu_executor(const family_registry& families,
                                           const run_request& request, int ordinal) {
  auto one = [&families, &request, ordinal]() -> std::unique_ptr<row_executor> {
    return request.executor_factory ? request.executor_factory(ordinal)
                                    : make_executor(families, request, {}, "", ordinal);
  };
  const timing_options& t = request.timing;
  const int n = request.in_process
                    ? 1
                    : std::clamp(t.placement_workers, 1, std::max(t.placements, t.max_placements));
  if (n == 1) return one();
  std::vector<std::future<std::unique_ptr<row_executor>>> others;
  for (int i = 1; i < n; ++i) others.push_back(std::async(std::launch::async, one));
  std::vector<std::unique_ptr<row_executor>> members;
  members.push_back(one());  // throws as a GPU's only worker would
  std::string why;
  for (auto& f : others) {
    try {
      members.push_back(f.get());
    } catch (const std::exception& e) {
      if (why.empty()) why = e.what();
    }
  }
  std::string status;
  if (!why.empty())
    status = "rows' placements ran in " + std::to_string(members.size()) +
             " worker process(es) of " + std::to_string(n) +
             " (--placement-workers), so their intervals may miss what moves "
             "between processes: " +
             why;
  // A problem every worker holds at once must fit them all, with room to move (relocate()).
  auto spreads = [&families, n](const row_job& job, const cuda::device_info& d) {
    const family* f = families.find(job.variant.family);
    if (!f || d.total_mem == 0) return false;
    try {
      return f->device_bytes_needed(job.config) * static_cast<std::size_t>(n) <= d.total_mem / 2;
    } catch (const std::exception&) {
      return false;
    }
  };
  return make_spread_executor(std::move(members), spreads, status);
}

std::vector<device_pool::lane_factory> lanes_for(const family_registry& families,
                                                 const run_request& request) {
  const std::vector<int> ordinals = request.devices.empty() ? std::vector<int>{0} : request.devices;
  const bool several = ordinals.size() + request.remote_lanes.size() > 1;
  std::vector<device_pool::lane_factory> lanes;
  for (int ordinal : ordinals)
    lanes.emplace_back([&families, &request, ordinal, several]() -> std::unique_ptr<row_executor> {
      try {
        return gpu_executor(families, request, ordinal);
      } catch (const cuda::no_device_error&) {
        throw;
      } catch (const std::exception& e) {
        if (!several) throw;
        throw std::runtime_error("GPU " + std::to_string(ordinal) + ": " + e.what());
      }
    });
  for (const auto& remote : request.remote_lanes) lanes.push_back(remote);
  return lanes;
}

bool is_baseline_row(const variant_descriptor& v, const std::string& baseline) {
  return baseline.empty() ? v.is_baseline : v.name == baseline || v.qualified_name() == baseline;
}

std::vector<problem_config> configs_for(const family& f, const run_request& r) {
  std::vector<problem_config> out;
  const auto dtypes = f.dtypes();
  const auto ops = f.ops();
  // The requested names the family has; none, and not asked for by name: the family's first.
  auto pick = [](const std::vector<std::string>& asked, const std::vector<std::string>& has,
                 bool named) {
    std::vector<std::string> out;
    for (const auto& a : asked)
      if (std::find(has.begin(), has.end(), a) != has.end()) out.push_back(a);
    if (out.empty() && !named && !has.empty()) out.push_back(has.front());
    return out;
  };
  // A family without operations (matmul) gets one configuration per dtype and size, op "".
  const std::vector<std::string> op_list =
      ops.empty() ? std::vector<std::string>{""} : pick(r.ops, ops, r.ops_explicit);
  // Families with a shape: --shape, else each size W as W x W x ..., else the family's default.
  std::vector<std::vector<std::uint64_t>> shapes;
  if (const std::size_t rank = f.shape_rank(); rank > 0) {
    if (!r.shapes.empty())
      shapes = r.shapes;
    else if (r.sizes_for_shapes || (rank == 1 && r.sizes_for_one_axis))
      for (auto n : r.sizes) shapes.emplace_back(rank, n);
    else
      shapes.push_back(f.default_shape());
  }
  // The real axes' values: the product of the --axis lists (a default where none is given).
  std::vector<std::vector<std::pair<std::string, double>>> real_points = {{}};
  for (const real_axis& a : f.real_axes()) {
    const auto given = r.real_axes.find(a.name);
    const std::vector<double> values =
        given == r.real_axes.end() ? std::vector<double>{a.default_value} : given->second;
    std::vector<std::vector<std::pair<std::string, double>>> next;
    for (const auto& p : real_points)
      for (double v : values) {
        next.push_back(p);
        next.back().emplace_back(a.name, v);
      }
    real_points = std::move(next);
  }
  for (const auto& d : pick(r.dtypes, dtypes, r.dtypes_explicit)) {
    for (const auto& o : op_list) {
      auto add = [&](std::uint64_t n, const std::vector<std::uint64_t>& shape) {
        for (const auto& reals : real_points) {
          problem_config c{d, o, n, r.input_mode, r.seed, shape};
          c.reals = reals;
          out.push_back(std::move(c));
        }
      };
      if (f.shape_rank() == 1) {
        // One axis is a size: its configurations read "int32 sum n=1000", as they always did.
        for (const auto& s : shapes) add(s.front(), {});
      } else if (f.shape_rank() > 1) {
        for (const auto& s : shapes) add(0, s);
      } else {
        for (auto n : r.sizes) add(n, {});
      }
    }
  }
  return out;
}

std::optional<std::pair<outcome, std::string>> decide_before_compile(
    const registry_entry& e, unsigned block, const problem_config& config,
    const cuda::device_info& device) {
  const variant_descriptor& v = e.descriptor;
  if (!e.error.empty()) return std::make_pair(outcome::failed, e.error);
  if (!v.supports_dtype(config.dtype))
    return std::make_pair(outcome::skipped, "supports dtypes " + join(v.dtypes) + " only");
  if (!v.supports_op(config.op))
    return std::make_pair(outcome::skipped, "supports ops " + join(v.ops) + " only");
  if (block != 0 && !v.supports_block(block))
    return std::make_pair(outcome::skipped, "supports blocks " + join(v.blocks) + " only");
  if (const std::string unmet = v.unmet_requirement(block, config.dtype); !unmet.empty())
    return std::make_pair(outcome::skipped, "its require '" + unmet + "' does not hold for " +
                                                config.dtype + " at block " +
                                                std::to_string(block));
  if (!v.target.empty() && v.target != device.arch() + "a")
    return std::make_pair(outcome::skipped, "compiled for " + v.target +
                                                " (its 'target'), which runs on " +
                                                v.target.substr(0, v.target.size() - 1) +
                                                " GPUs only; this GPU is " + device.arch());
  if (block > static_cast<unsigned>(device.max_threads_per_block))
    return std::make_pair(outcome::skipped, device.name + " allows at most " +
                                                std::to_string(device.max_threads_per_block) +
                                                " threads per block");
  return std::nullopt;
}

std::vector<unsigned> blocks_for(const variant_descriptor& v, const run_request& r) {
  if (v.blocks.empty()) return {0};
  if (!r.blocks_all) return r.blocks;
  std::set<unsigned> all(r.blocks.begin(), r.blocks.end());
  all.insert(v.blocks.begin(), v.blocks.end());
  return {all.begin(), all.end()};
}

std::string planned_row::key() const {
  if (!family_error.empty())
    return entry->descriptor.qualified_name() + " (its family cannot be used: " + family_error +
           ")";
  return configuration_key(entry->descriptor.qualified_name(), block, config);
}

std::vector<planned_row> plan_rows(const family_registry& families, const run_request& request) {
  std::vector<std::string> family_order;
  for (const registry_entry* e : request.variants)
    if (std::find(family_order.begin(), family_order.end(), e->descriptor.family) ==
        family_order.end())
      family_order.push_back(e->descriptor.family);
  std::vector<planned_row> rows;
  for (const auto& name : family_order) {
    const family* fam = families.find(name);
    for (const problem_config& config :
         fam ? configs_for(*fam, request) : std::vector<problem_config>{problem_config{}}) {
      for (const registry_entry* e : request.variants) {
        if (e->descriptor.family != name) continue;
        if (!fam) {
          rows.push_back({e, 0, {}, e->error.empty() ? "unknown family '" + name + "'" : e->error});
          continue;
        }
        for (unsigned block : blocks_for(e->descriptor, request))
          rows.push_back({e, block, config, ""});
      }
    }
  }
  return rows;
}

sweep_result runner::run(const group_callback& on_group) {
  sweep_result out;
  const std::vector<int> ordinals =
      request_.devices.empty() ? std::vector<int>{0} : request_.devices;
  // The device's attributes need no context: the context lives where the kernels run (the
  // worker, or row_runner in process), so a crash can never touch this process's GPU state.
  const bool injected = static_cast<bool>(request_.executor_factory);  // the tests' fake GPUs
  try {
    if (injected) {
      out.arch = request_.fallback_arch;
    } else {
      cuda::driver::get();
      out.device = cuda::query_device(ordinals.front());
      out.arch = out.device->arch();
    }
  } catch (const cuda::no_device_error& e) {
    out.no_device_reason = e.why();
    out.arch = request_.fallback_arch;
  }

  // 1. Compile: one program per file, on CPU threads, consumed in request order below, so the
  // first file's rows are timed while the others still compile. One image per file serves every
  // GPU: they share the architecture, and each worker loads the image it is sent.
  compile_stage compiles(families_, request_, out.arch);
  compiles.stop_on_interrupt(true);  // Ctrl-C: the compiles under way stop, their children die
  if (request_.compile_only || (!out.device && !injected)) {
    std::size_t i = 0;
    for (const registry_entry* e : request_.variants) {
      if (e->descriptor.origin != origin_kind::source) continue;
      if (!interrupt_requested()) compiles.get(e);
      if (interrupt_requested()) break;
      if (progress_) progress_("compiling", ++i, request_.variants.size(), e->descriptor.name);
    }
    // Interrupted: the files not started are dropped (compile_stage's destructor), and nothing
    // is reported of a stage cut short.
    out.interrupted = interrupt_requested();
    if (!out.interrupted) compiles.finish(out);
    return out;
  }

  // 2. Run. Rows go to an executor per GPU: a worker process (a crash or a hang costs one row and
  // a restart) or, with in_process, kernlab itself. With several GPUs each row goes to the first
  // GPU free (runner/device_pool.hpp); the records are read back in request order, so the
  // groups, the journal's results and the callbacks come out as with one.
  const bool sanitizing = !request_.sanitize.empty();
  if (sanitizing && ordinals.size() + request_.remote_lanes.size() > 1)
    throw std::invalid_argument(
        "--sanitize runs on one GPU: give --device N, not --devices (nor several MPI ranks)");
  auto pool_owner = std::make_unique<device_pool>(lanes_for(families_, request_));
  device_pool& pool = *pool_owner;
  if (injected) out.device = pool.devices().front();
  pool.stop_on_interrupt(true);  // Ctrl-C: no queued row starts on any GPU
  const cuda::device_info& device = *out.device;
  out.devices = pool.devices();
  row_executor& first = pool.executor(0);
  out.clock_monitor_status = first.clock_status();
  out.energy_status = first.energy_status();
  for (std::size_t i = 0; i < pool.size(); ++i)
    if (std::string why = pool.executor(i).spread_status(); !why.empty())
      out.warnings.push_back(
          (pool.size() > 1 ? "GPU " + std::to_string(out.devices[i].ordinal) + ": " : "") + why);
  out.launch_floor = first.launch_floor(request_.timing);

  std::unique_ptr<journal> log;
  journal::state resumed;
  if (!request_.journal_path.empty()) {
    if (request_.resume)
      resumed = journal::read_with_ranks(request_.journal_path);
    else
      journal::remove_ranks(request_.journal_path);  // the run before's (MPI)
    try {
      log = std::make_unique<journal>(request_.journal_path, !request_.resume);
    } catch (const io_error& e) {
      out.warnings.push_back(std::string(e.what()) +
                             "; the run goes on without a journal, so it cannot be resumed");
    }
  }
  // The journal is written from the thread that runs each row (one per GPU): under a lock. A
  // journal that stops working (a full disk) is dropped with one warning; the rows go on.
  std::mutex journal_lock;
  auto journal_check = [&] {
    std::lock_guard<std::mutex> lock(journal_lock);
    if (!log || log->failure().empty()) return;
    out.warnings.push_back(log->failure());
    log.reset();
  };
  std::map<std::size_t, std::string> key_of;  // ticket -> journal key, while it runs
  pool.on_start([&](std::size_t ticket, std::size_t) {
    std::lock_guard<std::mutex> lock(journal_lock);
    if (log) log->started(key_of.at(ticket));
  });
  pool.on_finish([&](std::size_t ticket, std::size_t, const result_record& r) {
    std::lock_guard<std::mutex> lock(journal_lock);
    if (log) log->finished(key_of.at(ticket), outcome_name(r.status), json_text(to_json(r)));
  });

  std::size_t rows_total = 0, rows_done = 0;
  for (const registry_entry* e : request_.variants)
    if (const family* f = families_.find(e->descriptor.family))
      rows_total += configs_for(*f, request_).size() * blocks_for(e->descriptor, request_).size();

  // --profile: the rows that passed, with their jobs, for the pass after the sweep.
  std::vector<profile_target> to_profile;
  std::string sanitizer_folder;  // --sanitize without a journal: the logs' private folder

  // The rows queued and not yet read back, in request order: a record decided here (a skip, a
  // compile error, a resumed row, a sanitized row), or a ticket of the pool; and where each
  // group (dtype, op and size) ends.
  struct slot {
    std::vector<result_record> decided;
    std::optional<std::size_t> ticket;
    std::optional<row_job> job;  // --profile: the job of a row that ran
    std::string progress;        // what the progress line says of it
    bool counts = true;          // one of rows_total
    bool group_end = false;
  };
  std::deque<slot> pending;
  std::vector<result_record> group;  // the rows of the group being read back
  // Reads back the rows at the front until at most `keep` are queued (with one GPU, none: each
  // row runs as soon as it is queued, as rows always did), then the finished ones after them.
  auto drain = [&](std::size_t keep) {
    while (!pending.empty()) {
      slot& s = pending.front();
      if (pending.size() <= keep && s.ticket && !pool.ready(*s.ticket)) break;
      if (s.group_end) {
        if (on_group) on_group(group, device, out);
        for (auto& r : group) out.results.push_back(std::move(r));
        group.clear();
        pending.pop_front();
        continue;
      }
      // Before take(): with one GPU that is when the row runs, so the line names the row running.
      if (s.counts && progress_) progress_("running", ++rows_done, rows_total, s.progress);
      std::vector<result_record> records = s.ticket ? pool.take(*s.ticket) : std::move(s.decided);
      // A queued row that never started: Ctrl-C cancelled it (on a GPU's thread, maybe).
      if (s.ticket && records.empty()) out.interrupted = true;
      for (auto& r : records) {
        // Its index in out.results once this group is added to them.
        if (s.job && !request_.profiler.empty() && r.timed())
          to_profile.push_back({out.results.size() + group.size(), *s.job});
        if (row_) row_(r, out);
        group.push_back(std::move(r));
      }
      if (s.ticket) {
        std::lock_guard<std::mutex> lock(journal_lock);
        key_of.erase(*s.ticket);
      }
      pending.pop_front();
      journal_check();
    }
  };
  // With several GPUs, rows are queued this far ahead of the one read back, so that no GPU waits
  // while the front row runs; the bound keeps the compiled images queued with them in check.
  const std::size_t lookahead = pool.threaded() ? 4 * pool.size() : 0;

  std::vector<std::string> family_order;
  for (const registry_entry* e : request_.variants)
    if (std::find(family_order.begin(), family_order.end(), e->descriptor.family) ==
        family_order.end())
      family_order.push_back(e->descriptor.family);

  for (const auto& family_name : family_order) {
    if (out.interrupted) break;
    const family* fam = families_.find(family_name);
    if (!fam) {
      // A family whose description cannot be used: each variant is one failed row, with the
      // description's error (file:line).
      for (const registry_entry* e : request_.variants) {
        if (e->descriptor.family != family_name) continue;
        result_record r;
        r.variant = e->descriptor;
        r.status = outcome::failed;
        r.message = e->error.empty() ? "unknown family '" + family_name + "'" : e->error;
        slot s;
        s.decided.push_back(std::move(r));
        s.counts = false;
        pending.push_back(std::move(s));
      }
      slot end;
      end.group_end = true;
      pending.push_back(std::move(end));
      drain(lookahead);
      continue;
    }
    for (const problem_config& config : configs_for(*fam, request_)) {
      if (out.interrupted) break;
      for (const registry_entry* e : request_.variants) {
        if (out.interrupted) break;
        if (e->descriptor.family != family_name) continue;
        const auto& v = e->descriptor;
        // With --sanitize, each variant's rows run in workers of their own under each tool.
        std::vector<std::pair<std::string, std::unique_ptr<row_executor>>> sanitizers;
        std::vector<std::pair<std::string, std::string>> sanitizer_logs;
        for (const auto& tool : request_.sanitize) {
          const std::string path =
              sanitizer_log_path(request_.journal_path, sanitizer_folder, tool, v.name);
          // API errors are not the kernel's and kernlab checks every return code itself; one is
          // expected on every launch (the parameter check asks the driver for the parameter past
          // the last, cuda/tensor_map.cpp), which the sanitizer would count against every row.
          sanitizers.emplace_back(
              tool, make_executor(families_, request_,
                                  {request_.sanitizer, "--tool", tool, "--print-limit", "20",
                                   "--report-api-errors", "no"},
                                  path));
          sanitizer_logs.emplace_back(tool, path);
        }
        // Sanitized rows are decided here, then given their verdicts, before they are queued.
        std::vector<slot> sanitized;
        std::vector<bool> ran;  // per sanitized row: it was run (under the sanitizers)
        for (unsigned block : blocks_for(v, request_)) {
          // Ctrl-C: no new row starts; the finished ones are reported and written.
          if (interrupt_requested()) {
            out.interrupted = true;
            pool.cancel();
            break;
          }
          slot s;
          s.progress = v.name + (block ? " block " + std::to_string(block) : std::string()) + ", " +
                       config.describe();
          result_record r;
          r.variant = v;
          r.config = config;
          r.block = block;
          auto settle = [&](outcome o, const std::string& why) {
            r.status = o;
            r.message = why;
          };
          const std::string key = journal_key(*e, block, config);
          bool ran_now = false;
          // Decisions that need no GPU are made here; everything else runs in the executor.
          if (auto verdict = decide_before_compile(*e, block, config, device)) {
            settle(verdict->first, verdict->second);
          } else if (v.origin == origin_kind::source && compiles.get(e).stopped) {
            // Ctrl-C stopped its compile: like a row that never started, it is not reported.
            out.interrupted = true;
            pool.cancel();
            break;
          } else if (v.origin == origin_kind::source && !compiles.get(e).error.empty()) {
            settle(outcome::failed, compiles.get(e).error);
          } else if (resumed.in_flight.count(key)) {
            settle(outcome::suspect,
                   "was running when the run being resumed stopped (the machine or "
                   "the driver went down?); not run again: run it alone to check");
          } else if (auto done = resumed.done.find(key); done != resumed.done.end()) {
            if (auto earlier = resumed_record(done->second.record)) {
              // The numbers the row had when it finished, under today's descriptor.
              r = std::move(*earlier);
              r.variant = v;
              r.config = config;
              r.block = block;
              r.resumed = true;
            } else {
              settle(outcome::skipped,
                     "finished (" + done->second.outcome + ") in the run being resumed");
            }
          } else {
            row_job job;
            if (v.origin == origin_kind::source) {
              job = source_job(*fam, v, block, config, compiles.get(e));
            } else {
              job.variant = v;
              job.config = config;
              job.block = block;
            }
            job.timing = request_.timing;
            if (log) job.journal_key = key;  // another rank (MPI) journals it too
            ran_now = true;
            if (!request_.profiler.empty()) s.job = job;
            if (sanitizers.empty()) {
              // Queued: the pool's threads journal it as it starts and finishes. The lock is
              // held until its key is known, which a GPU taking it at once must wait for.
              std::lock_guard<std::mutex> lock(journal_lock);
              const std::size_t ticket =
                  pool.submit(std::move(job), is_baseline_row(v, request_.baseline));
              key_of[ticket] = key;
              s.ticket = ticket;
            } else {
              {
                std::lock_guard<std::mutex> lock(journal_lock);
                if (log) log->started(key);
              }
              journal_check();
              for (auto& [tool, x] : sanitizers) r = x->run(job);
              {
                std::lock_guard<std::mutex> lock(journal_lock);
                if (log) log->finished(key, outcome_name(r.status), json_text(to_json(r)));
              }
              journal_check();
            }
          }
          if (!s.ticket) s.decided.push_back(std::move(r));
          if (sanitizers.empty()) {
            pending.push_back(std::move(s));
            drain(lookahead);
          } else {
            ran.push_back(ran_now);
            sanitized.push_back(std::move(s));
          }
        }
        // The sanitizers' verdicts: their workers shut down, then their logs are read.
        for (std::size_t i = 0; i < sanitizers.size(); ++i) {
          sanitizers[i].second.reset();
          const std::string verdict =
              sanitizer_verdict(sanitizer_logs[i].first, sanitizer_logs[i].second);
          for (std::size_t k = 0; k < sanitized.size(); ++k) {
            auto& row = sanitized[k].decided.front();
            // A row that never ran (a compile error, a skip) has no verdict: "clean" would
            // claim a check that did not happen.
            if (!ran[k]) continue;
            row.sanitizer += (row.sanitizer.empty() ? "" : ", ") + verdict;
            if (verdict != sanitizer_logs[i].first + ": clean") row.sanitizer_findings = true;
          }
        }
        for (auto& s : sanitized) pending.push_back(std::move(s));
        drain(lookahead);
      }
      slot end;
      end.group_end = true;
      pending.push_back(std::move(end));
      drain(lookahead);
    }
  }
  // The rows still queued: with Ctrl-C, those that never started come back without a record.
  drain(0);
  out.workers_started = pool.workers_started();
  const auto lost = pool.lost();
  for (std::size_t i = 0; i < lost.size(); ++i)
    if (!lost[i].empty())
      out.warnings.push_back("GPU " + std::to_string(out.devices[i].ordinal) +
                             " left the run: " + lost[i] + "; the other GPUs took its rows");
  // After an interrupt the files still queued are dropped (compile_stage's destructor), not
  // waited for: the results then list no sources; nor is anything profiled.
  if (!out.interrupted) {
    if (!request_.profiler.empty()) {
      // The timing workers' contexts go before ncu's worker makes its own.
      pool_owner.reset();
      profile_rows(families_, request_, std::move(to_profile), out, progress_);
    }
    compiles.finish(out);
  }
  return out;
}

}  // namespace kl
