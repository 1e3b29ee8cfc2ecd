// What a variant's run is made of: its launch dimensions, its compiled kernel (a source one or a
// plugin's), and the operation it binds to on a problem's buffers, validated and timed. The one
// virtual interface among the families' types: an operation is a single launch, a plugin call,
// a multi-pass plan or the copy baseline (families/operations.cpp).
#pragma once

#include <kernlab/plugin_api.h>

#include <cuda.h>

#include <stdexcept>
#include <string>

namespace kl {

/// A configuration a variant turns down when asked (a plugin's KL_STATUS_UNSUPPORTED): the row
/// is skipped with this message as the reason, not failed.
class not_supported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A source variant's launch at one block size and configuration: grid and block dimensions
/// from the header's `grid_dims` and `block_dims` (docs/kernel_contract.md).
struct launch_dims {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
};

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

}  // namespace kl
