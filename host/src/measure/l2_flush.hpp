// Making the L2 cache cold before a sample, and the floor of what a timed launch can show.
//
// Writing a buffer the size of L2 (what nvbench does) evicts the inputs but leaves L2 full of
// dirty lines; the next sample then pays for writing them back to DRAM, which is no part of the
// kernel's work and weighs most on small inputs. Reading a clean buffer evicts the inputs and
// leaves nothing to write back. kernlab reads by default (a tiny kernel compiled with NVRTC);
// `write` keeps nvbench's method for comparison.
#pragma once

#include "cuda/resources.hpp"

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>

namespace kl {

enum class flush_mode { none, read, write };
flush_mode parse_flush_mode(const std::string& text);  ///< "none", "read", "write"
const char* to_string(flush_mode);

class l2_flusher {
 public:
  /// Prepares a buffer (twice the L2 for reads, the L2's size for writes) and, for reads, the
  /// kernel, compiled for `arch`. Needs a current context.
  l2_flusher(flush_mode mode, std::size_t l2_bytes, const std::string& arch);
  ~l2_flusher();
  l2_flusher(const l2_flusher&) = delete;
  l2_flusher& operator=(const l2_flusher&) = delete;

  /// Enqueues the flush on `stream` (outside the timed region).
  void flush(CUstream stream);
  /// Makes the flush buffer anew while the old one is held, so that it lands elsewhere in device
  /// memory: another placement (timing.hpp).
  void relocate();
  /// Enqueues an empty kernel: timed like a variant, it is the floor of what any launch can
  /// measure with this method (launch latency, event resolution).
  void launch_empty(CUstream stream);
  flush_mode mode() const { return mode_; }

 private:
  flush_mode mode_;
  cuda::device_buffer buffer_, sink_;
  std::unique_ptr<cuda::module> module_;
  CUfunction kernel_ = nullptr;
  CUfunction empty_ = nullptr;
  unsigned grid_ = 0;
  std::size_t bytes_ = 0;  // the flush buffer's size
};

}  // namespace kl
