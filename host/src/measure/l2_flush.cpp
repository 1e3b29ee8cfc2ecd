#include "measure/l2_flush.hpp"

#include "nvrtc/compiler.hpp"

#include <algorithm>
#include <stdexcept>

namespace kl {
namespace {

// Reads every 16-byte word once; the xor into `sink` under a condition that never holds keeps
// the compiler from dropping the loads.
const char* flush_source = R"(
extern "C" __global__ void kl_l2_read_flush(const int4* p, unsigned long long n, int* sink) {
  int acc = 0;
  for (unsigned long long i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < n;
       i += 1ull * gridDim.x * blockDim.x) {
    const int4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x13572468) *sink = acc;
}
extern "C" __global__ void kl_empty() {}
)";

}  // namespace

l2_flusher::l2_flusher(flush_mode mode, std::size_t l2_bytes, const std::string& arch)
    : mode_(mode) {
  nvrtc::compile_request req;
  req.source = flush_source;
  req.path = "kernlab_l2_flush.cu";
  req.arch = arch;
  req.name_expressions = {"kl_l2_read_flush", "kl_empty"};
  const auto result = nvrtc::compile(req);
  if (!result.ok) throw std::runtime_error("the L2 flush kernel does not compile:\n" + result.log);
  module_ = std::make_unique<cuda::module>(result.cubin);
  kernel_ = module_->function(result.lowered_names.at("kl_l2_read_flush"));
  empty_ = module_->function(result.lowered_names.at("kl_empty"));
  if (mode_ == flush_mode::none || l2_bytes == 0) {
    mode_ = flush_mode::none;
    return;
  }
  // Writes cover the L2 once; reads twice: the replacement policy is not strict LRU, so one pass
  // may leave some lines.
  bytes_ = mode_ == flush_mode::write ? l2_bytes : 2 * l2_bytes;
  relocate();
  if (mode_ == flush_mode::write) return;
  sink_ = cuda::device_buffer(4);
  int per_sm = 0, device = 0, sms = 0;
  KL_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_, 256, 0));
  KL_CU(cuDeviceGet(&device, 0));
  KL_CU(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device));
  grid_ = static_cast<unsigned>(std::max(1, per_sm * sms));
  cuda::synchronize_context();
}

l2_flusher::~l2_flusher() = default;

void l2_flusher::relocate() {
  if (mode_ == flush_mode::none) return;
  cuda::device_buffer fresh(bytes_);
  // A read flush reads bytes nobody writes again: set once, here.
  if (mode_ == flush_mode::read) KL_CU(cuMemsetD8Async(fresh.get(), 1, fresh.bytes(), nullptr));
  buffer_ = std::move(fresh);
  cuda::synchronize_context();
}

void l2_flusher::launch_empty(CUstream stream) {
  KL_CU(cuLaunchKernel(empty_, 1, 1, 1, 32, 1, 1, 0, stream, nullptr, nullptr));
}

void l2_flusher::flush(CUstream stream) {
  switch (mode_) {
    case flush_mode::none: return;
    case flush_mode::write:
      KL_CU(cuMemsetD8Async(buffer_.get(), 0, buffer_.bytes(), stream));
      return;
    case flush_mode::read: {
      CUdeviceptr p = buffer_.get(), sink = sink_.get();
      unsigned long long n = buffer_.bytes() / 16;
      void* args[] = {&p, &n, &sink};
      KL_CU(cuLaunchKernel(kernel_, grid_, 1, 1, 256, 1, 1, 0, stream, args, nullptr));
      return;
    }
  }
}

}  // namespace kl
