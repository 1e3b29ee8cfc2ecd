// The element types data families may use (uint8, int32, int64, float16, bfloat16, float32,
// float64): their sizes, byte counts checked against overflow, and what a `require` sees of one.
// Apart from family_spec.hpp so that the header parser (and its fuzz target) needs no TOML.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kl {

/// Size in bytes of one element of a dtype that data families may use (uint8, int32, int64,
/// float16, bfloat16, float32, float64); 0 for a name that is none of them.
std::size_t data_dtype_size(const std::string& dtype);

/// The bytes of `count` elements of a dtype that data families may use; throws
/// std::invalid_argument when they do not fit in 64 bits (a count from an expression, whose
/// product with the element's size must not wrap to a small allocation).
std::uint64_t data_bytes(std::uint64_t count, const std::string& dtype);

/// The dtypes data families may use, in the order of their DTYPE codes (uint8 is 1).
const std::vector<std::string>& data_dtypes();

/// Adds what a `require` (family.toml's, or a header's) sees of a dtype: TSIZE (its bytes), DTYPE
/// (its code) and every dtype's name as its code, so that `DTYPE == float32` and
/// `DTYPE != float64` read as written.
void add_dtype_variables(std::map<std::string, std::int64_t>& vars, const std::string& dtype);

}  // namespace kl
