#include "cuda/tensor_map.hpp"

#include "cuda/driver.hpp"

#include <stdexcept>

namespace kl::cuda {

std::string tensor_map_problem(const tensor_map_request& r) {
  const std::string what = "tensor map " + r.name + ": ";
  const std::size_t rank = r.dims.size();
  if (rank < 1 || rank > 5 || r.box.size() != rank)
    return what + "needs 1 to 5 dimensions and a box of as many";
  if (r.address % 16 != 0) return what + "the buffer is not 16-byte aligned";
  std::uint64_t stride = r.element_bytes;  // bytes between consecutive elements of a dimension
  for (std::size_t i = rank; i-- > 0;) {
    const std::uint64_t d = r.dims[i], b = r.box[i];
    if (d < 1 || d > (1ull << 32))
      return what + "dimension " + std::to_string(d) + " is outside 1..2^32";
    if (b < 1 || b > 256)
      return what + "a box of " + std::to_string(b) + " elements (at most 256 per dimension)";
    if (i + 1 < rank) {
      if (stride % 16 != 0)
        return what + "a row is " + std::to_string(stride) +
               " bytes, not a multiple of 16 (the TMA copies arrays whose rows are 16-byte "
               "aligned; for 16-bit elements, the inner dimension a multiple of 8)";
      if (stride >= (1ull << 40)) return what + "a stride past 2^40 bytes";
    }
    if (__builtin_mul_overflow(stride, d, &stride)) return what + "the array passes 2^64 bytes";
  }
  // The dimensions are the header's expressions: an array larger than the buffer would have the
  // TMA read past it.
  if (r.buffer_bytes && stride > r.buffer_bytes)
    return what + "the array is " + std::to_string(stride) + " bytes, larger than the buffer (" +
           std::to_string(r.buffer_bytes) + " bytes)";
  const std::uint64_t inner = r.box.back() * r.element_bytes;
  if (inner % 16 != 0)
    return what + "the box's inner dimension is " + std::to_string(inner) +
           " bytes, not a multiple of 16";
  if (r.swizzle != 0 && r.swizzle != 32 && r.swizzle != 64 && r.swizzle != 128)
    return what + "swizzle " + std::to_string(r.swizzle) + " is not 0, 32, 64 or 128";
  if (r.swizzle && inner > r.swizzle)
    return what + "the box's inner dimension is " + std::to_string(inner) +
           " bytes, wider than the " + std::to_string(r.swizzle) + "-byte swizzle";
  return "";
}

tensor_map encode_tensor_map(const tensor_map_request& r) {
  if (const std::string why = tensor_map_problem(r); !why.empty()) throw std::invalid_argument(why);
  const std::size_t rank = r.dims.size();
  // The driver's order is innermost first; its strides are those of dimensions 1.. in bytes.
  cuuint64_t dims[5], strides[4];
  cuuint32_t box[5], element_strides[5];
  std::uint64_t stride = r.element_bytes;
  for (std::size_t k = 0; k < rank; ++k) {
    const std::size_t i = rank - 1 - k;
    dims[k] = r.dims[i];
    box[k] = static_cast<cuuint32_t>(r.box[i]);
    element_strides[k] = 1;
    if (k > 0) strides[k - 1] = stride;
    stride *= r.dims[i];
  }
  const CUtensorMapSwizzle swizzle = r.swizzle == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                     : r.swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                     : r.swizzle == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                       : CU_TENSOR_MAP_SWIZZLE_NONE;
  tensor_map out;
  static_assert(sizeof(CUtensorMap) == sizeof(out.bytes), "CUtensorMap is 128 bytes");
  KL_CU(cuTensorMapEncodeTiled(reinterpret_cast<CUtensorMap*>(out.bytes), r.type,
                               static_cast<cuuint32_t>(rank), reinterpret_cast<void*>(r.address),
                               dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                               swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return out;
}

std::vector<std::size_t> kernel_parameter_sizes(CUfunction f) {
  const driver& d = driver::get();
  std::vector<std::size_t> out;
  if (!d.cuFuncGetParamInfo) return out;
  for (std::size_t i = 0;; ++i) {
    std::size_t offset = 0, size = 0;
    const CUresult rc = d.cuFuncGetParamInfo(f, i, &offset, &size);
    if (rc == CUDA_ERROR_INVALID_VALUE) return out;  // past the last parameter
    if (rc != CUDA_SUCCESS) return {};               // cannot say
    out.push_back(size);
  }
}

}  // namespace kl::cuda
