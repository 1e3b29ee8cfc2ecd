#include "cuda/resources.hpp"

#include <atomic>
#include <chrono>

namespace kl::cuda {
namespace {
const driver& drv() { return driver::get(); }

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
// When the current wait began (0: none). Only one thread waits on the GPU at a time.
std::atomic<std::int64_t> wait_began_ns{0};
}  // namespace

wait_scope::wait_scope() {
  std::int64_t expected = 0;
  outermost_ = wait_began_ns.compare_exchange_strong(expected, now_ns());
}
wait_scope::~wait_scope() {
  if (outermost_) wait_began_ns.store(0);
}
double wait_scope::waiting_ms() {
  const std::int64_t began = wait_began_ns.load();
  return began == 0 ? 0.0 : static_cast<double>(now_ns() - began) / 1e6;
}

void synchronize_context() {
  wait_scope waiting;
  KL_CU(cuCtxSynchronize());
}

primary_context::primary_context(CUdevice device) : device_(device) {
  KL_CU(cuDevicePrimaryCtxRetain(&ctx_, device_));
  try {
    KL_CU(cuCtxSetCurrent(ctx_));
  } catch (...) {
    drv().cuDevicePrimaryCtxRelease(device_);
    throw;
  }
}
primary_context::~primary_context() { drv().cuDevicePrimaryCtxRelease(device_); }

pinned_buffer::pinned_buffer(std::size_t bytes) : bytes_(bytes) {
  KL_CU(cuMemHostAlloc(&ptr_, bytes == 0 ? 1 : bytes, 0));
}
pinned_buffer::~pinned_buffer() {
  if (ptr_) drv().cuMemFreeHost(ptr_);
}

device_buffer::device_buffer(std::size_t bytes) : bytes_(bytes) {
  // A zero-byte request still gets a valid, distinct allocation so that pointers stay usable.
  KL_CU(cuMemAlloc(&ptr_, bytes == 0 ? 1 : bytes));
}
void device_buffer::reset() noexcept {
  if (ptr_ != 0) drv().cuMemFree(ptr_);
  ptr_ = 0;
  bytes_ = 0;
}
void device_buffer::upload(const void* host, std::size_t bytes, std::size_t offset) {
  if (bytes == 0) return;
  KL_CU(cuMemcpyHtoD(ptr_ + offset, host, bytes));
}
void device_buffer::download(void* host, std::size_t bytes, std::size_t offset) const {
  if (bytes == 0) return;
  wait_scope waiting;  // a synchronous copy waits for the kernels before it
  KL_CU(cuMemcpyDtoH(host, ptr_ + offset, bytes));
}

stream::stream() { KL_CU(cuStreamCreate(&s_, CU_STREAM_NON_BLOCKING)); }
stream::~stream() { drv().cuStreamDestroy(s_); }
void stream::synchronize() const {
  wait_scope waiting;
  KL_CU(cuStreamSynchronize(s_));
}

event::event() { KL_CU(cuEventCreate(&e_, CU_EVENT_DEFAULT)); }
event::~event() { drv().cuEventDestroy(e_); }
void event::record(CUstream s) { KL_CU(cuEventRecord(e_, s)); }
void event::synchronize() const {
  wait_scope waiting;
  KL_CU(cuEventSynchronize(e_));
}
float event::elapsed_since(const event& start) const {
  float ms = 0;
  KL_CU(cuEventElapsedTime(&ms, start.e_, e_));
  return ms;
}

void graph::begin(CUstream s) {
  // Thread-local: a call that would touch other work from this thread during the capture (the
  // legacy stream, a synchronous copy) is refused, so the capture fails instead of reordering.
  const CUresult rc = drv().cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  if (rc != CUDA_SUCCESS) why_ = "cuStreamBeginCapture failed: " + describe(rc);
}

void graph::end(CUstream s, const std::string& failure) {
  if (!why_.empty()) return;  // the capture never began
  CUgraph captured = nullptr;
  const CUresult rc = drv().cuStreamEndCapture(s, &captured);
  graph_ = captured;
  if (!failure.empty()) {
    why_ = failure;
  } else if (rc != CUDA_SUCCESS) {
    why_ = "the stream capture failed: " + describe(rc);
  } else if (const CUresult in = drv().cuGraphInstantiateWithFlags(&exec_, graph_, 0);
             in != CUDA_SUCCESS) {
    exec_ = nullptr;
    why_ = "cuGraphInstantiateWithFlags failed: " + describe(in);
  } else {
    KL_CU(cuGraphUpload(exec_, s));
  }
}

void graph::launch(CUstream s) const { KL_CU(cuGraphLaunch(exec_, s)); }

void graph::reset() noexcept {
  if (exec_) drv().cuGraphExecDestroy(exec_);
  if (graph_) drv().cuGraphDestroy(graph_);
  exec_ = nullptr;
  graph_ = nullptr;
}

module::module(const std::string& image) { KL_CU(cuModuleLoadData(&m_, image.data())); }
module::~module() { drv().cuModuleUnload(m_); }
CUfunction module::function(const std::string& lowered_name) const {
  CUfunction f = nullptr;
  KL_CU(cuModuleGetFunction(&f, m_, lowered_name.c_str()));
  return f;
}

CUresult allow_dynamic_shared(CUfunction f, std::size_t dynamic_bytes) {
  int static_bytes = 0;
  const auto& d = driver::get();
  if (const CUresult r =
          d.cuFuncGetAttribute(&static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
      r != CUDA_SUCCESS)
    return r;
  if (dynamic_bytes + static_cast<std::size_t>(static_bytes) <= 48 * 1024) return CUDA_SUCCESS;
  return d.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                              static_cast<int>(dynamic_bytes));
}

}  // namespace kl::cuda
