// The `reduce` family (docs/kernel_contract.md): one array in, one value out.
#pragma once

#include "families/family.hpp"
#include "families/pass_plan.hpp"

#include <cstdint>
#include <vector>

namespace kl {

class reduce_family final : public family {
 public:
  std::string name() const override { return "reduce"; }
  std::vector<std::string> dtypes() const override { return {"int32", "float32"}; }
  std::vector<std::string> ops() const override { return {"sum", "min", "max"}; }
  void check(const parsed_header& header) const override;
  double problem_bytes(const problem_config& c) const override;
  std::vector<std::string> pre_includes() const override { return {"kernlab/reduce.cuh"}; }
  std::string name_expression(const variant_descriptor& v, unsigned block,
                              const problem_config& c) const override;
  std::uint64_t max_size() const override;
  std::size_t device_bytes_needed(const problem_config& c) const override;
  std::unique_ptr<problem> make_problem(const problem_config& c,
                                        const cuda::device_info& device) const override;
};

/// The host side of the family, exposed for the tests: inputs, reference, comparison, pass plan.
namespace reduce {

/// Inputs as raw 32-bit words (int32 or float32 bit patterns), from a seeded generator.
///   int32: uniform in [-128, 127]; float32 exact: k/256 with k in [-127, 127] (mean zero), so
///   partial sums stay exact in float32 in any order; float32 random: uniform in [-1, 1).
std::vector<std::uint32_t> make_input(const problem_config& c);

/// The operation's identity as a bit pattern (0, +max or lowest).
std::uint32_t identity_bits(const std::string& dtype, const std::string& op);

struct reference {
  std::uint32_t bits = 0;  ///< the exact result (int32, float32 exact mode, min/max)
  double value = 0;        ///< the result in double (float32 random mode)
  double sum_abs = 0;      ///< sum of magnitudes, which scales the random-mode tolerance
};
reference compute_reference(const problem_config& c, const std::vector<std::uint32_t>& input);

/// Exact comparison, except float32 sums of random inputs, which get a tolerance that grows with
/// n and with the sum of magnitudes (summation order changes the rounding).
check_result compare(const problem_config& c, const reference& ref, std::uint32_t got_bits);

/// "12345" or "-1.5" (float32 printed with enough digits to round-trip).
std::string format_value(const std::string& dtype, std::uint32_t bits);

using kl::pass_plan;  // families/pass_plan.hpp
using kl::plan_passes;
using kl::round_up;

}  // namespace reduce
}  // namespace kl
