// reduce.cub: cub::DeviceReduce::Sum / Min / Max from the toolkit's CCCL, the vendor-library
// baseline that every reduce variant is compared with.
//
// CUB needs device scratch memory ("temporary storage"). kernlab owns device memory, so
// workspace_size() asks CUB how much (a call with d_temp_storage == nullptr) and run() hands
// kernlab's workspace back to CUB. Nothing else is set up, so there is no prepare().
#include <kernlab/plugin_api.h>

#include "kernlab_plugin_cuda.h"

#include <cub/device/device_reduce.cuh>

#include <cstdint>

namespace {

using namespace kernlab::plugin;

#define KERNLAB_STRINGIFY_(x) #x
#define KERNLAB_STRINGIFY(x) KERNLAB_STRINGIFY_(x)

/// The CUB entry point for an op, for messages.
const char* cub_call_name(reduce_op op) {
  switch (op) {
    case reduce_op::sum: return "cub::DeviceReduce::Sum";
    case reduce_op::min: return "cub::DeviceReduce::Min";
    case reduce_op::max: return "cub::DeviceReduce::Max";
  }
  return "cub::DeviceReduce";
}

/// One CUB call for the configuration's dtype and op. With temp == nullptr CUB only writes the
/// temporary storage it needs into temp_bytes and launches nothing.
///
/// int32 sums go through `unsigned int`: the family defines them modulo 2^32, which unsigned
/// addition gives with the same bits and without signed overflow (undefined behaviour).
/// Min and Max start from numeric_limits<T>::max() / lowest(), the family's identities.
template <typename NumItems>
cudaError_t cub_reduce(void* temp, size_t& temp_bytes, const reduce_config& c, NumItems n,
                       cudaStream_t stream) {
  if (c.type == dtype::int32) {
    const auto* in = static_cast<const int*>(c.in);
    auto* out = static_cast<int*>(c.out);
    switch (c.op) {
      case reduce_op::sum:
        return cub::DeviceReduce::Sum(temp, temp_bytes, reinterpret_cast<const unsigned*>(in),
                                      reinterpret_cast<unsigned*>(out), n, stream);
      case reduce_op::min: return cub::DeviceReduce::Min(temp, temp_bytes, in, out, n, stream);
      case reduce_op::max: return cub::DeviceReduce::Max(temp, temp_bytes, in, out, n, stream);
    }
  } else {
    const auto* in = static_cast<const float*>(c.in);
    auto* out = static_cast<float*>(c.out);
    switch (c.op) {
      case reduce_op::sum: return cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n, stream);
      case reduce_op::min: return cub::DeviceReduce::Min(temp, temp_bytes, in, out, n, stream);
      case reduce_op::max: return cub::DeviceReduce::Max(temp, temp_bytes, in, out, n, stream);
    }
  }
  return cudaErrorInvalidValue;
}

/// CUB picks its offset type from the type of num_items: 32-bit offsets (its fast path) for a
/// 4-byte count, 64-bit ones otherwise. Use 32 bits whenever n fits, as a caller would. The
/// same choice is made in workspace_size() and run(), so the storage sizes agree.
cudaError_t cub_reduce(void* temp, size_t& temp_bytes, const reduce_config& c,
                       cudaStream_t stream) {
  if (c.n <= UINT32_MAX) {
    return cub_reduce(temp, temp_bytes, c, static_cast<std::uint32_t>(c.n), stream);
  }
  return cub_reduce(temp, temp_bytes, c, static_cast<std::uint64_t>(c.n), stream);
}

int cub_workspace_size(const kl_launch_args* args, uint64_t* bytes, char* error, size_t capacity) {
  return guarded("cub workspace_size", error, capacity, [&]() -> int {
    reduce_config c;
    if (const int status = parse_reduce(args, /*need_buffers=*/false, &c, error, capacity)) {
      return status;
    }
    if (bytes == nullptr) {
      set_error(error, capacity, "cub workspace_size: bytes is NULL");
      return KL_STATUS_ERROR;
    }
    size_t temp_bytes = 0;
    if (!cuda_ok(cub_reduce(nullptr, temp_bytes, c, to_stream(args->stream)), cub_call_name(c.op),
                 error, capacity)) {
      return KL_STATUS_ERROR;
    }
    *bytes = temp_bytes;
    return KL_STATUS_OK;
  });
}

int cub_run(const kl_launch_args* args, char* error, size_t capacity) {
  return guarded("cub run", error, capacity, [&]() -> int {
    reduce_config c;
    if (const int status = parse_reduce(args, /*need_buffers=*/true, &c, error, capacity)) {
      return status;
    }
    // With a NULL temporary storage CUB only sizes it and returns success without reducing:
    // refuse instead of silently leaving the output untouched.
    if (args->workspace == nullptr) {
      set_error(error, capacity, "cub run: no workspace (workspace_size() asks for one)");
      return KL_STATUS_ERROR;
    }
    // CUB itself checks that the storage given is large enough (cudaErrorInvalidValue if not).
    size_t temp_bytes = args->workspace_bytes;
    cudaError_t status = cub_reduce(args->workspace, temp_bytes, c, to_stream(args->stream));
    // CUB only peeks at launch errors; take (and clear) the last one so that a failed launch is
    // reported here, not by the next call.
    const cudaError_t last = cudaGetLastError();
    if (status == cudaSuccess) status = last;
    return cuda_ok(status, cub_call_name(c.op), error, capacity) ? KL_STATUS_OK : KL_STATUS_ERROR;
  });
}

const char* const kDtypes[] = {"int32", "float32"};
const char* const kOps[] = {"sum", "min", "max"};

const kl_variant_desc kVariants[] = {{
    /*family=*/"reduce",
    /*name=*/"cub",
    /*summary=*/
    "cub::DeviceReduce::Sum/Min/Max, the vendor-library baseline (CUB_VERSION " KERNLAB_STRINGIFY(
        CUB_VERSION) ")",
    /*block_sizes=*/nullptr,  // CUB chooses its own launch configuration
    /*num_block_sizes=*/0,
    /*dtypes=*/kDtypes,
    /*num_dtypes=*/2,
    /*ops=*/kOps,
    /*num_ops=*/3,
    /*is_baseline=*/1,
    /*workspace_size=*/cub_workspace_size,
    /*prepare=*/nullptr,
    /*run=*/cub_run,
}};

const kl_plugin kPlugin = {KERNLAB_PLUGIN_ABI_VERSION, "cub", kVariants, 1, nullptr};

}  // namespace

KERNLAB_PLUGIN_EXPORT const kl_plugin* kernlab_plugin(void) { return &kPlugin; }
