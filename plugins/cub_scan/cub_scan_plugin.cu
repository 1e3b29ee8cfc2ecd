// scan.cub: cub::DeviceScan::InclusiveSum from the toolkit's CCCL, the vendor-library baseline of
// the scan family (kernels_src/scan/family.toml): int32 and float32, any n.
//
// The scan family is described as data, so kernlab passes a plugin the family's `in` buffers as
// inputs, its `out` buffers as outputs (in [[buffers]] order) and its axes' values as sizes
// (docs/families.md, "[baseline]"): inputs[0] = in (n elements), outputs[0] = out (n elements),
// sizes[0] = N. The family's workspace buffer is not passed; it is zeroed before every launch of
// every row, this one's too, so the rows pay the same for it.
//
// CUB needs device scratch memory ("temporary storage"): workspace_size() asks CUB how much (a
// call with d_temp_storage == nullptr launches nothing) and kernlab allocates it once per
// configuration, outside the timed region; run() hands it back to CUB. CUB's scan itself is two
// launches, an initialisation of its tile states in that storage and the single-pass scan.
#include <kernlab/plugin_api.h>

#include "kernlab_plugin_cuda.h"

#include <cub/device/device_scan.cuh>

#include <cstdint>

namespace {

using namespace kernlab::plugin;

#define KERNLAB_STRINGIFY_(x) #x
#define KERNLAB_STRINGIFY(x) KERNLAB_STRINGIFY_(x)

struct scan_config {
  dtype type = dtype::int32;
  std::uint64_t n = 0;
  const void* in = nullptr;
  void* out = nullptr;
};

/// Parses and checks the scan family's arguments. With `need_buffers` (run) the input and output
/// pointers must be set; workspace_size may be called without them.
int parse_scan(const kl_launch_args* args, bool need_buffers, scan_config* c, char* error,
               size_t capacity) {
  if (args == nullptr) {
    set_error(error, capacity, "launch arguments are NULL");
    return KL_STATUS_ERROR;
  }
  if (!equals(args->family, "scan")) {
    set_error(error, capacity, "family '%s' is not offered (only 'scan')", or_null(args->family));
    return KL_STATUS_UNSUPPORTED;
  }
  if (equals(args->dtype, "int32")) {
    c->type = dtype::int32;
  } else if (equals(args->dtype, "float32")) {
    c->type = dtype::float32;
  } else {
    set_error(error, capacity, "dtype '%s' is not offered", or_null(args->dtype));
    return KL_STATUS_UNSUPPORTED;
  }
  if (args->sizes == nullptr || args->num_sizes < 1) {
    set_error(error, capacity, "scan needs sizes[0] = N (got %u sizes)", args->num_sizes);
    return KL_STATUS_ERROR;
  }
  c->n = args->sizes[0];
  c->in = args->inputs != nullptr && args->num_inputs >= 1 ? args->inputs[0] : nullptr;
  c->out = args->outputs != nullptr && args->num_outputs >= 1 ? args->outputs[0] : nullptr;
  if (need_buffers && (c->in == nullptr || c->out == nullptr)) {
    set_error(error, capacity, "scan needs inputs[0] and outputs[0] (got %u inputs, %u outputs)",
              args->num_inputs, args->num_outputs);
    return KL_STATUS_ERROR;
  }
  return KL_STATUS_OK;
}

/// One CUB call for the configuration's dtype. With temp == nullptr CUB only writes the temporary
/// storage it needs into temp_bytes and launches nothing.
///
/// int32 sums go through `unsigned int`: the family's int32 sums wrap modulo 2^32, which unsigned
/// addition gives with the same bits and without signed overflow (undefined behaviour).
template <typename NumItems>
cudaError_t cub_scan(void* temp, size_t& temp_bytes, const scan_config& c, NumItems n,
                     cudaStream_t stream) {
  if (c.type == dtype::int32) {
    return cub::DeviceScan::InclusiveSum(temp, temp_bytes, static_cast<const unsigned*>(c.in),
                                         static_cast<unsigned*>(c.out), n, stream);
  }
  return cub::DeviceScan::InclusiveSum(temp, temp_bytes, static_cast<const float*>(c.in),
                                       static_cast<float*>(c.out), n, stream);
}

/// CUB picks its offset type from the type of num_items: 32-bit offsets for a 4-byte count,
/// 64-bit ones otherwise. Use 32 bits whenever n fits, as a caller would (the family's N is at
/// most 2^30). The same choice is made in workspace_size() and run(), so the sizes agree.
cudaError_t cub_scan(void* temp, size_t& temp_bytes, const scan_config& c, cudaStream_t stream) {
  if (c.n <= UINT32_MAX) {
    return cub_scan(temp, temp_bytes, c, static_cast<std::uint32_t>(c.n), stream);
  }
  return cub_scan(temp, temp_bytes, c, static_cast<std::uint64_t>(c.n), stream);
}

int cub_scan_workspace_size(const kl_launch_args* args, uint64_t* bytes, char* error,
                            size_t capacity) {
  return guarded("cub_scan workspace_size", error, capacity, [&]() -> int {
    scan_config c;
    if (const int status = parse_scan(args, /*need_buffers=*/false, &c, error, capacity)) {
      return status;
    }
    if (bytes == nullptr) {
      set_error(error, capacity, "cub_scan workspace_size: bytes is NULL");
      return KL_STATUS_ERROR;
    }
    size_t temp_bytes = 0;
    if (!cuda_ok(cub_scan(nullptr, temp_bytes, c, to_stream(args->stream)),
                 "cub::DeviceScan::InclusiveSum (size query)", error, capacity)) {
      return KL_STATUS_ERROR;
    }
    *bytes = temp_bytes;
    return KL_STATUS_OK;
  });
}

int cub_scan_run(const kl_launch_args* args, char* error, size_t capacity) {
  return guarded("cub_scan run", error, capacity, [&]() -> int {
    scan_config c;
    if (const int status = parse_scan(args, /*need_buffers=*/true, &c, error, capacity)) {
      return status;
    }
    // With a NULL temporary storage CUB only sizes it and returns success without scanning:
    // refuse instead of silently leaving the output untouched.
    if (args->workspace == nullptr) {
      set_error(error, capacity, "cub_scan run: no workspace (workspace_size() asks for one)");
      return KL_STATUS_ERROR;
    }
    // CUB itself checks that the storage given is large enough (cudaErrorInvalidValue if not).
    size_t temp_bytes = args->workspace_bytes;
    cudaError_t status = cub_scan(args->workspace, temp_bytes, c, to_stream(args->stream));
    // CUB only peeks at launch errors; take (and clear) the last one so that a failed launch is
    // reported here, not by the next call.
    const cudaError_t last = cudaGetLastError();
    if (status == cudaSuccess) status = last;
    return cuda_ok(status, "cub::DeviceScan::InclusiveSum", error, capacity) ? KL_STATUS_OK
                                                                             : KL_STATUS_ERROR;
  });
}

const char* const kDtypes[] = {"int32", "float32"};

const kl_variant_desc kVariants[] = {{
    /*family=*/"scan",
    /*name=*/"cub",
    /*summary=*/
    "cub::DeviceScan::InclusiveSum, the vendor-library baseline (CUB_VERSION " KERNLAB_STRINGIFY(
        CUB_VERSION) ")",
    /*block_sizes=*/nullptr,  // CUB chooses its own launch configuration
    /*num_block_sizes=*/0,
    /*dtypes=*/kDtypes,
    /*num_dtypes=*/2,
    /*ops=*/nullptr,  // the family has no operations
    /*num_ops=*/0,
    /*is_baseline=*/1,
    /*workspace_size=*/cub_scan_workspace_size,
    /*prepare=*/nullptr,
    /*run=*/cub_scan_run,
}};

const kl_plugin kPlugin = {KERNLAB_PLUGIN_ABI_VERSION, "cub_scan", kVariants, 1, nullptr};

}  // namespace

KERNLAB_PLUGIN_EXPORT const kl_plugin* kernlab_plugin(void) { return &kPlugin; }
