#include "spec/dtypes.hpp"

#include <stdexcept>

namespace kl {

std::size_t data_dtype_size(const std::string& dtype) {
  if (dtype == "uint8") return 1;
  if (dtype == "int32" || dtype == "float32") return 4;
  if (dtype == "int64" || dtype == "float64") return 8;
  if (dtype == "float16" || dtype == "bfloat16") return 2;
  return 0;
}

std::uint64_t data_bytes(std::uint64_t count, const std::string& dtype) {
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(count, data_dtype_size(dtype), &bytes))
    throw std::invalid_argument(std::to_string(count) + " elements of " + dtype +
                                " are more bytes than 64 bits count");
  return bytes;
}

}  // namespace kl
