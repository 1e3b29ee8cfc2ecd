// A family described as data (docs/families.md): the plain contents of a folder's family.toml,
// checked when it is read. The generic family that runs it is families/family.hpp.
#pragma once

#include "spec/dtypes.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kl {

/// One size axis of the problem ("ROWS"), in --shape order.
struct axis_spec {
  std::string name;
  std::int64_t default_value = 0;
  std::int64_t min = 1;
  std::int64_t max = 2147483647;
  int line = 0;
};

/// A real-valued axis (`type = "real"`, e.g. a signal-to-noise ratio): not a size, so no
/// expression sees it; the generators and references of a family plugin do, and every
/// configuration's key names its value. Set with `--axis NAME=v1,v2`.
struct real_axis_spec {
  std::string name;
  double default_value = 0;
  double min = -1e300, max = 1e300;
  int line = 0;
};

/// How a buffer's elements are generated: element i depends on the seed, the buffer's name and i
/// only (docs/families.md, "Generators").
struct generator_spec {
  std::string kind;  ///< grid, uniform, normal, constant, iota, npy
  double den = 1, min = 0, max = 1;
  double mean = 0, stddev = 1;
  double value = 0;
  double start = 0, step = 1;
  std::string file;      ///< npy: the file, resolved against the family's folder
  std::string function;  ///< plugin: the family plugin's generator (family_api.h)
  int line = 0;
};

/// in: generated, read. out: written by the kernel, compared. inout: generated, read and written
/// in place, compared. workspace: scratch, zeroed before every launch.
enum class buffer_role { in, out, inout, workspace };

struct buffer_spec {
  std::string name;
  buffer_role role = buffer_role::in;
  std::string type;                             ///< "T" or a dtype name
  std::string count;                            ///< expression over the axes
  std::optional<generator_spec> exact, random;  ///< for roles in and inout: one per input mode
  /// An out buffer that starts at zero (`init = "zero"`): the kernel accumulates into it.
  bool zero = false;
  /// A buffer with a start (inout, or zero) gets it back before every launch: inside the timed
  /// region (`reset = "timed"`, the default), or outside it (`"untimed"`).
  bool reset_timed = true;
  int line = 0;

  /// Generated from the seed and uploaded (in, inout).
  bool is_input() const { return role == buffer_role::in || role == buffer_role::inout; }
  /// Written by the kernel and compared with the reference (out, inout).
  bool is_output() const { return role == buffer_role::out || role == buffer_role::inout; }
  /// Starts with contents the kernel reads and changes, restored before every launch: an inout
  /// buffer's generated values, or an accumulating out buffer's zeros. It is not poisoned.
  bool has_start() const { return role == buffer_role::inout || zero; }
};

/// One kernel argument: a buffer's pointer, or an integer expression passed as `type`.
struct arg_spec {
  std::string buffer;      ///< non-empty: this buffer's device pointer
  std::string expression;  ///< otherwise: an integer over the axes
  std::string type = "int32";
  int line = 0;
};

struct reference_spec {
  std::string file;    ///< the path, resolved against the family's folder
  std::string source;  ///< its text
  std::string entry;
  /// Non-empty: the reference is this function of the family plugin, run on the host, which
  /// writes each output in its own type (type "T"); file and entry are then empty.
  std::string plugin_function;
  std::string type = "float64";  ///< of its out buffers: "float64" or "T"
  unsigned block = 256;
  std::vector<std::string> block_dims, grid_dims;
  /// `expected = { NAME = "FILE.npy", ... }`: an out or inout buffer's expected values, read from
  /// a .npy file (path resolved against the folder) in the type the reference writes it; they
  /// replace what the reference wrote for that buffer (an answer computed elsewhere).
  std::map<std::string, std::string> expected;
  int line = 0;
};

struct compare_spec {
  std::string rule = "exact";  ///< exact, bytes, ulp, tolerance, frobenius, bound
  double max_ulp = 0, abs = 0, rel = 0, tol = 0;
  /// bound: how many terms each output element sums, an expression over the axes; an element
  /// passes when |got - ref| <= terms * eps(type) * magnitude, the magnitude (the sum of the
  /// terms' absolute values) written by the reference beside its result.
  std::string terms;
  int line = 0;
};

struct baseline_spec {
  std::string copy_from, copy_to;  ///< a device-to-device copy of one buffer into another
  int line = 0;
};

/// An operation of the family (`[ops]`): the functor its name expressions use for OP, and the
/// identity the engine pads inputs with ("max" and "lowest" are the type's finite extremes).
struct op_spec {
  std::string name;      ///< "sum"
  std::string functor;   ///< "kl::sum<T>"
  std::string identity;  ///< "0", "max", "lowest", or a number
  int line = 0;
};

/// How a variant is launched: once with its grid (single), or on the input and then on its own
/// partial results until one value is left (passes: the header's tile, grid, bounds, output and
/// workspace keys say how; docs/families.md).
enum class launch_plan { single, passes };

/// A condition the axes' values must meet (`require`), e.g. "M * K < 2^31" for 32-bit indexing.
struct condition_spec {
  std::string text;
  int line = 0;
};

struct family_spec {
  std::string name;  ///< the folder's name
  std::string path;  ///< the family.toml
  std::string dir;   ///< its folder
  std::string text;  ///< the description as read (--watch compares it between rounds)
  std::string summary;
  /// The family plugin (`plugin`, include/kernlab/family_api.h): the file's path, found in the
  /// family's folder or a plugin folder when the description was read; "" for none.
  std::string plugin;
  int plugin_line = 0;
  std::vector<std::string> dtypes;
  /// What rows are measured against: "bandwidth", "compute" (FP32), "tensor" (16-bit tensor
  /// cores), "tf32" (TF32 tensor cores) or "fp64" (FP64 tensor cores); the word records carry
  /// (families/family.hpp).
  std::string roofline = "bandwidth";
  std::string bytes;  ///< expression; "" = every buffer read or written once
  std::string flops = "0";
  int bytes_line = 0, flops_line = 0;     ///< where they are written (0: not given)
  std::vector<axis_spec> axes;            ///< the size axes, in --shape order
  std::vector<real_axis_spec> real_axes;  ///< in the file's order
  std::vector<condition_spec>
  requires;  ///< over the axes; a shape that fails one is refused
  std::vector<buffer_spec> buffers;
  std::vector<op_spec> ops;  ///< empty: the family has none (--op does not apply)
  std::vector<arg_spec> args;
  launch_plan plan = launch_plan::single;
  std::vector<std::string> includes;  ///< headers included before every variant file
  std::uint64_t pad = 1;  ///< passes: the input is padded with the op's identity to a multiple
  /// What plugins get as sizes, expressions over the axes (and PADDED_N with plan passes); empty:
  /// the axes' values in order.
  std::vector<std::string> plugin_sizes;
  std::vector<std::string> block_dims, grid_dims;  ///< defaults for variants without their own
  int kernel_line = 0;
  reference_spec reference;
  compare_spec compare;  ///< both input modes, unless [compare.random] is given
  std::optional<compare_spec> compare_random;
  baseline_spec baseline;
  /// [pipeline]: the size axis `kernlab --pipeline` cuts into chunks ("" for none); every in and
  /// out buffer's count is that axis times a constant.
  std::string pipeline_axis;
  int pipeline_line = 0;

  /// The rule for an input mode ("exact" or "random").
  const compare_spec& compare_for(const std::string& input_mode) const {
    return input_mode == "random" && compare_random ? *compare_random : compare;
  }
  /// Whether the reference writes magnitudes (a rule of either mode is `bound`): then it gets one
  /// more double* per out buffer, after the [kernel] args.
  bool reference_magnitudes() const {
    return compare.rule == "bound" || (compare_random && compare_random->rule == "bound");
  }

  const buffer_spec* buffer(const std::string& name) const;
  const op_spec* op(const std::string& name) const;
};

/// Parses family.toml's text; `path` names it in errors, `dir` resolves the files it names (the
/// reference's source is read from there). A family plugin is looked for in `dir`, then in
/// `plugin_dirs`. Throws metadata_error ("family.toml:LINE: ...").
family_spec parse_family_spec(const std::string& text, const std::string& path,
                              const std::string& dir, const std::string& name,
                              const std::vector<std::string>& plugin_dirs = {});

/// Reads <dir>/family.toml and the files it names. Throws metadata_error.
family_spec load_family_spec(const std::string& dir,
                             const std::vector<std::string>& plugin_dirs = {});

/// The C++ type of a dtype name ("float32" -> "float").
std::string cxx_type_of(const std::string& dtype);

/// The names expressions may not give to an axis or a param.
bool is_reserved_name(const std::string& name);

}  // namespace kl
