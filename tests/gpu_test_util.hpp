// What every GPU-labelled test shares: the skip when there is no GPU, one-sample timing (the
// GPU tests check outcomes, never speed), and a sweep of the shipped variants in a worker.
#pragma once

#include "cuda/driver.hpp"
#include "families/family.hpp"
#include "measure/timing.hpp"
#include "registry/registry.hpp"
#include "runner/runner.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace kl::test {

/// "" when a CUDA driver and device are there; else why not.
inline std::string no_gpu_reason() {
  try {
    cuda::driver::get();
    return "";
  } catch (const cuda::no_device_error& e) {
    return e.what();
  }
}

/// One validation run and one timed sample per row.
inline timing_options quick_timing() {
  timing_options t;
  t.warmup_runs = 0;
  t.min_samples = 1;
  t.min_time_s = 0;
  t.max_noise = 1;
  t.timeout_s = 1;
  t.flush = flush_mode::none;
  return t;
}

/// "reduce.reduce5 block 256 int32 sum n=1000: wrong_result expected 5, got 4": a row, for a
/// failed expectation's message.
inline std::string describe(const result_record& r) {
  std::ostringstream os;
  os << r.variant.qualified_name() << " block " << r.block << " " << r.config.describe() << ": "
     << to_string(r.status) << " " << r.message;
  return os.str();
}

/// The variants of `family`'s shipped kernel files, for parameterised tests: every plain file and
/// every named point (`points:`), and of a tunable file's other points (hundreds, maybe) a sample
/// of `per_tunable_file` that run at some block from 128 to 1024, the first, the last and evenly
/// spaced ones between; `kernlab tune` validates every point it times.
inline std::vector<std::string> shipped_source_variants(const std::string& family,
                                                        std::size_t per_tunable_file = 6) {
  family_registry fams;
  add_data_families(fams, {kernels_dir()}, {}, {std::string(KERNLAB_PLUGIN_DIR) + "/families"});
  registry reg(fams);
  reg.add_source_dir(kernels_dir());
  std::vector<std::string> out;
  std::map<std::string, std::vector<std::string>> points;  // by file
  std::vector<std::string> files;
  for (const auto& e : reg.entries()) {
    // Kernel files only: not a data family's built-in copy baseline (scan.d2d_copy).
    if (e.descriptor.family != family || e.descriptor.origin != origin_kind::source) continue;
    if (e.descriptor.in_default_selection()) {
      out.push_back(e.descriptor.name);
      continue;
    }
    // Only points a sweep's blocks (128 to 1024) can run: a point at 64 threads would skip all.
    bool runs = false;
    for (unsigned b : {128u, 256u, 512u, 1024u}) runs = runs || e.descriptor.supports_block(b);
    if (!runs) continue;
    if (!points.count(e.descriptor.origin_path)) files.push_back(e.descriptor.origin_path);
    points[e.descriptor.origin_path].push_back(e.descriptor.name);
  }
  for (const auto& file : files) {
    const auto& all = points[file];
    const std::size_t n = std::min(per_tunable_file, all.size());
    for (std::size_t i = 0; i < n; ++i)
      out.push_back(all[n == 1 ? 0 : i * (all.size() - 1) / (n - 1)]);
  }
  return out;
}

/// A variant's name as a test name: "tunable[BM=64;BN=32]" -> "tunable_BM_64_BN_32_".
inline std::string test_name(std::string name) {
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

/// The builtin families and a registry for a test to fill (source folders, plugin folders).
struct gpu_sweep {
  family_registry fams;
  registry reg{fams};
  gpu_sweep() {
    add_data_families(fams, {kernels_dir()}, {kernels_dir() + "/include", cuda_include()},
                      {std::string(KERNLAB_PLUGIN_DIR) + "/families"});
  }

  /// A sweep of `family`'s `variants` at every block size, one sample a row, in a worker (the
  /// product's path). The caller adds the dtypes, ops, sizes or shapes.
  run_request request_for(const std::string& family, const std::vector<std::string>& variants,
                          const std::string& kernels = kernels_dir()) {
    run_request r;
    r.variants = reg.select(variants, family);
    r.blocks = {128, 256, 512, 1024};
    r.include_dirs = {kernels + "/include", kernels_dir() + "/include", cuda_include()};
    r.timing = quick_timing();
    // The worker loads the families itself: a data family's folder must be named to it, as the
    // kernlab command does (app/plan.cpp).
    r.worker_command = {KERNLAB_BINARY, "--worker", "--kernels-dir", kernels};
    for (const auto& dir : r.include_dirs) {
      r.worker_command.push_back("--include");
      r.worker_command.push_back(dir);
    }
    return r;
  }
};

/// A reduce kernel file with a header of its own (block 256 unless given, bounds checked) whose
/// kernel's body is `body`: the isolation tests' planted faults.
inline std::string planted(const std::string& name, int order, const std::string& body,
                           const std::string& blocks = "256") {
  return "/* kernlab\nfamily: reduce\nentry:  " + name + "<BLOCK, T, OP>\nblocks: " + blocks +
         "\ntile:   BLOCK\n"
         "bounds: checked\norder:  " +
         std::to_string(order) +
         "\n*/\n"
         "template <unsigned BLOCK, typename T, typename OP>\n__global__ void " +
         name + "(const T* in, T* out, unsigned n) {\n" + body + "\n}\n";
}

/// A body that spins forever; the volatile read keeps the loop from being optimised away.
inline const char* spin_body = R"(
  volatile unsigned* flag = reinterpret_cast<volatile unsigned*>(out);
  if (threadIdx.x == 0) while (flag[0] != 0x12345678u || n != 0) {})";

/// Copies three shipped reduce kernels (reduce5, reduce6, reduce_single_pass) into
/// `<dir>/reduce/`: rows that pass, beside planted ones.
inline void write_good_kernels(const temp_dir& dir) {
  for (const char* n : {"reduce5", "reduce6", "reduce_single_pass"})
    dir.write(std::string("reduce/") + n + ".cu",
              read_file(kernels_dir() + "/reduce/" + n + ".cu"));
}

}  // namespace kl::test

/// Skips the test, with the reason, where there is no GPU.
#define KL_REQUIRE_GPU()                                      \
  do {                                                        \
    const std::string why = ::kl::test::no_gpu_reason();      \
    if (!why.empty()) GTEST_SKIP() << "needs a GPU: " << why; \
  } while (0)
