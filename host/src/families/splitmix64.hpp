// The generator behind every family's inputs: SplitMix64 is tiny, fast, and gives the same
// sequence on every platform and standard library, so a printed seed reproduces the inputs
// anywhere (std::mt19937 would, but the standard distributions over it would not).
#pragma once

#include <cstdint>

namespace kl {

struct splitmix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

}  // namespace kl
