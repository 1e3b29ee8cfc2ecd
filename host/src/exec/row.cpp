#include "exec/row.hpp"

#include "core/interrupt.hpp"
#include "cuda/nvtx.hpp"
#include "families/problem.hpp"
#include "nvrtc/hash.hpp"
#include "record/record_json.hpp"

#include <chrono>
#include <functional>

namespace kl {
namespace {

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

bool is_sticky(CUresult rc) {
  switch (rc) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE: return true;
    default: return false;
  }
}

result_record row_job::record() const {
  result_record r;
  r.variant = variant;
  r.config = config;
  r.block = block;
  r.compile_ms = compile_ms;
  r.resources = resources;
  return r;
}

std::string problem_key(const std::string& family, const problem_config& c) {
  return family + "|" + c.describe() + "|" + std::to_string(c.seed);
}

nlohmann::json to_json(const row_job& job) {
  // The record's own serialisation carries the descriptor and the configuration.
  nlohmann::json j = {{"row", to_json(job.record())},     {"timing", to_json(job.timing)},
                      {"lowered_name", job.lowered_name}, {"profile_range", job.profile_range},
                      {"journal_key", job.journal_key},   {"move_first", job.move_first}};
  j["cubin"] =
      nlohmann::json::binary(std::vector<std::uint8_t>(job.cubin.begin(), job.cubin.end()));
  return j;
}

row_job job_from_json(const nlohmann::json& j) {
  const result_record shell = record_from_json(j.at("row"));
  row_job job;
  job.variant = shell.variant;
  job.config = shell.config;
  job.block = shell.block;
  job.resources = shell.resources;
  job.compile_ms = shell.compile_ms;
  job.timing = timing_options_from_json(j.at("timing"));
  job.lowered_name = j.at("lowered_name").get<std::string>();
  job.profile_range = j.value("profile_range", std::string());
  job.journal_key = j.value("journal_key", std::string());
  job.move_first = j.value("move_first", false);
  const auto& image = j.at("cubin").get_binary();
  job.cubin.assign(image.begin(), image.end());
  return job;
}

row_runner::row_runner(const family_registry& families, int ordinal) : families_(families) {
  cuda::driver::get();  // throws no_device_error without one
  device_ = cuda::query_device(ordinal);
  CUdevice dev = 0;
  KL_CU(cuDeviceGet(&dev, ordinal));
  context_ = std::make_unique<cuda::primary_context>(dev);
  stream_ = std::make_unique<cuda::stream>();
  nvml_ = std::make_unique<nvml_library>();
  clocks_ = std::make_unique<clock_monitor>(*nvml_, device_.uuid);
  meter_ = std::make_unique<nvml_power_meter>(*nvml_, device_.uuid);
}

row_runner::~row_runner() {
  // Everything that holds device memory goes before the context does.
  problem_.reset();
  modules_.clear();
  flushers_.clear();
  stream_.reset();
}

l2_flusher& row_runner::flusher_for(flush_mode mode) {
  auto& f = flushers_[mode];
  if (!f) f = std::make_unique<l2_flusher>(mode, device_.l2_bytes, device_.arch());
  return *f;
}

problem& row_runner::problem_for(const family& f, const problem_config& c) {
  const std::string key = problem_key(f.name(), c);
  if (!problem_ || key != problem_key_) {
    problem_.reset();  // free the last one's device memory first
    const std::size_t need = f.device_bytes_needed(c);
    const std::size_t free_bytes = cuda::free_device_memory();
    if (need > free_bytes) {
      char msg[256];
      std::snprintf(
          msg, sizeof msg,
          "%s needs about %.3g GiB of device memory; %s has %.3g GiB free (--size, --shape)",
          c.describe().c_str(), need / 1073741824.0, device_.name.c_str(),
          free_bytes / 1073741824.0);
      throw std::runtime_error(msg);
    }
    problem_ = f.make_problem(c, device_);
    problem_key_ = key;
  }
  return *problem_;
}

timing_stats row_runner::launch_floor(const timing_options& opt) {
  l2_flusher& flusher = flusher_for(opt.flush);
  return measure([&](CUstream s) { flusher.launch_empty(s); }, stream_->get(), opt, flusher,
                 clocks_.get());
}

void row_runner::settle() {
  flusher_for(flush_mode::none).launch_empty(stream_->get());
  KL_CU(cuStreamSynchronize(stream_->get()));
}

timing_stats row_runner::time_in_placements(problem& prob, std::unique_ptr<operation>& op,
                                            const binder& bind, const timing_options& opt) {
  l2_flusher& flusher = flusher_for(opt.flush);
  const timing_options each = placement_options(opt);
  const auto began = std::chrono::steady_clock::now();
  std::vector<timing_stats> parts;
  std::string stayed;  // why the row stopped moving, if it did
  for (;;) {
    if (!parts.empty()) {
      // The next placement: the problem's buffers and the flush buffer in fresh memory, and the
      // operation bound there (its own buffers made anew).
      op.reset();
      if (!prob.relocate(++placements_made_)) {
        stayed = "timed in " + std::to_string(parts.size()) +
                 " placement(s): too little free device memory to move the problem";
        op = bind();
        break;
      }
      flusher.relocate();
      op = bind();
    }
    parts.push_back(measure([&](CUstream s) { op->enqueue(s); }, stream_->get(), each, flusher,
                            clocks_.get(), [&](CUstream s) { op->prepare(s); }));
    const timing_stats so_far = combine_placements(parts, false, opt.min_interval);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    if (placements_done(opt, so_far, elapsed) || interrupt_requested()) break;
  }
  // The rule is judged on the whole row: the placements' interval, the row's timeout, the race.
  timing_stats t = combine_row(opt, parts);
  if (t.note.empty()) t.note = stayed;
  return t;
}

result_record row_runner::run(const row_job& job) {
  result_record r = job.record();
  r.gpu = device_.identity();  // whatever becomes of the row, this GPU had it
  const auto& v = job.variant;
  if (!context_lost_.empty()) {
    r.status = outcome::crashed;
    r.message = "not run: " + context_lost_;
    return r;
  }
  try {
    const family* fam = families_.find(v.family);
    if (!fam) throw std::runtime_error("unknown family '" + v.family + "'");
    problem& prob = problem_for(*fam, job.config);
    r.bytes = prob.bytes();
    r.flops = prob.flops();
    r.roofline = roofline_word(fam->roofline());
    binder bind;
    if (v.origin == origin_kind::source)
      bind = bind_source(job, *fam, prob, r);
    else if (v.origin == origin_kind::builtin)
      bind = [&prob, &v] { return prob.bind_builtin(v); };
    else
      bind = bind_plugin(job, prob);
    if (!bind) return r;  // skipped: the kernel cannot launch here, and `r` says why
    const std::string stayed = move_first(job, prob);
    std::unique_ptr<operation> op = bind();
    // Validate first: a result that is wrong is never timed.
    if (!validate(*op, r)) return r;
    if (!job.profile_range.empty())
      run_profiled(*op, job.profile_range, r);
    else
      time_row(prob, op, bind, job, stayed, r);
  } catch (const not_supported& ex) {
    r.status = outcome::skipped;
    r.message = ex.what();
  } catch (const cuda::cuda_error& ex) {
    r.message = ex.what();
    if (is_sticky(ex.code())) {
      r.status = outcome::crashed;
      context_lost_ = "the CUDA context was lost after " + v.qualified_name() + " (block " +
                      std::to_string(job.block) + ") failed with " + cuda::describe(ex.code());
    } else {
      r.status = outcome::failed;
    }
  } catch (const std::exception& ex) {
    r.status = outcome::failed;
    r.message = ex.what();
  }
  return r;
}

void row_runner::prepare(const row_job& job) {
  const family* fam = families_.find(job.variant.family);
  if (!fam) throw std::runtime_error("unknown family '" + job.variant.family + "'");
  problem& prob = problem_for(*fam, job.config);
  // A library's first call in a process loads its kernels and makes its handle (cuBLAS: a few
  // tenths of a second): one untimed run of the plugin's operation here does that.
  if (job.variant.origin == origin_kind::plugin) {
    const std::unique_ptr<operation> op = bind_plugin(job, prob)();
    op->prepare(stream_->get());
    op->enqueue(stream_->get());
    stream_->synchronize();
  }
}

cuda::module& row_runner::module_for(const row_job& job, result_record& r) {
  // Loaded modules, by file and image: one per compiled file, reused by its rows.
  const std::string key =
      job.variant.origin_path + "#" + std::to_string(nvrtc::checksum64(job.cubin));
  auto& mod = modules_[key];
  if (!mod) {
    const auto t0 = std::chrono::steady_clock::now();
    mod = std::make_unique<cuda::module>(job.cubin);
    r.load_ms = ms_since(t0);
  }
  return *mod;
}

row_runner::binder row_runner::bind_source(const row_job& job, const family& fam, problem& prob,
                                           result_record& r) {
  const auto& v = job.variant;
  source_kernel k;
  k.function = module_for(job, r).function(job.lowered_name);
  k.block = job.block;
  k.dynamic_shared_bytes = fam.dynamic_shared_bytes(v, job.block, job.config);
  // The loaded function's attributes are the authority on a GPU; ptxas' report (which NVRTC
  // does not always return on the device) adds the spill counts.
  nvrtc::resource_usage res = job.resources.value_or(nvrtc::resource_usage{});
  int regs = 0, shared = 0, local = 0, max_threads = 0;
  KL_CU(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, k.function));
  KL_CU(cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k.function));
  KL_CU(cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, k.function));
  KL_CU(cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k.function));
  res.registers = regs;
  res.static_shared_bytes = shared;
  res.stack_frame_bytes = std::max<long>(res.stack_frame_bytes, local);
  r.resources = res;
  if (job.block > static_cast<unsigned>(max_threads)) {
    r.status = outcome::skipped;
    r.message = "uses " + std::to_string(regs) + " registers per thread, so at most " +
                std::to_string(max_threads) + " threads per block fit";
    return {};
  }
  // Above 48 KiB of shared memory (static and dynamic) a block must ask for it, up to the
  // device's opt-in limit; a request past the limit skips the row.
  if (cuda::allow_dynamic_shared(k.function, k.dynamic_shared_bytes) != CUDA_SUCCESS) {
    r.status = outcome::skipped;
    r.message = "asks for " + std::to_string(k.dynamic_shared_bytes) + " bytes of dynamic and " +
                std::to_string(shared) +
                " of static shared memory, more than a block may have here";
    return {};
  }
  int per_sm = 0;
  KL_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k.function, job.block,
                                                    k.dynamic_shared_bytes));
  if (per_sm == 0) {
    r.status = outcome::skipped;
    r.message = "does not fit on an SM (" + std::to_string(k.dynamic_shared_bytes) +
                " bytes of dynamic shared memory)";
    return {};
  }
  r.occupancy =
      occupancy_info{per_sm, static_cast<double>(per_sm) * job.block / device_.max_threads_per_sm};
  k.resident_blocks = per_sm * device_.sm_count;
  return [&prob, &v, k] { return prob.bind(v, k); };
}

row_runner::binder row_runner::bind_plugin(const row_job& job, problem& prob) {
  const auto& v = job.variant;
  auto& plugin = plugins_[v.origin_path];
  if (!plugin) plugin = load_plugin(v.origin_path);
  const kl_variant_desc* desc = nullptr;
  for (uint32_t i = 0; i < plugin->table->num_variants; ++i)
    if (plugin->table->variants[i].name && v.name == plugin->table->variants[i].name)
      desc = &plugin->table->variants[i];
  if (!desc) throw std::runtime_error(v.origin_path + " has no variant '" + v.name + "'");
  return [&prob, &v, desc, block = job.block] { return prob.bind(v, plugin_kernel{desc, block}); };
}

std::string row_runner::move_first(const row_job& job, problem& prob) {
  if (!job.move_first) return "";
  if (!prob.relocate(++placements_made_))
    return "a placement stayed where the last one was: too little free device memory to move the "
           "problem";
  flusher_for(job.timing.flush).relocate();
  return "";
}

bool row_runner::validate(operation& op, result_record& r) {
  const auto t0 = std::chrono::steady_clock::now();
  op.poison_output(stream_->get());
  op.enqueue(stream_->get());
  stream_->synchronize();
  r.check = op.check();
  r.validate_ms = ms_since(t0);
  if (r.check.ok) return true;
  r.status = outcome::wrong_result;
  r.message = "expected " + r.check.expected + ", got " + r.check.got +
              (r.check.detail.empty() ? "" : " (" + r.check.detail + ")");
  return false;
}

void row_runner::run_profiled(operation& op, const std::string& range, result_record& r) {
  // One run of the whole operation inside the row's NVTX range, for Nsight Compute, which
  // profiles the kernels launched inside it (each launch, replayed as often as its metrics
  // need, returns once profiled). Nothing else runs inside the range: no flush (ncu's own
  // --cache-control decides how cold the caches are), no timing.
  op.prepare(stream_->get());
  {
    cuda::nvtx_range profiled(range);
    op.enqueue(stream_->get());
  }
  stream_->synchronize();
  const check_result after = op.check();
  r.status = after.ok ? outcome::passed : outcome::wrong_result;
  if (!after.ok) {
    r.check = after;
    r.message = "correct once, then wrong in the profiled run: expected " + after.expected +
                ", got " + after.got;
  }
}

void row_runner::time_row(problem& prob, std::unique_ptr<operation>& op, const binder& bind,
                          const row_job& job, const std::string& stayed, result_record& r) {
  r.timing = time_in_placements(prob, op, bind, job.timing);
  if (r.timing->note.empty()) r.timing->note = stayed;
  // Energy after the samples, never before validation; where NVML cannot be used the row has
  // none, and the run says why once (energy_status).
  // A row raced out of a tune is not ranked: its energy would be measured for nothing.
  if (job.timing.energy.enabled && !r.timing->raced && meter_->why_unavailable().empty())
    r.energy = measure_energy(  // back to back: an untimed start is restored in the loop
        [&](CUstream s) {
          op->prepare(s);
          op->enqueue(s);
        },
        stream_->get(), *meter_, job.timing.energy, r.timing->median_ms / 1e3);
  // The last run (timed, or of the energy loop) must give the same answer: a race shows up
  // here.
  const check_result after = op->check();
  if (!after.ok) {
    r.status = outcome::wrong_result;
    r.check = after;
    r.message = "correct once, then wrong after timing (a race?): expected " + after.expected +
                ", got " + after.got;
  } else {
    r.status = outcome::passed;
  }
}

}  // namespace kl
