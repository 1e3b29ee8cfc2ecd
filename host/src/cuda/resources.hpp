// Owners for driver handles: one type per handle, movable, never copyable, and destructors that
// never throw (a failed release during unwinding must not hide the error that caused it).
#pragma once

#include "cuda/driver.hpp"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <utility>

namespace kl::cuda {

/// Marks the process as blocked on the GPU for the scope's life. A worker's heartbeat reports
/// how long it has been waiting, which is what the watchdog judges: a kernel that never finishes
/// shows as a wait that only grows, while CPU work (making inputs) does not count.
class wait_scope {
 public:
  wait_scope();
  ~wait_scope();
  wait_scope(const wait_scope&) = delete;
  wait_scope& operator=(const wait_scope&) = delete;
  /// Milliseconds the current wait has lasted; 0 when nothing waits on the GPU.
  static double waiting_ms();

 private:
  bool outermost_ = false;
};

/// cuCtxSynchronize, as a wait the watchdog can see.
void synchronize_context();

/// Retains a device's primary context (the one the CUDA runtime, and so plugins, also use) and
/// makes it current on the calling thread.
class primary_context {
 public:
  explicit primary_context(CUdevice device);
  ~primary_context();
  primary_context(const primary_context&) = delete;
  primary_context& operator=(const primary_context&) = delete;
  CUcontext get() const { return ctx_; }

 private:
  CUdevice device_;
  CUcontext ctx_ = nullptr;
};

/// Device memory of a fixed size.
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t bytes);
  ~device_buffer() { reset(); }
  device_buffer(device_buffer&& o) noexcept { *this = std::move(o); }
  device_buffer& operator=(device_buffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, 0);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  CUdeviceptr get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  void* as_ptr() const { return reinterpret_cast<void*>(ptr_); }
  void upload(const void* host, std::size_t bytes, std::size_t offset = 0);
  void download(void* host, std::size_t bytes, std::size_t offset = 0) const;

 private:
  void reset() noexcept;
  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

/// Page-locked host memory: what lets a copy run asynchronously, and at the link's full speed
/// (a copy into pageable memory goes through a driver bounce buffer at a fraction of it).
class pinned_buffer {
 public:
  explicit pinned_buffer(std::size_t bytes);
  ~pinned_buffer();
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;
  std::uint8_t* data() const { return static_cast<std::uint8_t*>(ptr_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

class stream {
 public:
  stream();
  ~stream();
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;
  CUstream get() const { return s_; }
  void synchronize() const;

 private:
  CUstream s_ = nullptr;
};

class event {
 public:
  event();
  ~event();
  event(const event&) = delete;
  event& operator=(const event&) = delete;
  CUevent get() const { return e_; }
  void record(CUstream s);
  /// Milliseconds from `start` to this event; both must have completed.
  float elapsed_since(const event& start) const;
  void synchronize() const;

 private:
  CUevent e_ = nullptr;
};

/// The work one call enqueues on a stream, captured once and launched as a whole: one launch
/// command however many kernels, copies and memsets it holds, each dependency resolved on the
/// GPU. What cannot be captured (an API that stream capture refuses) leaves no graph: ok() is
/// false and why() says what failed; the stream is usable again either way.
class graph {
 public:
  template <typename Enqueue>
  static graph capture(CUstream s, Enqueue&& enqueue) {
    graph g;
    g.begin(s);
    std::string failure;
    try {
      enqueue(s);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    g.end(s, failure);
    return g;
  }
  graph() = default;
  ~graph() { reset(); }
  graph(graph&& o) noexcept { *this = std::move(o); }
  graph& operator=(graph&& o) noexcept {
    if (this != &o) {
      reset();
      graph_ = std::exchange(o.graph_, nullptr);
      exec_ = std::exchange(o.exec_, nullptr);
      why_ = std::move(o.why_);
    }
    return *this;
  }
  graph(const graph&) = delete;
  graph& operator=(const graph&) = delete;
  bool ok() const { return exec_ != nullptr; }
  const std::string& why() const { return why_; }
  /// Enqueues the whole captured work on `s`.
  void launch(CUstream s) const;

 private:
  void begin(CUstream s);
  void end(CUstream s, const std::string& failure);
  void reset() noexcept;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
  std::string why_;
};

/// Lets `f` launch with `dynamic_bytes` of dynamic shared memory. A block's static and dynamic
/// shared memory together may exceed 48 KiB only when asked for (up to the device's opt-in limit:
/// 227 KiB on Hopper), so above that the function's limit is raised; CUDA_SUCCESS when nothing
/// needed asking, else what the driver answered (past the opt-in limit: an error).
CUresult allow_dynamic_shared(CUfunction f, std::size_t dynamic_bytes);

/// A loaded CUBIN image.
class module {
 public:
  explicit module(const std::string& image);
  ~module();
  module(const module&) = delete;
  module& operator=(const module&) = delete;
  CUfunction function(const std::string& lowered_name) const;

 private:
  CUmodule m_ = nullptr;
};

}  // namespace kl::cuda
