// Device-side helpers for the `reduce` family, included by kernels_src/reduce/*.cu.
//
// NVRTC compiles kernel files without the C++ standard library, so the few facts the
// operators need (identities, wrap-around addition) are spelled out here.
#pragma once

namespace kl {

/// Largest and lowest finite values of the element types the family supports.
template <typename T> struct limits;
template <> struct limits<int> {
  static constexpr int max = 2147483647;
  static constexpr int lowest = -2147483647 - 1;
};
template <> struct limits<float> {
  static constexpr float max = 3.402823466e+38f;
  static constexpr float lowest = -3.402823466e+38f;
};

/// Sum. For int32 the sum is defined modulo 2^32; adding as unsigned makes the
/// wrap-around well defined instead of relying on signed overflow (undefined in C++).
template <typename T> struct sum {
  __device__ __forceinline__ static T identity() { return T(0); }
  __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
template <> struct sum<int> {
  __device__ __forceinline__ static int identity() { return 0; }
  __device__ __forceinline__ int operator()(int a, int b) const {
    return static_cast<int>(static_cast<unsigned>(a) + static_cast<unsigned>(b));
  }
};

/// Minimum; its identity is the largest finite value.
template <typename T> struct min {
  __device__ __forceinline__ static T identity() { return limits<T>::max; }
  __device__ __forceinline__ T operator()(T a, T b) const { return b < a ? b : a; }
};

/// Maximum; its identity is the lowest finite value.
template <typename T> struct max {
  __device__ __forceinline__ static T identity() { return limits<T>::lowest; }
  __device__ __forceinline__ T operator()(T a, T b) const { return a < b ? b : a; }
};

}  // namespace kl
