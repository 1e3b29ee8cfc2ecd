// Tensor maps for Hopper's tensor memory accelerator (TMA): the 128-byte descriptor a kernel
// takes as a `const __grid_constant__` parameter to copy boxes of a global array to shared
// memory (cp.async.bulk.tensor). The host encodes one per buffer a variant's header names
// (`tensor_maps:`), with cuTensorMapEncodeTiled.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kl::cuda {

/// The encoded descriptor: CUtensorMap's bytes (64-byte aligned, as the parameter must be).
struct tensor_map {
  alignas(64) std::uint8_t bytes[128] = {};
};

/// A row-major array in global memory, seen as a tensor map.
struct tensor_map_request {
  std::string name;  ///< the buffer, for messages
  CUdeviceptr address = 0;
  CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  std::size_t element_bytes = 4;
  std::vector<std::uint64_t> dims;  ///< outermost first, as the header writes them
  std::vector<std::uint64_t> box;   ///< elements per box, outermost first
  unsigned swizzle = 0;             ///< bytes: 0 (none), 32, 64 or 128
  std::size_t buffer_bytes = 0;     ///< what the buffer holds; the array must fit (0: unchecked)
};

/// Why the TMA cannot copy `r` ("" when it can): an array larger than its buffer, a box past 256
/// elements, rows that are not 16-byte aligned, a box row wider than the swizzle, and the other
/// limits of cuTensorMapEncodeTiled. Needs no driver.
std::string tensor_map_problem(const tensor_map_request& r);

/// Encodes `r` (elements outside the array read as zero). Throws std::invalid_argument with
/// tensor_map_problem()'s reason, or cuda_error when the driver refuses it anyway.
tensor_map encode_tensor_map(const tensor_map_request& r);

/// The sizes in bytes of a kernel's parameters, in order; empty when the driver cannot say
/// (cuFuncGetParamInfo came with CUDA 12.4). Lets a launch check the arguments it packs against
/// the kernel's signature instead of letting the driver read past them.
std::vector<std::size_t> kernel_parameter_sizes(CUfunction f);

}  // namespace kl::cuda
