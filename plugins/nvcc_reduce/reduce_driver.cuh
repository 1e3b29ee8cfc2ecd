// The host-side driver for reduce kernels compiled ahead of time by nvcc. It does what kernlab's
// own driver does for the NVRTC-compiled twins of the same files, so that the two compare fairly:
//
//   pass 0 reads the input: one block per tile (`grid: tiles`), or at most as many blocks as can
//     be resident on the device (`grid: resident`: SM count x the occupancy calculator's blocks
//     per SM, never more than the tiles). With `bounds: padded` the kernel reads whole tiles of
//     the input, which the ABI pads with the op's identity (sizes[1]); `n` is always the true n.
//   pass k > 0 relaunches the same kernel on the partials of pass k-1, until one block is left;
//     the last pass writes outputs[0].
//
// Each non-final pass writes into its own buffer inside kernlab's workspace. A buffer holds a
// whole number of tiles and is filled with the identity once, in prepare(); every run writes the
// same prefix of it, so the padding read by the next pass stays the identity and run() launches
// nothing but the kernels.
#pragma once

#include <kernlab/plugin_api.h>
#include <kernlab/reduce.cuh>

#include "kernlab_plugin_cuda.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace kernlab::nvcc_reduce {

using plugin::reduce_config;

/// `grid:` in the kernel file's metadata (docs/kernel_contract.md).
enum class grid_mode { tiles, resident };
/// `bounds:` in the kernel file's metadata.
enum class bounds_mode { padded, checked };

/// The reduce kernel signature fixed by the contract.
template <typename T>
using kernel_fn = void (*)(const T*, T*, unsigned int);

/// The kernels take n as unsigned int and index with it; the kernel files assume n <= 2^31.
constexpr uint64_t kMaxN = uint64_t{1} << 31;
/// Passes needed are log_tile(n) + 1 <= 4 for tile >= 256 and n <= 2^31.
constexpr unsigned kMaxPasses = 8;
/// Partial buffers start on this boundary in the workspace (cudaMalloc's own alignment).
constexpr uint64_t kBufferAlignment = 256;
/// Devices whose resident grid size is cached.
constexpr int kMaxDevices = 64;

/// One kernel launch.
struct pass {
  uint64_t n = 0;             ///< valid elements read
  uint32_t grid = 0;          ///< blocks; block b writes partial b
  uint64_t out_offset = 0;    ///< non-final passes: byte offset of the output buffer
  uint64_t out_elements = 0;  ///< non-final passes: buffer length, a whole number of tiles
};

/// Every pass of one reduction and the workspace they need.
struct plan {
  pass passes[kMaxPasses];
  unsigned num_passes = 0;
  uint64_t workspace_bytes = 0;
};

/// Plans the passes for n elements; resident_limit == 0 means one block per tile.
inline bool make_plan(uint64_t n, uint64_t tile, uint64_t resident_limit, uint64_t element_bytes,
                      plan* p) {
  *p = plan{};
  uint64_t count = n;
  for (;;) {
    if (p->num_passes == kMaxPasses) return false;
    const uint64_t tiles = (count + tile - 1) / tile;
    const uint64_t grid = resident_limit != 0 ? std::min(tiles, resident_limit) : tiles;
    pass& current = p->passes[p->num_passes++];
    current.n = count;
    current.grid = static_cast<uint32_t>(grid);
    if (grid == 1) return true;  // the final pass writes outputs[0]
    current.out_elements = (grid + tile - 1) / tile * tile;
    current.out_offset = p->workspace_bytes;
    const uint64_t end = current.out_offset + current.out_elements * element_bytes;
    p->workspace_bytes = (end + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
    count = grid;
  }
}

namespace {

/// Fills a partial buffer with the op's identity (only in prepare(), never timed).
template <typename T, typename OP>
__global__ void fill_identity(T* data, unsigned long long count) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i =
           static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride) {
    data[i] = OP::identity();
  }
}

}  // namespace

/// The driver for one instantiation. Traits describes the kernel file:
///   static constexpr const char* name;            variant name, e.g. "reduce5_nvcc"
///   static constexpr grid_mode grid;  static constexpr bounds_mode bounds;
///   static constexpr unsigned tile(unsigned block);
///   template <unsigned BLOCK, class T, class OP> static kernel_fn<T> kernel();
///   template <unsigned BLOCK, class T, class OP>
///   static void launch(unsigned grid, cudaStream_t, const T* in, T* out, unsigned n);
template <class Traits, unsigned BLOCK, typename T, typename OP>
struct driver {
  static constexpr uint64_t kTile = Traits::tile(BLOCK);

  /// "reduce5_nvcc<256, int32, sum>", for messages.
  static void describe(const reduce_config& c, char* out, size_t capacity) {
    std::snprintf(out, capacity, "%s<%u, %s, %s>", Traits::name, BLOCK, plugin::to_string(c.type),
                  plugin::to_string(c.op));
  }

  /// SM count x resident blocks per SM for this kernel at BLOCK threads and no dynamic shared
  /// memory, on the current device. Cached per device: run() is timed and needs it every time.
  static int resident_limit(const char* what, uint64_t* limit, char* error, size_t capacity) {
    static std::atomic<uint64_t> cache[kMaxDevices] = {};  // 0: not computed yet
    int device = 0;
    if (!plugin::cuda_ok(cudaGetDevice(&device), "cudaGetDevice", error, capacity)) {
      return KL_STATUS_ERROR;
    }
    const bool cacheable = device >= 0 && device < kMaxDevices;
    if (cacheable) {
      *limit = cache[device].load(std::memory_order_relaxed);
      if (*limit != 0) return KL_STATUS_OK;
    }
    int sms = 0;
    int blocks_per_sm = 0;
    if (!plugin::cuda_ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                         "cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount)", error,
                         capacity) ||
        !plugin::cuda_ok(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                             &blocks_per_sm, Traits::template kernel<BLOCK, T, OP>(), BLOCK, 0),
                         "cudaOccupancyMaxActiveBlocksPerMultiprocessor", error, capacity)) {
      return KL_STATUS_ERROR;
    }
    if (sms <= 0 || blocks_per_sm <= 0) {
      plugin::set_error(error, capacity, "%s: no block of %u threads fits on an SM", what, BLOCK);
      return KL_STATUS_UNSUPPORTED;
    }
    *limit = static_cast<uint64_t>(sms) * static_cast<uint64_t>(blocks_per_sm);
    if (cacheable) cache[device].store(*limit, std::memory_order_relaxed);
    return KL_STATUS_OK;
  }

  /// Checks n and the input padding and plans the passes.
  static int make(const reduce_config& c, plan* p, char* error, size_t capacity) {
    char what[96];
    describe(c, what, sizeof what);
    if (c.n == 0 || c.n > kMaxN) {
      plugin::set_error(error, capacity, "%s: n = %llu is not offered (1 <= n <= 2^31)", what,
                        static_cast<unsigned long long>(c.n));
      return KL_STATUS_UNSUPPORTED;
    }
    const uint64_t tiles = (c.n + kTile - 1) / kTile;
    if (Traits::bounds == bounds_mode::padded && c.padded_n < tiles * kTile) {
      plugin::set_error(error, capacity,
                        "%s reads whole tiles of %llu elements: the input must be padded to %llu "
                        "elements, sizes[1] (the padded length) %s %llu",
                        what, static_cast<unsigned long long>(kTile),
                        static_cast<unsigned long long>(tiles * kTile),
                        c.has_padded_n ? "says" : "is missing, n is",
                        static_cast<unsigned long long>(c.padded_n));
      return KL_STATUS_ERROR;
    }
    uint64_t limit = 0;
    if (Traits::grid == grid_mode::resident) {
      if (const int status = resident_limit(what, &limit, error, capacity)) return status;
    }
    if (!make_plan(c.n, kTile, limit, sizeof(T), p)) {
      plugin::set_error(error, capacity, "%s: more than %u passes", what, kMaxPasses);
      return KL_STATUS_ERROR;
    }
    return KL_STATUS_OK;
  }

  /// make() plus a check that kernlab's workspace holds the partial buffers.
  static int make_checked(const kl_launch_args* args, const reduce_config& c, plan* p, char* error,
                          size_t capacity) {
    if (const int status = make(c, p, error, capacity)) return status;
    if (p->workspace_bytes != 0 &&
        (args->workspace == nullptr || args->workspace_bytes < p->workspace_bytes)) {
      char what[96];
      describe(c, what, sizeof what);
      plugin::set_error(error, capacity, "%s: needs a workspace of %llu bytes, got %llu at %p",
                        what, static_cast<unsigned long long>(p->workspace_bytes),
                        static_cast<unsigned long long>(args->workspace_bytes), args->workspace);
      return KL_STATUS_ERROR;
    }
    return KL_STATUS_OK;
  }

  static T* buffer(const kl_launch_args* args, const pass& ps) {
    return reinterpret_cast<T*>(static_cast<char*>(args->workspace) + ps.out_offset);
  }

  static int workspace_size(const kl_launch_args*, const reduce_config& c, uint64_t* bytes,
                            char* error, size_t capacity) {
    plan p;
    if (const int status = make(c, &p, error, capacity)) return status;
    *bytes = p.workspace_bytes;
    return KL_STATUS_OK;
  }

  /// Fills every partial buffer with the identity and loads the kernel (lazy module loading
  /// would otherwise load it in the first run). Waits for the stream, so errors surface here.
  static int prepare(const kl_launch_args* args, const reduce_config& c, char* error,
                     size_t capacity) {
    plan p;
    if (const int status = make_checked(args, c, &p, error, capacity)) return status;
    const cudaStream_t stream = plugin::to_stream(args->stream);
    for (unsigned i = 0; i + 1 < p.num_passes; ++i) {
      const pass& ps = p.passes[i];
      const unsigned blocks =
          static_cast<unsigned>(std::min<uint64_t>((ps.out_elements + 255) / 256, 1024));
      fill_identity<T, OP><<<blocks, 256, 0, stream>>>(buffer(args, ps), ps.out_elements);
      if (!plugin::cuda_ok(cudaGetLastError(), "fill_identity launch", error, capacity)) {
        return KL_STATUS_ERROR;
      }
    }
    cudaFuncAttributes attributes{};
    if (!plugin::cuda_ok(
            cudaFuncGetAttributes(&attributes, Traits::template kernel<BLOCK, T, OP>()),
            "cudaFuncGetAttributes", error, capacity) ||
        !plugin::cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize after prepare",
                         error, capacity)) {
      return KL_STATUS_ERROR;
    }
    return KL_STATUS_OK;
  }

  /// Every pass, asynchronously on the stream; nothing but kernel launches.
  static int run(const kl_launch_args* args, const reduce_config& c, char* error, size_t capacity) {
    plan p;
    if (const int status = make_checked(args, c, &p, error, capacity)) return status;
    const cudaStream_t stream = plugin::to_stream(args->stream);
    const T* in = static_cast<const T*>(c.in);
    for (unsigned i = 0; i < p.num_passes; ++i) {
      const pass& ps = p.passes[i];
      T* out = i + 1 == p.num_passes ? static_cast<T*>(c.out) : buffer(args, ps);
      Traits::template launch<BLOCK, T, OP>(ps.grid, stream, in, out,
                                            static_cast<unsigned int>(ps.n));
      const cudaError_t status = cudaGetLastError();
      if (status != cudaSuccess) {
        char what[160];
        describe(c, what, sizeof what);
        const size_t used = std::strlen(what);
        std::snprintf(what + used, sizeof what - used, " pass %u launch (grid %u, n %llu)", i,
                      ps.grid, static_cast<unsigned long long>(ps.n));
        plugin::cuda_ok(status, what, error, capacity);
        return KL_STATUS_ERROR;
      }
      in = out;
    }
    return KL_STATUS_OK;
  }
};

/// Resolves (block size, dtype, op) to one driver instantiation and calls fn(driver{}).
template <class Traits, unsigned BLOCK, typename T, typename Fn>
int dispatch_op(const reduce_config& c, Fn& fn) {
  switch (c.op) {
    case plugin::reduce_op::sum: return fn(driver<Traits, BLOCK, T, kl::sum<T>>{});
    case plugin::reduce_op::min: return fn(driver<Traits, BLOCK, T, kl::min<T>>{});
    case plugin::reduce_op::max: return fn(driver<Traits, BLOCK, T, kl::max<T>>{});
  }
  return KL_STATUS_UNSUPPORTED;
}

template <class Traits, unsigned BLOCK, typename Fn>
int dispatch_type(const reduce_config& c, Fn& fn) {
  return c.type == plugin::dtype::int32 ? dispatch_op<Traits, BLOCK, int>(c, fn)
                                        : dispatch_op<Traits, BLOCK, float>(c, fn);
}

template <class Traits, typename Fn>
int dispatch(uint32_t block_size, const reduce_config& c, char* error, size_t capacity, Fn fn) {
  switch (block_size) {
    case 128: return dispatch_type<Traits, 128>(c, fn);
    case 256: return dispatch_type<Traits, 256>(c, fn);
    case 512: return dispatch_type<Traits, 512>(c, fn);
    case 1024: return dispatch_type<Traits, 1024>(c, fn);
    default:
      plugin::set_error(error, capacity, "%s: block size %u is not offered (128 256 512 1024)",
                        Traits::name, block_size);
      return KL_STATUS_UNSUPPORTED;
  }
}

/// The three C entry points of one variant, each wrapped so that no exception escapes.
template <class Traits>
struct variant {
  static int workspace_size(const kl_launch_args* args, uint64_t* bytes, char* error,
                            size_t capacity) {
    return plugin::guarded(Traits::name, error, capacity, [&]() -> int {
      reduce_config c;
      if (const int status = plugin::parse_reduce(args, false, &c, error, capacity)) {
        return status;
      }
      if (bytes == nullptr) {
        plugin::set_error(error, capacity, "%s workspace_size: bytes is NULL", Traits::name);
        return KL_STATUS_ERROR;
      }
      return dispatch<Traits>(args->block_size, c, error, capacity, [&](auto d) {
        return decltype(d)::workspace_size(args, c, bytes, error, capacity);
      });
    });
  }

  static int prepare(const kl_launch_args* args, char* error, size_t capacity) {
    return plugin::guarded(Traits::name, error, capacity, [&]() -> int {
      reduce_config c;
      if (const int status = plugin::parse_reduce(args, true, &c, error, capacity)) {
        return status;
      }
      return dispatch<Traits>(args->block_size, c, error, capacity, [&](auto d) {
        return decltype(d)::prepare(args, c, error, capacity);
      });
    });
  }

  static int run(const kl_launch_args* args, char* error, size_t capacity) {
    return plugin::guarded(Traits::name, error, capacity, [&]() -> int {
      reduce_config c;
      if (const int status = plugin::parse_reduce(args, true, &c, error, capacity)) {
        return status;
      }
      return dispatch<Traits>(args->block_size, c, error, capacity,
                              [&](auto d) { return decltype(d)::run(args, c, error, capacity); });
    });
  }
};

}  // namespace kernlab::nvcc_reduce
