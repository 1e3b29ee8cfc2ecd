// A problem family: what a variant computes, how its inputs are made, how its result is checked,
// and how many bytes and FLOPs it must move and do. The runner is family-agnostic; everything
// specific to `reduce` (or a later family) lives behind this interface.
#pragma once

#include "cuda/device.hpp"
#include "spec/metadata.hpp"
#include "spec/variant.hpp"

#include <kernlab/plugin_api.h>

#include <nlohmann/json.hpp>

#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace kl {

/// A configuration a variant turns down when asked (a plugin's KL_STATUS_UNSUPPORTED): the row
/// is skipped with this message as the reason, not failed.
class not_supported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One point of a family's configuration space apart from the block size.
struct problem_config {
  std::string dtype;  ///< "int32", "float32"
  std::string op;     ///< reduce: "sum", "min", "max"
  std::uint64_t size = 0;
  std::string input_mode = "exact";  ///< "exact" or "random"
  std::uint64_t seed = 0;
  /// The problem's dimensions for families that have more than one (matmul: {M, N, K});
  /// empty for 1-D families, which use `size`.
  std::vector<std::uint64_t> shape;
  /// The family's real-valued axes (`type = "real"` in its family.toml), in its order, each with
  /// its value: {"SNR_DB", 20}. Empty for a family without them.
  std::vector<std::pair<std::string, double>> reals = {};

  /// The configuration's key, the one text that names it in tables, the journal, the results
  /// files and `compare`: "int32 sum n=16777216", "float32 4095x4097x1023", with the real axes
  /// after it ("float32 demap n=1000 SNR_DB=20").
  std::string describe() const;
  /// " SNR_DB=20" for each real axis; "" for a configuration without them.
  std::string reals_text() const;
  /// "4095x4097x1023"; "" for a 1-D configuration.
  std::string shape_text() const;
};

/// A real-valued axis as the runner sees it: its name, default and limits, and where it is
/// declared (for errors).
struct real_axis {
  std::string name;
  double default_value = 0, min = 0, max = 0;
  std::string where;  ///< "family.toml:12"
};

/// What a family's throughput is measured against: DRAM bandwidth (GB/s, reduce), the FP32
/// arithmetic peak (TFLOP/s, matmul), the 16-bit tensor-core peak (TFLOP/s, matmul_tc), the
/// TF32 tensor-core peak (TFLOP/s, matmul_tf32) or the FP64 tensor-core peak (TFLOP/s,
/// matmul_f64).
enum class roofline_kind {
  bandwidth,
  fp32_compute,
  tensor16_compute,
  tf32_compute,
  fp64_tensor_compute
};

/// The word records carry for a roofline: "bandwidth", "compute" (FP32), "tensor", "tf32" or
/// "fp64".
inline const char* roofline_word(roofline_kind k) {
  switch (k) {
    case roofline_kind::bandwidth: return "bandwidth";
    case roofline_kind::tensor16_compute: return "tensor";
    case roofline_kind::tf32_compute: return "tf32";
    case roofline_kind::fp64_tensor_compute: return "fp64";
    default: return "compute";
  }
}
/// The roofline a word names; "bandwidth" for any word that is not a compute one.
inline roofline_kind roofline_of_word(const std::string& word) {
  if (word == "compute") return roofline_kind::fp32_compute;
  if (word == "tensor") return roofline_kind::tensor16_compute;
  if (word == "tf32") return roofline_kind::tf32_compute;
  if (word == "fp64") return roofline_kind::fp64_tensor_compute;
  return roofline_kind::bandwidth;
}
/// What a compute roofline's peak is of, for tables and plots: "FP32", "16-bit tensor-core",
/// "TF32 tensor-core" or "FP64 tensor-core".
inline const char* roofline_peak_name(const std::string& word) {
  return word == "tensor" ? "16-bit tensor-core"
         : word == "tf32" ? "TF32 tensor-core"
         : word == "fp64" ? "FP64 tensor-core"
                          : "FP32";
}
/// Whether a record's roofline word is measured in FLOP/s ("compute", "tensor", "tf32",
/// "fp64").
inline bool is_compute_roofline(const std::string& word) {
  return word == "compute" || word == "tensor" || word == "tf32" || word == "fp64";
}
/// Whether a compute roofline's peak is a tensor core's ("tensor", "tf32", "fp64"), whose table
/// header gives FLOP per SM per clock rather than FP32 lanes.
inline bool is_tensor_roofline(const std::string& word) {
  return word == "tensor" || word == "tf32" || word == "fp64";
}

/// A source variant's launch at one block size and configuration: grid and block dimensions
/// from the header's `grid_dims` and `block_dims` (docs/kernel_contract.md).
struct launch_dims {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
};

/// The variables a header's expressions see for one instantiation: BLOCK, TSIZE, the header's
/// `params` in order (compile-time constants: they cannot use the shape), then the shape's
/// M, N, K (for a configuration with a shape).
/// Throws expression_error when a param does not evaluate.
std::map<std::string, std::int64_t> launch_variables(const variant_descriptor& v, unsigned block,
                                                     const problem_config& c);

/// Evaluates `block_dims` and `grid_dims` over `vars`; throws std::invalid_argument naming the
/// expression when a dimension is below 1 or above the CUDA limit, or the block's threads are not
/// `block`. `what` names the configuration in errors.
launch_dims evaluate_dims(const std::vector<std::string>& block_dims,
                          const std::vector<std::string>& grid_dims, unsigned block,
                          const std::map<std::string, std::int64_t>& vars, const std::string& what);

/// The outcome of comparing a variant's output with the reference.
struct check_result {
  bool ok = false;
  std::string expected;
  std::string got;
  std::string detail;  ///< e.g. the relative error in random mode
};

/// A compiled kernel instantiation, ready to launch.
struct source_kernel {
  CUfunction function = nullptr;
  unsigned block = 0;
  unsigned dynamic_shared_bytes = 0;
  int resident_blocks = 0;  ///< SM count x active blocks per SM at this block size
};

/// A precompiled plugin variant.
struct plugin_kernel {
  const kl_variant_desc* desc = nullptr;
  unsigned block = 0;  ///< 0 when the block size does not apply
};

/// One variant, one block size, bound to a problem's buffers: the thing that is validated and
/// timed.
class operation {
 public:
  virtual ~operation() = default;
  /// Enqueues the whole operation (every pass, every helper launch) on `stream`.
  virtual void enqueue(CUstream stream) = 0;
  /// Overwrites the output with a value no correct run produces, before a validation run (and
  /// puts back what an output that starts with contents starts with).
  virtual void poison_output(CUstream stream) = 0;
  /// Enqueues what must precede every run outside the timed region: a data family's buffers
  /// with `reset = "untimed"` get their start back (docs/families.md). Nothing by default.
  virtual void prepare(CUstream) {}
  /// Compares the output with the reference (after the stream was synchronised).
  virtual check_result check() const = 0;
};

/// One instance of a family's problem on the device: inputs uploaded, reference computed.
class problem {
 public:
  virtual ~problem() = default;
  virtual const problem_config& config() const = 0;
  /// The bytes the algorithm must move (each input read once, each output written once).
  virtual double bytes() const = 0;
  virtual double flops() const = 0;
  /// Device memory this problem holds now.
  virtual std::size_t device_bytes() const = 0;
  /// Moves every device buffer to a fresh allocation with the same contents: another placement
  /// in device memory, for timing over placements (measure/timing.hpp). Operations bound before
  /// are invalid afterwards. False when it cannot move (too little free memory for a second
  /// copy, or a problem that does not know how): it stays where it is.
  virtual bool relocate(std::uint64_t salt) {
    (void)salt;
    return false;
  }
  virtual std::unique_ptr<operation> bind(const variant_descriptor& v, const source_kernel& k) = 0;
  virtual std::unique_ptr<operation> bind(const variant_descriptor& v, const plugin_kernel& k) = 0;
  /// A transfer the family does itself (origin builtin: a data family's device-to-device copy
  /// baseline). By default there is none.
  virtual std::unique_ptr<operation> bind_builtin(const variant_descriptor& v) {
    throw not_supported(v.qualified_name() + " is not a variant of this family");
  }
};

class family {
 public:
  virtual ~family() = default;
  virtual std::string name() const = 0;
  virtual std::vector<std::string> dtypes() const = 0;
  /// The operations; empty when the family has none (matmul), and then --op does not apply.
  virtual std::vector<std::string> ops() const = 0;
  /// How many dimensions a configuration's `shape` has; 0 for a 1-D family (`size` only).
  virtual std::size_t shape_rank() const { return 0; }
  /// The names of the shape's variables in launch expressions, in shape order (matmul's M, N, K).
  virtual std::vector<std::string> shape_variables() const { return {"M", "N", "K"}; }
  /// The shape a sweep uses when neither --shape nor --size is on the command line (the config
  /// file's `size` is the 1-D families' default).
  virtual std::vector<std::uint64_t> default_shape() const { return {}; }
  /// The real-valued axes (set with --axis NAME=VALUES); none by default.
  virtual std::vector<real_axis> real_axes() const { return {}; }
  /// The size axis `kernlab --pipeline` cuts into chunks; "" when the family has no pipeline.
  virtual std::string pipeline_axis() const { return ""; }
  /// The roofline the family's tables and records report against.
  virtual roofline_kind roofline() const { return roofline_kind::bandwidth; }
  /// The bytes the algorithm must move for a configuration (each input read once, each output
  /// written once): a property of the problem, known without a device or a row.
  virtual double problem_bytes(const problem_config& c) const = 0;
  /// The arithmetic the algorithm must do (matmul: 2 M N K); 0 where it is not reported.
  virtual double problem_flops(const problem_config&) const { return 0.0; }
  /// Checks what the family needs of a header (keys, values); throws metadata_error.
  virtual void check(const parsed_header& header) const = 0;
  /// The name expression for one instantiation, e.g. "reduce5<256, int, kl::sum<int>>".
  virtual std::string name_expression(const variant_descriptor& v, unsigned block,
                                      const problem_config& c) const = 0;
  /// Headers included before every kernel file of the family (the names its name expressions
  /// use, such as kl::sum), so a file that forgets the #include still gets its own errors.
  virtual std::vector<std::string> pre_includes() const { return {}; }
  /// Dynamic shared memory for one instantiation.
  virtual unsigned dynamic_shared_bytes(const variant_descriptor& v, unsigned block,
                                        const problem_config& c) const;
  /// The largest problem size the family accepts, and why.
  virtual std::uint64_t max_size() const = 0;
  /// The device memory a problem of this config needs, to refuse sizes that do not fit.
  virtual std::size_t device_bytes_needed(const problem_config& c) const = 0;
  /// Evaluates every expression of the family's description at configuration `c` as a run of it
  /// will (checked 64-bit arithmetic), before anything runs: throws std::invalid_argument naming
  /// the expression, the configuration and its file:line when one overflows, divides by zero,
  /// gives a count below 1 or a value its argument's type cannot hold.
  virtual void check_configuration(const problem_config& c) const = 0;
  /// The same for the launch expressions of variant `v`'s header at `block` and `c` (`key_lines`:
  /// the header's line of each key, for the error).
  virtual void check_launch(const variant_descriptor& v,
                            const std::map<std::string, int>& key_lines, unsigned block,
                            const problem_config& c) const = 0;
  /// Makes inputs and the reference on the host, then uploads them. Needs a current context.
  virtual std::unique_ptr<problem> make_problem(const problem_config& c,
                                                const cuda::device_info& device) const = 0;
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

/// Replaces every whole-word occurrence of each key in `text` by its value.
std::string substitute_words(const std::string& text,
                             const std::map<std::string, std::string>& words);

/// Size of one element of a dtype name, in bytes; throws for an unknown name.
std::size_t dtype_size(const std::string& dtype);

}  // namespace kl
