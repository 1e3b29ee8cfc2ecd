// The C++ type behind a dtype's name, for code that handles every dtype a family may declare:
// generators, comparison rules and the problem's buffers.
#pragma once

#include "families/half_types.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace kl {

// Calls f with a value of the C++ type of `dtype` (the type is what matters, not the value).
template <typename F>
decltype(auto) with_dtype(const std::string& dtype, F&& f) {
  if (dtype == "float32") return f(float{});
  if (dtype == "float64") return f(double{});
  if (dtype == "int32") return f(std::int32_t{});
  if (dtype == "int64") return f(std::int64_t{});
  if (dtype == "uint8") return f(std::uint8_t{});
  if (dtype == "float16") return f(float16{});
  if (dtype == "bfloat16") return f(bfloat16{});
  throw std::invalid_argument("unknown dtype '" + dtype + "'");
}

}  // namespace kl
