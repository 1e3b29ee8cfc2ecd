#include "cuda/nvtx.hpp"

// NVTX 3 is header-only: the first call looks for a tool's injection library (named by the
// profiler in NVTX_INJECTION64_PATH) with dlopen, and finds none when no profiler runs kernlab.
#include <nvtx3/nvToolsExt.h>

namespace kl::cuda {

nvtx_range::nvtx_range(const std::string& name) { nvtxRangePushA(name.c_str()); }

nvtx_range::~nvtx_range() { nvtxRangePop(); }

}  // namespace kl::cuda
