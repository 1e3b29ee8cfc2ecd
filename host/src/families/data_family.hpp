// The generic family: a problem described by a folder's family.toml (docs/families.md), run with
// no C++ of its own. Its buffers are generated from the seed, its reference is a kernel of the
// folder compiled by NVRTC, its rule compares every output element, and every variant is one
// launch with its header's (or the family's) grid and block dimensions.
#pragma once

#include "families/family.hpp"
#include "nvrtc/compiler.hpp"
#include "spec/family_spec.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kl {

class data_family final : public family {
 public:
  /// `include_dirs`: where the reference's #includes are looked for (the family's folder is
  /// searched first).
  data_family(family_spec spec, std::vector<std::string> include_dirs);

  const family_spec& spec() const { return spec_; }

  std::string name() const override { return spec_.name; }
  std::vector<std::string> dtypes() const override { return spec_.dtypes; }
  std::vector<std::string> ops() const override;
  std::vector<std::string> pre_includes() const override { return spec_.includes; }
  std::size_t shape_rank() const override { return spec_.axes.size(); }
  std::vector<std::string> shape_variables() const override;
  std::vector<std::uint64_t> default_shape() const override;
  roofline_kind roofline() const override { return roofline_of_word(spec_.roofline); }
  double problem_bytes(const problem_config& c) const override;
  double problem_flops(const problem_config& c) const override;
  void check(const parsed_header& header) const override;
  std::string name_expression(const variant_descriptor& v, unsigned block,
                              const problem_config& c) const override;
  unsigned dynamic_shared_bytes(const variant_descriptor& v, unsigned block,
                                const problem_config& c) const override;
  std::uint64_t max_size() const override;
  std::size_t device_bytes_needed(const problem_config& c) const override;
  std::unique_ptr<problem> make_problem(const problem_config& c,
                                        const cuda::device_info& device) const override;

  /// The axes' values of a configuration (its shape, or its size for a one-axis family), with
  /// TSIZE; throws std::invalid_argument for a value outside an axis' limits.
  std::map<std::string, std::int64_t> axis_variables(const problem_config& c) const;
  /// A variant's launch (plan single) at one block size and configuration: its header's
  /// dimensions, else the family's. Throws std::invalid_argument naming the expression for a
  /// dimension past CUDA's limits, or dimensions that are not `block` threads.
  launch_dims launch(const variant_descriptor& v, unsigned block, const problem_config& c,
                     int sm_count, int resident_blocks) const;
  /// The element count of a buffer at a configuration.
  std::uint64_t element_count(const buffer_spec& b, const problem_config& c) const;
  /// The dtype of a buffer at a configuration (T resolved).
  std::string buffer_dtype(const buffer_spec& b, const problem_config& c) const;
  /// The reference's compile request for one dtype and architecture (the tests compile it).
  nvrtc::compile_request reference_request(const std::string& dtype, const std::string& arch,
                                           const std::string& op = "") const;
  std::string reference_expression(const std::string& dtype, const std::string& op = "") const;
  /// The words of a name expression for a dtype and op: T, and OP (the op's functor).
  std::map<std::string, std::string> type_words(const std::string& dtype,
                                                const std::string& op) const;

 private:
  family_spec spec_;
  std::vector<std::string> include_dirs_;
};

/// The bytes of buffer `b` generated for a configuration: element i depends only on the seed,
/// the buffer's name and i (docs/families.md, "Generators"). Exposed for the tests.
std::vector<std::uint8_t> generate_buffer(const generator_spec& g, const std::string& dtype,
                                          std::uint64_t count, std::uint64_t seed,
                                          const std::string& buffer_name);

/// `count` elements of `dtype`, each the op's identity (plan passes pads its input with them).
std::vector<std::uint8_t> identity_elements(const op_spec& op, const std::string& dtype,
                                            std::uint64_t count);

/// Compares `got` (got_bytes of elements of `dtype`) with the reference's elements under the
/// family's rule; `ref_dtype` is the reference's element type (float64, or the buffer's own). The
/// rule `bound` needs the reference's `magnitudes` (float64, one per element) and the value of
/// its `terms`. The elements are compared in chunks on every core; the verdict and what it
/// reports do not depend on the number of cores.
check_result compare_buffer(const compare_spec& rule, const std::string& name,
                            const std::string& dtype, const std::uint8_t* got,
                            std::size_t got_bytes, const std::string& ref_dtype,
                            const std::vector<std::uint8_t>& ref,
                            const std::vector<std::uint8_t>* magnitudes = nullptr,
                            double terms = 0);
inline check_result compare_buffer(const compare_spec& rule, const std::string& name,
                                   const std::string& dtype, const std::vector<std::uint8_t>& got,
                                   const std::string& ref_dtype,
                                   const std::vector<std::uint8_t>& ref,
                                   const std::vector<std::uint8_t>* magnitudes = nullptr,
                                   double terms = 0) {
  return compare_buffer(rule, name, dtype, got.data(), got.size(), ref_dtype, ref, magnitudes,
                        terms);
}

/// Registers the family of every folder of `kernels_dirs` that holds a family.toml. A folder
/// whose description has a mistake is registered as broken, with the error naming file:line.
/// Returns warnings (a folder that has the name of a built-in family).
/// A family plugin (family.toml's `plugin`) is looked for in the family's folder, then in
/// `plugin_dirs`.
std::vector<std::string> add_data_families(family_registry& registry,
                                           const std::vector<std::string>& kernels_dirs,
                                           const std::vector<std::string>& include_dirs,
                                           const std::vector<std::string>& plugin_dirs = {});

}  // namespace kl
