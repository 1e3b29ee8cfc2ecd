// A problem family: what a variant computes, how its inputs are made, how its result is checked,
// and how many bytes and FLOPs it must move and do, all from a folder's family.toml
// (docs/families.md), run with no C++ of its own. Its buffers are generated from the seed, its
// reference is a kernel of the folder compiled by NVRTC (or a plugin's function), its rule
// compares every output element, and every variant is one launch with its header's (or the
// family's) grid and block dimensions, or the plan passes. Every family is one of these.
#pragma once

#include "cuda/device.hpp"
#include "families/operation.hpp"
#include "families/problem_config.hpp"
#include "nvrtc/compiler.hpp"
#include "spec/family_spec.hpp"
#include "spec/metadata.hpp"
#include "spec/variant.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kl {

class problem;           // families/problem.hpp
class pipeline_problem;  // families/pipeline.hpp

/// Evaluates `block_dims` and `grid_dims` over `vars`; throws std::invalid_argument naming the
/// expression when a dimension is below 1 or above the CUDA limit, or the block's threads are not
/// `block`. `what` names the configuration in errors.
launch_dims evaluate_dims(const std::vector<std::string>& block_dims,
                          const std::vector<std::string>& grid_dims, unsigned block,
                          const std::map<std::string, std::int64_t>& vars, const std::string& what);

class family {
 public:
  /// `include_dirs`: where the reference's #includes are looked for (the family's folder is
  /// searched first).
  family(family_spec spec, std::vector<std::string> include_dirs);

  const family_spec& spec() const { return spec_; }

  std::string name() const { return spec_.name; }
  std::vector<std::string> dtypes() const { return spec_.dtypes; }
  /// The operations; empty when the family has none (matmul), and then --op does not apply.
  std::vector<std::string> ops() const;
  /// Headers included before every kernel file of the family (the names its name expressions
  /// use, such as kl::sum), so a file that forgets the #include still gets its own errors.
  std::vector<std::string> pre_includes() const { return spec_.includes; }
  /// The names of the whole axes' variables in launch expressions, in order, then
  /// RESIDENT_BLOCKS and SM_COUNT.
  std::vector<std::string> shape_variables() const;
  /// Every axis: the whole ones (at least one; the spec reader refuses a family without) in
  /// --shape order, then the real ones, in the file's order.
  std::vector<axis_info> axes() const;
  /// Every axis at its default: the configuration a sweep makes when no option gives the axes.
  std::vector<axis_value> default_axes() const;
  /// The roofline the family's tables and records report against.
  roofline_kind roofline() const { return roofline_of_word(spec_.roofline); }
  /// The bytes the algorithm must move for a configuration (each input read once, each output
  /// written once): a property of the problem, known without a device or a row.
  double problem_bytes(const problem_config& c) const;
  /// The arithmetic the algorithm must do (matmul: 2 M N K); 0 where it is not reported.
  double problem_flops(const problem_config& c) const;
  /// Checks what the family needs of a header (keys, values); throws metadata_error.
  void check(const parsed_header& header) const;
  /// The name expression for one instantiation, e.g. "reduce5<256, int, kl::sum<int>>".
  std::string name_expression(const variant_descriptor& v, unsigned block,
                              const problem_config& c) const;
  /// Dynamic shared memory for one instantiation.
  unsigned dynamic_shared_bytes(const variant_descriptor& v, unsigned block,
                                const problem_config& c) const;
  /// The device memory a problem of this config needs, to refuse sizes that do not fit.
  std::size_t device_bytes_needed(const problem_config& c) const;
  /// Evaluates every expression of the family's description at configuration `c` as a run of it
  /// will (checked 64-bit arithmetic), before anything runs: throws std::invalid_argument naming
  /// the expression, the configuration and its file:line when one overflows, divides by zero,
  /// gives a count below 1 or a value its argument's type cannot hold.
  void check_configuration(const problem_config& c) const;
  /// The same for the launch expressions of variant `v`'s header at `block` and `c` (`key_lines`:
  /// the header's line of each key, for the error).
  void check_launch(const variant_descriptor& v, const std::map<std::string, int>& key_lines,
                    unsigned block, const problem_config& c) const;
  /// Makes inputs and the reference on the host, then uploads them. Needs a current context.
  std::unique_ptr<problem> make_problem(const problem_config& c,
                                        const cuda::device_info& device) const;
  /// The size axis `kernlab --pipeline` cuts into chunks; "" when the family has no pipeline.
  std::string pipeline_axis() const { return spec_.pipeline_axis; }
  /// The problem for `kernlab --pipeline` (a family with a [pipeline]); throws
  /// std::invalid_argument for one without. Needs a current context.
  std::unique_ptr<pipeline_problem> make_pipeline_problem(const problem_config& c,
                                                          const cuda::device_info& device) const;

  /// The whole axes' values of a configuration, by their names, with TSIZE; throws
  /// std::invalid_argument for a value outside an axis' limits.
  std::map<std::string, std::int64_t> axis_variables(const problem_config& c) const;
  /// A variant's launch (plan single) at one block size and configuration: its header's
  /// dimensions, else the family's. Throws std::invalid_argument naming the expression for a
  /// dimension past CUDA's limits, or dimensions that are not `block` threads.
  launch_dims launch(const variant_descriptor& v, unsigned block, const problem_config& c,
                     int sm_count, int resident_blocks) const;
  /// Every real axis' value in a configuration, in the family's order (an axis it does not name
  /// takes its default); throws std::invalid_argument for a value outside the axis' limits.
  std::vector<std::pair<std::string, double>> real_values(const problem_config& c) const;
  /// The element count of a buffer at a configuration; throws std::invalid_argument naming the
  /// buffer's line for a count that does not evaluate or is below 1.
  std::uint64_t element_count(const buffer_spec& b, const problem_config& c) const;
  /// Its bytes (the count times the element's size), checked: throws std::invalid_argument when
  /// they do not fit in 64 bits.
  std::uint64_t buffer_bytes(const buffer_spec& b, const problem_config& c) const;
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

/// The one place families are registered (explicitly, from main and the tests).
class family_registry {
 public:
  void add(std::unique_ptr<family> f);
  /// A family whose description cannot be used: its variants are listed with `error`
  /// ("family.toml:LINE: ..."), and none of them runs.
  void add_broken(const std::string& name, const std::string& error);
  const family* find(const std::string& name) const;
  /// The error of a broken family; "" for a family that is not broken.
  std::string broken(const std::string& name) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, std::unique_ptr<family>> families_;
  std::map<std::string, std::string> broken_;
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
