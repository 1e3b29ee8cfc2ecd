// A family's problem on the GPU: its buffers made from the generators, the reference computed
// once, the arguments packed for each kernel, validation and relocation to another placement.
// The operations a variant binds to are families/operations.cpp's; the reference is computed in
// families/problem_reference.cpp.
#pragma once

#include "cuda/device.hpp"
#include "cuda/resources.hpp"
#include "cuda/staging.hpp"
#include "cuda/tensor_map.hpp"
#include "families/argument_pack.hpp"
#include "families/family.hpp"
#include "families/operation.hpp"
#include "families/problem_config.hpp"
#include "spec/family_spec.hpp"
#include "spec/variant.hpp"

#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kl {

/// One buffer on the device, with the host copy of a generated input.
struct data_buffer {
  const buffer_spec* spec = nullptr;
  std::string dtype;
  std::uint64_t count = 0;
  cuda::device_buffer device;
  std::vector<std::uint8_t> host;  ///< inputs: what was uploaded
};

/// A variant's own scratch buffer (`scratch:`): zeroed before every launch.
struct scratch_buffer {
  std::string name, dtype;
  std::uint64_t count = 0;
  cuda::device_buffer device;
};

/// One instance of a family's problem on the device: inputs uploaded, reference computed.
class problem {
 public:
  /// Makes inputs and the reference on the host, then uploads them. Needs a current context.
  problem(const kl::family& fam, const problem_config& c, const cuda::device_info& device);

  const problem_config& config() const { return config_; }
  /// The bytes the algorithm must move (each input read once, each output written once).
  double bytes() const { return family_.problem_bytes(config_); }
  double flops() const { return family_.problem_flops(config_); }
  /// Moves every device buffer to a fresh allocation with the same contents: another placement
  /// in device memory, for timing over placements (measure/timing.hpp). Operations bound before
  /// are invalid afterwards. False when it cannot move (too little free memory for a second
  /// copy): it stays where it is.
  bool relocate(std::uint64_t salt);
  std::unique_ptr<operation> bind(const variant_descriptor& v, const source_kernel& k);
  std::unique_ptr<operation> bind(const variant_descriptor& v, const plugin_kernel& k);
  /// A transfer the family does itself (origin builtin: the device-to-device copy baseline);
  /// throws not_supported for any other variant.
  std::unique_ptr<operation> bind_builtin(const variant_descriptor& v);

  const kl::family& family() const { return family_; }
  const std::map<std::string, std::int64_t>& variables() const { return vars_; }
  /// Plan passes: the op, and the input's length with its identity padding.
  const op_spec& op() const { return *op_; }
  std::uint64_t padded_n() const { return padded_n_; }
  /// Writes `count` identities of the op from element `first` of `b` (set-up, never timed).
  void fill_identity(const cuda::device_buffer& b, const std::string& dtype, std::uint64_t first,
                     std::uint64_t count) const;
  const cuda::device_info& device() const { return device_; }
  const std::vector<data_buffer>& buffers() const { return buffers_; }
  std::vector<data_buffer>& buffers() { return buffers_; }
  data_buffer& buffer(const std::string& name);
  /// What poison() writes into out buffer `name`, as host bytes.
  std::vector<std::uint8_t> poison_bytes(const std::string& name) const;

  /// The tensor map `t` of a variant's header over its buffer, at this problem's size, for
  /// `block` threads and the variant's params. Throws not_supported when the TMA cannot copy it
  /// (rows that are not 16-byte aligned, say): the row is skipped with the reason.
  /// `scratch` is the variant's own (a map may name one of them).
  cuda::tensor_map tensor_map(const tensor_map_spec& t, const variant_descriptor& v, unsigned block,
                              const std::vector<scratch_buffer>& scratch) const;
  /// The variables of a variant's launch expressions at this problem: the axes, BLOCK and the
  /// params.
  std::map<std::string, std::int64_t> launch_variables(const variant_descriptor& v,
                                                       unsigned block) const;
  /// The variant's scratch buffers (`scratch:`) at this problem's size. Throws not_supported
  /// when one does not fit in the device's free memory.
  std::vector<scratch_buffer> make_scratch(const variant_descriptor& v, unsigned block) const;
  /// Every argument in [kernel] order; `outputs` replaces the out buffers' pointers (the
  /// reference's own).
  argument_pack arguments(const std::map<std::string, CUdeviceptr>& outputs = {}) const;

  /// Overwrites every output with its poison (an output with a start gets its start back).
  void poison(CUstream stream);
  void zero_workspaces(CUstream stream);
  /// Puts back the start of every buffer that has one and is reset inside the timed region
  /// (`timed`), or outside it.
  void restore_starts(CUstream stream, bool timed);
  /// Downloads every out buffer and checks it (after the stream was synchronised).
  check_result check() const;
  /// Every out buffer's bytes (on the host, by name) under the family's rule.
  check_result check(const std::map<std::string, const std::uint8_t*>& outputs) const;

 private:
  /// The output buffers' poison before a validation run: a NaN as float32, a large number as
  /// float64 and as int32 no result a test family produces.
  static constexpr std::uint32_t poison_bits = 0x7fbadbad;

  /// The start of buffer `b` as elements of `dtype` (its own, or the reference's float64).
  static std::vector<std::uint8_t> start_in(const data_buffer& b, const std::string& dtype);
  /// A buffer's start: zeros, or an inout buffer's generated values.
  void restore_start(data_buffer& b, CUstream stream) const;
  /// A plugin generator's elements (problem_reference.cpp).
  std::vector<std::uint8_t> generate_with_plugin(const generator_spec& g, const std::string& name,
                                                 const std::string& dtype, std::uint64_t count);
  void run_plugin_reference();
  void make_complements();
  void run_reference();
  void read_expected();  // [reference] expected: answers from files in place of the reference's

  const kl::family& family_;
  problem_config config_;
  cuda::device_info device_;
  std::map<std::string, std::int64_t> vars_;
  const op_spec* op_ = nullptr;  // plan passes
  std::uint64_t padded_n_ = 0;
  std::vector<data_buffer> buffers_;
  std::map<std::string, std::vector<std::uint8_t>> references_;  // by out buffer
  std::map<std::string, std::vector<std::uint8_t>> magnitudes_;  // by out buffer, rule bound
  std::map<std::string, cuda::device_buffer> complements_;       // by out buffer: its poison
  std::map<std::string, cuda::device_buffer> starts_;  // by inout buffer: its generated values
  // Where check() downloads each out buffer, made at its first check.
  mutable std::map<std::string, cuda::staging_buffer> staging_;
  cuda::device_buffer spacer_;  // relocate(): ahead of the current placement
};

}  // namespace kl
