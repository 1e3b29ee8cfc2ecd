// A point of a family's configuration space (problem_config), its axes, and the
// roofline a family's throughput is measured against: the words tables, the journal and the
// results files share, known without a device or a family.
#pragma once

#include "spec/axes.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kl {

/// One value of a configuration's axes, as nvbench's named values: {"N", 16777216},
/// {"SNR_DB", 20.5}.
struct axis_value {
  /// The axis; "" for a whole axis read back from a results file, which gives those by place.
  std::string name;
  axis_number value;
  bool whole() const { return std::holds_alternative<std::uint64_t>(value); }
};

/// One point of a family's configuration space apart from the block size.
struct problem_config {
  std::string dtype;                 ///< "int32", "float32"
  std::string op;                    ///< reduce: "sum", "min", "max"; "" for a family without ops
  std::string input_mode = "exact";  ///< "exact" or "random"
  std::uint64_t seed = 0;
  /// The family's axes with their values: its whole axes in order (N; M, N, K), then its others
  /// (SNR_DB), in the family's order.
  std::vector<axis_value> axes = {};

  /// The configuration's key, the one text that names it in tables, the journal, the results
  /// files and `compare`: "int32 sum n=16777216", "float32 4095x4097x1023", with the axes that are
  /// not whole after it ("float32 demap n=1000 SNR_DB=20").
  std::string describe() const;
  /// " SNR_DB=20" for each axis that is not whole; "" for a configuration without them.
  std::string named_axes_text() const;
  /// The whole axes' values in order: {16777216}, {4095, 4097, 1023}.
  std::vector<std::uint64_t> shape() const;
  /// "4095x4097x1023"; "" for a configuration of one whole axis (its key reads "n=").
  std::string shape_text() const;
};

/// An axis of a family as the runner sees it: its name, its default and limits (of its kind), and
/// where it is declared (for errors).
struct axis_info {
  std::string name;
  axis_number default_value, min, max;
  std::string where;  ///< "family.toml:12"
  bool whole() const { return std::holds_alternative<std::uint64_t>(default_value); }
  /// Whether `v` is a value of the axis' kind within its limits.
  bool admits(const axis_number& v) const;
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

/// Replaces every whole-word occurrence of each key in `text` by its value.
std::string substitute_words(const std::string& text,
                             const std::map<std::string, std::string>& words);

/// Size of one element of a dtype name, in bytes; throws for an unknown name.
std::size_t dtype_size(const std::string& dtype);

}  // namespace kl
