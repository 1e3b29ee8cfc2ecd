// An NVTX range (NVIDIA Tools Extension, header-only from the toolkit): a name a profiler sees
// around the launches made inside it. --profile pushes one around each row's profiled run, and
// Nsight Compute profiles only the kernels inside such ranges. Without a tool attached, pushing
// and popping cost a function call each and do nothing.
#pragma once

#include <string>

namespace kl::cuda {

/// Pushes a range on the calling thread's NVTX stack; pops it when it goes.
class nvtx_range {
 public:
  explicit nvtx_range(const std::string& name);
  ~nvtx_range();
  nvtx_range(const nvtx_range&) = delete;
  nvtx_range& operator=(const nvtx_range&) = delete;
};

}  // namespace kl::cuda
