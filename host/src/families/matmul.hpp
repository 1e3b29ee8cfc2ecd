// The `matmul` family (docs/kernel_contract.md, "The matmul family"): C = A * B, float32,
// row-major, A is M x K, B is K x N, C is M x N, for any M, N, K >= 1.
#pragma once

#include "cuda/resources.hpp"
#include "families/family.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace kl {

class matmul_family final : public family {
 public:
  std::string name() const override { return "matmul"; }
  std::vector<std::string> dtypes() const override { return {"float32"}; }
  std::vector<std::string> ops() const override { return {}; }
  std::size_t shape_rank() const override { return 3; }
  roofline_kind roofline() const override { return roofline_kind::fp32_compute; }
  std::vector<std::uint64_t> default_shape() const override { return {4096, 4096, 4096}; }
  void check(const parsed_header& header) const override;
  double problem_bytes(const problem_config& c) const override;
  double problem_flops(const problem_config& c) const override;
  std::string name_expression(const variant_descriptor& v, unsigned block,
                              const problem_config& c) const override;
  /// The largest W of `--size W` (W x W x W): every matrix must have fewer than 2^31 elements.
  std::uint64_t max_size() const override;
  std::size_t device_bytes_needed(const problem_config& c) const override;
  std::unique_ptr<problem> make_problem(const problem_config& c,
                                        const cuda::device_info& device) const override;
};

/// The host side of the family, exposed for the tests.
namespace matmul {

struct dims {
  std::uint64_t m = 0, n = 0, k = 0;
};

/// {M, N, K} of a configuration; throws std::invalid_argument unless it has exactly three
/// dimensions, each >= 1, and every matrix has fewer than 2^31 elements (the kernels index with
/// 32-bit ints).
dims shape_of(const problem_config& c);

/// A then B, from one seeded generator (A's rows first). Exact mode: k/4 with k uniform in
/// [-4, 4]; random mode: uniform in [-1, 1) on a grid of 2^-23.
struct inputs {
  std::vector<float> a, b;
};
inputs make_inputs(const problem_config& c);

/// The reference: the exact product in double, and per element the sum of the products'
/// magnitudes (which scales the random-mode error bound).
struct reference {
  std::vector<double> value;
  std::vector<double> abs_sum;
};

/// On the CPU, in double, summing in k order (exact for exact-mode inputs).
reference cpu_reference(const dims& d, const std::vector<float>& a, const std::vector<float>& b);

/// On the GPU: kernels_src/include/kernlab/matmul_reference.cuh, compiled with NVRTC for
/// `device`, run on the uploaded A and B. Needs a current context; synchronises it.
reference gpu_reference(const dims& d, const cuda::device_buffer& a, const cuda::device_buffer& b,
                        const cuda::device_info& device);

/// Shapes above this many multiply-adds get the GPU reference (a CPU reference of 4096^3 on two
/// cores takes minutes).
constexpr std::uint64_t cpu_reference_limit = std::uint64_t{1} << 27;

/// Exact-mode results are exact in float32 in every summation order while K <= 2^20: every
/// product is a multiple of 1/16 of magnitude <= 1, so every partial sum is a multiple of 1/16
/// of magnitude <= K <= 2^20, which needs at most 24 significant bits.
constexpr std::uint64_t exact_k_limit = std::uint64_t{1} << 20;

/// Exact mode (K <= exact_k_limit): every element equal. Otherwise the relative Frobenius error
/// must be under frobenius_tolerance(K) and every element within K * eps * sum|a*b| (the classic
/// bound for any summation order); NaN and infinity never pass.
/// `got` holds M * N floats. The elements are checked in chunks on every core; the verdict and
/// the numbers reported do not depend on the number of cores.
check_result compare(const problem_config& c, const reference& ref, const float* got);
inline check_result compare(const problem_config& c, const reference& ref,
                            const std::vector<float>& got) {
  return compare(c, ref, got.data());
}

/// 1e-5 up to K = 4096, growing with sqrt(K) beyond (the error of a float32 sum of K products
/// grows about as sqrt(K) relative to the result).
double frobenius_tolerance(std::uint64_t k);

}  // namespace matmul
}  // namespace kl
