// The variant descriptor: plain data that says everything kernlab knows about one variant, from a
// kernel source file or from a plugin. It is printed by --list and written into every result.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace kl {

/// Where a variant comes from: a kernel file, a plugin, or kernlab itself (a data family's
/// device-to-device copy baseline, origin_path its family.toml).
enum class origin_kind { source, plugin, builtin };
/// How many blocks a pass launches: one per tile, or as many as are resident at once.
enum class grid_kind { tiles, resident };
/// Whether the driver pads the input with the identity, or the kernel checks `n` itself.
enum class bounds_kind { padded, checked };
/// What a launch produces: one partial result per block (the driver relaunches on them), or the
/// final result, because the kernel finishes the reduction itself (one launch).
enum class output_kind { per_block, single };

/// A tensor map (Hopper's tensor memory accelerator, TMA) that the host encodes for a launch and
/// passes after the family's arguments, as a `const __grid_constant__` 128-byte parameter
/// (header key `tensor_maps:`, docs/kernel_contract.md): buffer `buffer` seen as a row-major
/// array of `dims` (outermost first), copied in boxes of `box` elements, swizzled in shared
/// memory by `swizzle` bytes (0: none, 32, 64 or 128). Expressions over the axes, BLOCK, TSIZE and
/// the params. Elements outside the array read as zero.
struct tensor_map_spec {
  std::string buffer;
  std::vector<std::string> dims;
  std::vector<std::string> box;
  unsigned swizzle = 0;
  bool operator==(const tensor_map_spec& o) const {
    return buffer == o.buffer && dims == o.dims && box == o.box && swizzle == o.swizzle;
  }
};

/// A device buffer of the variant's own (header key `scratch:`, docs/kernel_contract.md), e.g.
/// `T Ap[M * ceil_div(K, 8) * 8]`: `count` elements of `type` (`T` or a dtype name), every byte
/// zeroed before every launch inside the timed region, its pointer passed after the family's
/// arguments (before the tensor maps, which may name it). For what a kernel must stage where its
/// launch alone cannot: an aligned copy of unaligned rows, a grid barrier's counter.
struct scratch_spec {
  std::string type;
  std::string name;
  std::string count;  ///< expression over the axes, BLOCK, TSIZE and the params
  bool operator==(const scratch_spec& o) const {
    return type == o.type && name == o.name && count == o.count;
  }
};

/// A preprocessor macro of a variant's compile (header key `defines:`): a tunable (no value: the
/// point's value, `-DNAME=<value>`) or a whole-number constant, the same for every point.
struct define_spec {
  std::string name;
  std::optional<std::int64_t> value;
  bool operator==(const define_spec& o) const { return name == o.name && value == o.value; }
};

struct variant_descriptor {
  std::string family;
  std::string name;  ///< short name: the file stem, or the plugin's name for it
  origin_kind origin = origin_kind::source;
  std::string origin_path;       ///< the .cu file or the plugin .so
  std::string entry;             ///< template-id with placeholders (source variants)
  std::vector<unsigned> blocks;  ///< supported block sizes; empty: the block size does not apply
  std::string tile;              ///< expression: elements one block consumes
  grid_kind grid = grid_kind::tiles;
  bounds_kind bounds = bounds_kind::padded;
  std::string shared_bytes = "0";  ///< expression: dynamic shared memory per block
  /// An architecture-specific compile target ("sm_90a": wgmma, setmaxnreg, TMA's multicast) the
  /// file is compiled for instead of the GPU's own; "" for the GPU's. Its rows run only on a GPU
  /// of exactly that compute capability and are skipped with the reason elsewhere.
  std::string target;
  /// Preprocessor macros of the file's compile (`defines:`), so that `#if NAME == 1` sees them.
  std::vector<define_spec> defines;
  output_kind output = output_kind::per_block;
  std::string workspace;            ///< expression: bytes of zeroed scratch per launch; "" for none
  std::vector<std::string> dtypes;  ///< empty: every dtype of the family
  std::vector<std::string> ops;     ///< empty: every op of the family
  std::string summary;
  int order = -1;            ///< place in the family's sequence; -1: after those that have one
  bool is_baseline = false;  ///< a vendor-library baseline
  /// Compile-time parameters, in order: name and expression ("TILE", "sqrt(BLOCK)"). Each is a
  /// placeholder in `entry` and a variable of the expressions after it.
  std::vector<std::pair<std::string, std::string>> params;
  /// Expressions for the block's and the grid's x, y (z) dimensions; empty block_dims: BLOCK x 1,
  /// empty grid_dims: the family plans the grid (reduce's `tile` and `grid`).
  std::vector<std::string> block_dims;
  std::vector<std::string> grid_dims;
  /// Tensor maps passed after the family's arguments, in order (`tensor_maps:`).
  std::vector<tensor_map_spec> tensor_maps;
  /// Scratch buffers passed after the family's arguments, in order (`scratch:`).
  std::vector<scratch_spec> scratch;
  /// Tuning parameters (`tune:`), each with its values, and the conditions a point must meet
  /// (`require:`). The registry lists one variant per point (spec/metadata.hpp,
  /// expand_tunables), whose params start with the point's values; a point's own tunables are
  /// empty, and so are its requirements unless they depend on the dtype (its blocks are those
  /// the requirements allow at some dtype).
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> tunables;
  std::vector<std::string>
  requires;
  /// Of a point of a tunable file: the file's stem ("reduce_unrolling"), which selects every
  /// point of it; empty for any other variant (a plain file, a plugin, a builtin).
  std::string tunable_file;
  /// Of a point: its tunables' values in the header's `tune:` order (BLOCK is not one of them).
  std::vector<std::pair<std::string, std::int64_t>> point;
  /// Of a point: named by the header's `points:` ("reduce_unrolling4"), so it is a variant of
  /// the family's sequence like a plain file's; an unnamed point is "file[NAME=v;NAME=v]".
  bool named_point = false;

  /// "reduce.reduce5"
  std::string qualified_name() const { return family + "." + name; }
  /// A point of a tunable file (named or not).
  bool is_point() const { return !tunable_file.empty(); }
  /// What a selection of everything ("all", "reduce.*", a --family alone) takes: every variant
  /// but the unnamed points of tunable files, which are for `kernlab tune` or a pattern naming
  /// their file.
  bool in_default_selection() const { return !is_point() || named_point; }
  /// Of a point whose `require:` holds at some of its blocks for some dtypes only (it sees
  /// TSIZE and DTYPE): the first condition that fails at `block` and `dtype`; "" when they all
  /// hold, as they do for every other variant.
  std::string unmet_requirement(unsigned block, const std::string& dtype) const;
  bool supports_block(unsigned block) const;
  bool supports_dtype(const std::string& dtype) const;
  bool supports_op(const std::string& op) const;
  /// "source kernels_src/reduce/reduce5.cu" or "plugin build/plugins/kernlab_cub.so"
  std::string origin_text() const;
};

const char* to_string(origin_kind);
const char* to_string(grid_kind);
const char* to_string(bounds_kind);
const char* to_string(output_kind);
std::ostream& operator<<(std::ostream&, const variant_descriptor&);
bool operator==(const variant_descriptor&, const variant_descriptor&);

}  // namespace kl
