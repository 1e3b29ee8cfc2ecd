#include "runner/runner.hpp"

#include "cuda/resources.hpp"
#include "runner/compile_stage.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <sstream>

namespace kl {
namespace {

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

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

// Errors after which the context can run nothing more: the process must start over.
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
    case CUDA_ERROR_ECC_UNCORRECTABLE:
      return true;
    default:
      return false;
  }
}

// A loaded module per kernel file, and how long the load took.
struct loaded_module {
  std::unique_ptr<cuda::module> mod;
  double load_ms = 0;
  std::string error;
};

}  // namespace

const char* to_string(cache_use c) {
  switch (c) {
    case cache_use::off: return "-";
    case cache_use::hit: return "hit";
    case cache_use::miss: return "miss";
  }
  return "?";
}

std::vector<problem_config> configs_for(const family& f, const run_request& r) {
  std::vector<problem_config> out;
  const auto dtypes = f.dtypes();
  const auto ops = f.ops();
  for (const auto& d : r.dtypes) {
    if (std::find(dtypes.begin(), dtypes.end(), d) == dtypes.end()) continue;
    for (const auto& o : r.ops) {
      if (std::find(ops.begin(), ops.end(), o) == ops.end()) continue;
      for (auto n : r.sizes) out.push_back({d, o, n, r.input_mode, r.seed});
    }
  }
  return out;
}

std::vector<unsigned> blocks_for(const variant_descriptor& v, const run_request& r) {
  if (v.blocks.empty()) return {0};
  return r.blocks;
}

sweep_result runner::run(const group_callback& on_group) {
  sweep_result out;
  std::unique_ptr<cuda::primary_context> context;
  try {
    cuda::driver::get();
    out.device = cuda::query_device(0);
    CUdevice dev = 0;
    KL_CU(cuDeviceGet(&dev, 0));
    context = std::make_unique<cuda::primary_context>(dev);
    out.arch = out.device->arch();
  } catch (const cuda::no_device_error& e) {
    out.no_device_reason = e.why();
    out.arch = request_.fallback_arch;
  }

  // 1. Compile: one program per file, on CPU threads, consumed in request order below, so the
  // first file's rows are timed while the others still compile.
  compile_stage compiles(families_, request_, out.arch);
  if (request_.compile_only || !out.device) {
    compiles.finish(out);
    return out;
  }

  const cuda::device_info& device = *out.device;
  cuda::stream stream;
  l2_flusher flusher(request_.timing.flush, device.l2_bytes, device.arch());
  out.launch_floor = measure([&](CUstream s) { flusher.launch_empty(s); }, stream.get(),
                             request_.timing, flusher);
  std::map<const registry_entry*, loaded_module> modules;
  std::string context_lost;  // set once a sticky error has poisoned the context

  // 2. Run: one group of rows per family configuration (dtype, op, size).
  std::vector<std::string> family_order;
  for (const registry_entry* e : request_.variants)
    if (std::find(family_order.begin(), family_order.end(), e->descriptor.family) == family_order.end())
      family_order.push_back(e->descriptor.family);

  for (const auto& family_name : family_order) {
    const family* fam = families_.find(family_name);
    for (const problem_config& config : configs_for(*fam, request_)) {
      std::vector<result_record> group;
      std::unique_ptr<problem> prob;
      std::string problem_error;
      if (context_lost.empty()) {
        try {
          const std::size_t need = fam->device_bytes_needed(config);
          const std::size_t free_bytes = cuda::free_device_memory();
          if (need > free_bytes) {
            std::ostringstream msg;
            msg.precision(3);
            msg << "n=" << config.size << " needs about " << need / 1073741824.0
                << " GiB of device memory; " << device.name << " has " << free_bytes / 1073741824.0
                << " GiB free";
            problem_error = msg.str();
          } else {
            prob = fam->make_problem(config, device);
          }
        } catch (const std::exception& ex) {
          problem_error = std::string("could not set up the problem: ") + ex.what();
        }
      }

      for (const registry_entry* e : request_.variants) {
        if (e->descriptor.family != family_name) continue;
        for (unsigned block : blocks_for(e->descriptor, request_)) {
          result_record r;
          r.variant = e->descriptor;
          r.config = config;
          r.block = block;
          const auto& v = e->descriptor;
          auto skip = [&](const std::string& why) {
            r.status = outcome::skipped;
            r.message = why;
          };
          auto fail = [&](const std::string& why) {
            r.status = outcome::failed;
            r.message = why;
          };

          if (!e->error.empty()) {
            fail(e->error);
          } else if (!v.supports_dtype(config.dtype)) {
            skip("supports dtypes " + join(v.dtypes) + " only");
          } else if (!v.supports_op(config.op)) {
            skip("supports ops " + join(v.ops) + " only");
          } else if (block != 0 && !v.supports_block(block)) {
            skip("supports blocks " + join(v.blocks) + " only");
          } else if (block > static_cast<unsigned>(device.max_threads_per_block)) {
            skip(device.name + " allows at most " + std::to_string(device.max_threads_per_block) +
                 " threads per block");
          } else if (v.origin == origin_kind::source && !compiles.get(e).error.empty()) {
            fail(compiles.get(e).error);
          } else if (!context_lost.empty()) {
            fail("not run: " + context_lost);
          } else if (!prob) {
            fail(problem_error);
          } else {
            r.bytes = prob->bytes();
            r.flops = prob->flops();
            try {
              std::unique_ptr<operation> op;
              if (v.origin == origin_kind::source) {
                const compile_record& cr = compiles.get(e);
                r.compile_ms = cr.milliseconds;
                loaded_module& lm = modules[e];
                if (!lm.mod && lm.error.empty()) {
                  const auto t0 = std::chrono::steady_clock::now();
                  try {
                    lm.mod = std::make_unique<cuda::module>(cr.result.cubin);
                  } catch (const std::exception& ex) {
                    lm.error = std::string("module load failed: ") + ex.what();
                  }
                  lm.load_ms = ms_since(t0);
                }
                if (!lm.error.empty()) throw std::runtime_error(lm.error);
                r.load_ms = lm.load_ms;
                const std::string expr = fam->name_expression(v, block, config);
                source_kernel k;
                k.function = lm.mod->function(cr.result.lowered_names.at(expr));
                // The loaded function's attributes are the authority on a GPU; ptxas' report
                // (which NVRTC does not always return on the device) adds the spill counts.
                nvrtc::resource_usage res;
                if (auto it = cr.result.resources.find(expr); it != cr.result.resources.end())
                  res = it->second;
                int regs = 0, shared = 0, local = 0;
                KL_CU(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, k.function));
                KL_CU(cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k.function));
                KL_CU(cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, k.function));
                res.registers = regs;
                res.static_shared_bytes = shared;
                res.stack_frame_bytes = std::max<long>(res.stack_frame_bytes, local);
                r.resources = res;
                k.block = block;
                k.dynamic_shared_bytes = fam->dynamic_shared_bytes(v, block, config);
                int max_threads = 0;
                KL_CU(cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                         k.function));
                if (block > static_cast<unsigned>(max_threads)) {
                  skip("uses " + std::to_string(r.resources ? r.resources->registers : 0) +
                       " registers per thread, so at most " + std::to_string(max_threads) +
                       " threads per block fit");
                  group.push_back(std::move(r));
                  continue;
                }
                int per_sm = 0;
                KL_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k.function, block,
                                                                  k.dynamic_shared_bytes));
                if (per_sm == 0) {
                  skip("does not fit on an SM (" + std::to_string(k.dynamic_shared_bytes) +
                       " bytes of dynamic shared memory)");
                  group.push_back(std::move(r));
                  continue;
                }
                r.occupancy = occupancy_info{
                    per_sm, static_cast<double>(per_sm) * block / device.max_threads_per_sm};
                k.resident_blocks = per_sm * device.sm_count;
                op = prob->bind(v, k);
              } else {
                op = prob->bind(v, plugin_kernel{e->plugin_variant, block});
              }

              // Validate first: a result that is wrong is never timed.
              const auto t0 = std::chrono::steady_clock::now();
              op->poison_output(stream.get());
              op->enqueue(stream.get());
              stream.synchronize();
              r.check = op->check();
              r.validate_ms = ms_since(t0);
              if (!r.check.ok) {
                r.status = outcome::wrong_result;
                r.message = "expected " + r.check.expected + ", got " + r.check.got +
                            (r.check.detail.empty() ? "" : " (" + r.check.detail + ")");
              } else {
                r.timing = measure([&](CUstream s) { op->enqueue(s); }, stream.get(),
                                   request_.timing, flusher);
                // The last timed run must give the same answer: a race shows up here.
                check_result after = op->check();
                if (!after.ok) {
                  r.status = outcome::wrong_result;
                  r.check = after;
                  r.message = "correct once, then wrong after timing (a race?): expected " +
                              after.expected + ", got " + after.got;
                } else {
                  r.status = outcome::passed;
                }
              }
            } catch (const not_supported& ex) {
              skip(ex.what());
            } catch (const cuda::cuda_error& ex) {
              fail(ex.what());
              if (is_sticky(ex.code()))
                context_lost = "the CUDA context was lost after " + v.qualified_name() +
                               " (block " + std::to_string(block) + ") failed with " +
                               cuda::describe(ex.code());
            } catch (const std::exception& ex) {
              fail(ex.what());
            }
          }
          group.push_back(std::move(r));
        }
      }
      if (on_group) on_group(group, device, out);
      for (auto& r : group) out.results.push_back(std::move(r));
    }
  }
  compiles.finish(out);
  return out;
}

}  // namespace kl
