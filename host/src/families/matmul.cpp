#include "families/matmul.hpp"

#include "cuda/resources.hpp"
#include "cuda/staging.hpp"
#include "families/plugin_launch.hpp"
#include "families/splitmix64.hpp"
#include "matmul_reference_source.hpp"  // generated from kernels_src/include/kernlab/
#include "nvrtc/compiler.hpp"
#include "parallel/chunks.hpp"
#include "spec/expression.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace kl {
namespace matmul {
namespace {

constexpr std::uint64_t max_elements = (std::uint64_t{1} << 31) - 1;

std::string format_float(double v) {
  std::ostringstream out;
  out.precision(9);
  out << v;
  return out.str();
}

}  // namespace

dims shape_of(const problem_config& c) {
  if (c.shape.size() != 3)
    throw std::invalid_argument("matmul needs a shape M x N x K (got " +
                                std::to_string(c.shape.size()) + " dimensions)");
  dims d{c.shape[0], c.shape[1], c.shape[2]};
  if (d.m == 0 || d.n == 0 || d.k == 0)
    throw std::invalid_argument("matmul needs M, N, K >= 1; got " + c.shape_text());
  // Each factor is below 2^31 first, so the products cannot wrap.
  if (d.m > max_elements || d.n > max_elements || d.k > max_elements || d.m * d.k > max_elements ||
      d.k * d.n > max_elements || d.m * d.n > max_elements)
    throw std::invalid_argument("matmul " + c.shape_text() +
                                ": every matrix must have fewer than 2^31 elements (the kernels "
                                "index with 32-bit ints)");
  return d;
}

inputs make_inputs(const problem_config& c) {
  const dims d = shape_of(c);
  inputs in;
  in.a.resize(d.m * d.k);
  in.b.resize(d.k * d.n);
  splitmix64 rng{c.seed};
  const bool random = c.input_mode == "random";
  auto fill = [&](std::vector<float>& v) {
    for (auto& x : v) {
      const std::uint64_t r = rng.next();
      if (random)
        x = static_cast<float>(static_cast<double>(r >> 40) * 0x1p-23 - 1.0);
      else
        x = static_cast<float>(static_cast<int>((r >> 32) % 9) - 4) / 4.0f;  // k/4, k in [-4, 4]
    }
  };
  fill(in.a);
  fill(in.b);
  return in;
}

reference cpu_reference(const dims& d, const std::vector<float>& a, const std::vector<float>& b) {
  reference ref;
  ref.value.assign(d.m * d.n, 0.0);
  ref.abs_sum.assign(d.m * d.n, 0.0);
  // i-k-j order: B's rows and C's row are read contiguously. Each element still sums in k order.
  for (std::uint64_t i = 0; i < d.m; ++i) {
    double* row = &ref.value[i * d.n];
    double* row_abs = &ref.abs_sum[i * d.n];
    for (std::uint64_t k = 0; k < d.k; ++k) {
      const double x = a[i * d.k + k];
      const float* brow = &b[k * d.n];
      for (std::uint64_t j = 0; j < d.n; ++j) {
        const double p = x * brow[j];
        row[j] += p;
        row_abs[j] += std::fabs(p);
      }
    }
  }
  return ref;
}

double frobenius_tolerance(std::uint64_t k) {
  return 1e-5 * std::max(1.0, std::sqrt(static_cast<double>(k) / 4096.0));
}

// Chunks the comparisons run in: enough to keep every core of a large machine busy, few enough
// that their partial results cost nothing to combine (in chunk order, so the same on any machine).
constexpr std::size_t compare_chunks = 64;

check_result compare(const problem_config& c, const reference& ref, const float* got) {
  const dims d = shape_of(c);
  const std::size_t count = d.m * d.n;
  check_result r;
  auto where = [&](std::size_t i) {
    return "C[" + std::to_string(i / d.n) + "][" + std::to_string(i % d.n) + "] = ";
  };
  // Per chunk: the elements outside the rule, the first of them, and the Frobenius sums.
  struct partial {
    std::size_t wrong = 0, first = 0;
    double err2 = 0, ref2 = 0;
  };
  std::vector<partial> parts(compare_chunks);
  const bool exact = c.input_mode == "exact" && d.k <= exact_k_limit;
  // K * eps * sum|a*b| bounds the rounding error of any order of K float32 additions (with or
  // without FMA): gamma_K = K u / (1 - K u) < K * eps for K u < 1/2.
  const double eps = std::numeric_limits<float>::epsilon();
  for_each_chunk(count, compare_chunks, [&](const chunk_range& ch) {
    partial& p = parts[ch.index];
    for (std::size_t i = ch.begin; i < ch.end; ++i) {
      if (exact) {
        if (!(static_cast<double>(got[i]) == ref.value[i]) && p.wrong++ == 0) p.first = i;
        continue;
      }
      const double e = static_cast<double>(got[i]) - ref.value[i];
      p.err2 += e * e;
      p.ref2 += ref.value[i] * ref.value[i];
      const double bound = static_cast<double>(d.k) * eps * ref.abs_sum[i];
      if (!(std::fabs(e) <= bound) && p.wrong++ == 0) p.first = i;  // NaN is never <= anything
    }
  });
  partial all;
  for (const partial& p : parts) {
    if (p.wrong && !all.wrong) all.first = p.first;
    all.wrong += p.wrong;
    all.err2 += p.err2;
    all.ref2 += p.ref2;
  }
  if (exact) {
    r.ok = all.wrong == 0;
    if (!r.ok) {
      r.expected = where(all.first) + format_float(ref.value[all.first]);
      r.got = where(all.first) + format_float(got[all.first]);
      r.detail = std::to_string(all.wrong) + " of " + std::to_string(count) +
                 " elements differ (exact mode: every element must be equal)";
    } else {
      r.expected = r.got = "all " + std::to_string(count) + " elements exact";
    }
    return r;
  }
  const double rel = all.ref2 > 0 ? std::sqrt(all.err2 / all.ref2) : std::sqrt(all.err2);
  const double tol = frobenius_tolerance(d.k);
  r.ok = all.wrong == 0 && rel <= tol;  // a NaN anywhere makes rel NaN: never <= tol
  std::ostringstream detail;
  detail << "relative Frobenius error " << rel << " (tolerance " << tol << "), " << all.wrong
         << " element(s) beyond K * eps * sum|a*b|";
  if (c.input_mode == "exact") detail << "; exact mode compares exactly only up to K = 2^20";
  r.detail = detail.str();
  const std::size_t show = all.wrong ? all.first : 0;
  r.expected = where(show) + format_float(ref.value[show]);
  r.got = where(show) + format_float(got[show]);
  return r;
}

constexpr unsigned reference_tile = 16;
const std::string reference_expr = "kl::matmul_reference<" + std::to_string(reference_tile) + ">";

// The GPU reference (kernels_src/include/kernlab/matmul_reference.cuh), compiled with NVRTC once
// per process and architecture (a worker makes one problem per shape).
const nvrtc::compile_result& reference_image(const std::string& arch) {
  static std::mutex mutex;
  static std::map<std::string, nvrtc::compile_result> images;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = images.find(arch); it != images.end()) return it->second;
  nvrtc::compile_request req;
  req.source = reference_source;
  req.path = "kernlab/matmul_reference.cuh";
  req.arch = arch;
  req.name_expressions = {reference_expr};
  nvrtc::compile_result compiled = nvrtc::compile(req);
  if (!compiled.ok)
    throw std::runtime_error("the matmul GPU reference does not compile:\n" +
                             compiled.error_summary());
  return images.emplace(arch, std::move(compiled)).first->second;
}

// Runs the GPU reference once per problem and downloads its result: the device memory it used
// is freed before any variant runs.
reference gpu_reference(const dims& d, const cuda::device_buffer& a, const cuda::device_buffer& b,
                        const cuda::device_info& device) {
  constexpr unsigned tile = reference_tile;
  const nvrtc::compile_result& compiled = reference_image(device.arch());
  cuda::module mod(compiled.cubin);
  CUfunction f = mod.function(compiled.lowered_names.at(reference_expr));
  cuda::device_buffer c(d.m * d.n * 8), c_abs(d.m * d.n * 8);
  CUdeviceptr pa = a.get(), pb = b.get(), pc = c.get(), pabs = c_abs.get();
  int m = static_cast<int>(d.m), n = static_cast<int>(d.n), k = static_cast<int>(d.k);
  void* args[] = {&pa, &pb, &pc, &pabs, &m, &n, &k};
  const auto gx = static_cast<unsigned>((d.n + tile - 1) / tile);
  const auto gy = (d.m + tile - 1) / tile;
  if (gy > 65535) throw std::invalid_argument("the matmul GPU reference takes M <= 65535 * 16");
  KL_CU(cuLaunchKernel(f, gx, static_cast<unsigned>(gy), 1, tile, tile, 1, 0, nullptr, args,
                       nullptr));
  cuda::synchronize_context();
  reference ref;
  ref.value.resize(d.m * d.n);
  ref.abs_sum.resize(d.m * d.n);
  c.download(ref.value.data(), c.bytes());
  c_abs.download(ref.abs_sum.data(), c_abs.bytes());
  return ref;
}

}  // namespace matmul

namespace {

using namespace matmul;

// The buffers' poison: a NaN, which no element of a correct product is.
constexpr std::uint32_t poison_bits = 0x7fbadbad;

class matmul_problem final : public problem {
 public:
  matmul_problem(const problem_config& c, const cuda::device_info& device)
      : config_(c), dims_(shape_of(c)) {
    const inputs in = make_inputs(c);
    a_ = cuda::device_buffer(in.a.size() * 4);
    b_ = cuda::device_buffer(in.b.size() * 4);
    a_.upload(in.a.data(), a_.bytes());
    b_.upload(in.b.data(), b_.bytes());
    cuda::synchronize_context();
    ref_ = dims_.m * dims_.n * dims_.k <= cpu_reference_limit
               ? cpu_reference(dims_, in.a, in.b)
               : gpu_reference(dims_, a_, b_, device);
  }

  const problem_config& config() const override { return config_; }
  double bytes() const override { return matmul_family().problem_bytes(config_); }
  double flops() const override { return matmul_family().problem_flops(config_); }
  std::size_t device_bytes() const override { return a_.bytes() + b_.bytes(); }

  std::unique_ptr<operation> bind(const variant_descriptor& v, const source_kernel& k) override;
  std::unique_ptr<operation> bind(const variant_descriptor& v, const plugin_kernel& k) override;

  const dims& shape() const { return dims_; }
  const cuda::device_buffer& a() const { return a_; }
  const cuda::device_buffer& b() const { return b_; }
  // Into page-locked memory kept for the problem's rows (cuda/staging.hpp): a download at the
  // link's speed, and no fresh allocation of C's size for every check.
  check_result check(const cuda::device_buffer& c) const {
    const std::size_t bytes = dims_.m * dims_.n * 4;
    auto* got = reinterpret_cast<float*>(staging_.get(bytes));
    c.download(got, bytes);
    return compare(config_, ref_, got);
  }

 private:
  problem_config config_;
  dims dims_;
  cuda::device_buffer a_, b_;
  reference ref_;
  mutable cuda::staging_buffer staging_;  // C's size, made at the first check
};

// A runtime-compiled kernel: one launch with the header's grid and block dimensions and the
// arguments (A, B, C, M, N, K).
class source_matmul final : public operation {
 public:
  source_matmul(const matmul_problem& p, const variant_descriptor& v, const source_kernel& k)
      : problem_(p), kernel_(k) {
    try {
      dims_ = evaluate_launch_dims(v, k.block, p.config());
    } catch (const std::invalid_argument& e) {
      throw not_supported(e.what());  // e.g. a grid past CUDA's 65535 rows for a huge M
    }
    c_ = cuda::device_buffer(p.shape().m * p.shape().n * 4);
  }
  void enqueue(CUstream stream) override {
    CUdeviceptr a = problem_.a().get(), b = problem_.b().get(), c = c_.get();
    int m = static_cast<int>(problem_.shape().m), n = static_cast<int>(problem_.shape().n),
        k = static_cast<int>(problem_.shape().k);
    void* args[] = {&a, &b, &c, &m, &n, &k};
    KL_CU(cuLaunchKernel(kernel_.function, dims_.grid[0], dims_.grid[1], dims_.grid[2],
                         dims_.block[0], dims_.block[1], dims_.block[2],
                         kernel_.dynamic_shared_bytes, stream, args, nullptr));
  }
  void poison_output(CUstream stream) override {
    KL_CU(cuMemsetD32Async(c_.get(), poison_bits, c_.bytes() / 4, stream));
  }
  check_result check() const override { return problem_.check(c_); }

 private:
  const matmul_problem& problem_;
  source_kernel kernel_;
  launch_dims dims_;
  cuda::device_buffer c_;
};

// A plugin variant: inputs {A, B}, outputs {C}, sizes {M, N, K} (plugin_api.h).
class plugin_matmul final : public operation {
 public:
  plugin_matmul(const matmul_problem& p, const plugin_kernel& k)
      : problem_(p),
        c_(p.shape().m * p.shape().n * 4),
        launch_(k, {"matmul",
                    p.config().dtype,
                    "",
                    {p.a().as_ptr(), p.b().as_ptr()},
                    {c_.as_ptr()},
                    {p.shape().m, p.shape().n, p.shape().k}}) {}
  void enqueue(CUstream stream) override { launch_.run(stream); }
  void poison_output(CUstream stream) override {
    KL_CU(cuMemsetD32Async(c_.get(), poison_bits, c_.bytes() / 4, stream));
  }
  check_result check() const override { return problem_.check(c_); }

 private:
  const matmul_problem& problem_;
  cuda::device_buffer c_;  // before launch_, which points into it
  plugin_launch launch_;
};

std::unique_ptr<operation> matmul_problem::bind(const variant_descriptor& v,
                                                const source_kernel& k) {
  return std::make_unique<source_matmul>(*this, v, k);
}
std::unique_ptr<operation> matmul_problem::bind(const variant_descriptor&, const plugin_kernel& k) {
  return std::make_unique<plugin_matmul>(*this, k);
}

}  // namespace

void matmul_family::check(const parsed_header& h) const {
  const auto& d = h.descriptor;
  if (d.block_dims.size() < 2 || d.grid_dims.size() < 2)
    throw metadata_error(
        d.origin_path, h.header_line,
        "a matmul variant needs 'block_dims: <x>, <y>' and 'grid_dims: <x>, <y>' "
        "(expressions over BLOCK, M, N, K and the params; docs/kernel_contract.md)");
  if (!d.tile.empty())
    throw metadata_error(d.origin_path, h.line_of("tile"),
                         "matmul has no 'tile' (grid_dims say the grid)");
  for (const auto& t : d.dtypes)
    if (t != "float32")
      throw metadata_error(d.origin_path, h.line_of("dtypes"),
                           "matmul has no dtype '" + t + "' (it has float32)");
  if (!d.ops.empty()) throw metadata_error(d.origin_path, h.line_of("ops"), "matmul has no ops");
}

std::string matmul_family::name_expression(const variant_descriptor& v, unsigned block,
                                           const problem_config& c) const {
  std::map<std::string, std::string> words = {{"BLOCK", std::to_string(block)}, {"T", "float"}};
  const auto vars = launch_variables(v, block, c);  // params never depend on the shape
  for (const auto& [name, text] : v.params) words[name] = std::to_string(vars.at(name));
  return substitute_words(v.entry, words);
}

std::uint64_t matmul_family::max_size() const { return 46340; }  // 46341^2 >= 2^31

double matmul_family::problem_bytes(const problem_config& c) const {
  const matmul::dims d = matmul::shape_of(c);  // A and B read once, C written once
  return 4.0 * (static_cast<double>(d.m) * static_cast<double>(d.k) +
                static_cast<double>(d.k) * static_cast<double>(d.n) +
                static_cast<double>(d.m) * static_cast<double>(d.n));
}

double matmul_family::problem_flops(const problem_config& c) const {
  const matmul::dims d = matmul::shape_of(c);
  return 2.0 * static_cast<double>(d.m) * static_cast<double>(d.n) * static_cast<double>(d.k);
}

std::size_t matmul_family::device_bytes_needed(const problem_config& c) const {
  const dims d = shape_of(c);
  // A, B, one variant's C, and while the problem is made the GPU reference's two double arrays.
  return static_cast<std::size_t>(4 * (d.m * d.k + d.k * d.n + d.m * d.n) + 16 * d.m * d.n);
}

std::unique_ptr<problem> matmul_family::make_problem(const problem_config& c,
                                                     const cuda::device_info& device) const {
  shape_of(c);  // throws for a shape that is not one
  return std::make_unique<matmul_problem>(c, device);
}

}  // namespace kl
