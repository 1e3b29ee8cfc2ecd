// The element types data families may use (uint8, int32, int64, float16, bfloat16, float32,
// float64): their sizes, and byte counts checked against overflow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kl {

/// Size in bytes of one element of a dtype that data families may use (uint8, int32, int64,
/// float16, bfloat16, float32, float64); 0 for a name that is none of them.
std::size_t data_dtype_size(const std::string& dtype);

/// The bytes of `count` elements of a dtype that data families may use; throws
/// std::invalid_argument when they do not fit in 64 bits (a count from an expression, whose
/// product with the element's size must not wrap to a small allocation).
std::uint64_t data_bytes(std::uint64_t count, const std::string& dtype);

}  // namespace kl
