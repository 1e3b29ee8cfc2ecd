// Content hashing for the compile cache: XXH3 (libxxhash), a fast, well-tested non-cryptographic
// hash. The cache guards against stale and damaged entries, not against an attacker who can
// write to the cache folder (who could replace the cubins anyway), so a cryptographic hash
// would buy nothing here but time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace kl::nvrtc {

/// A 128-bit digest, printed as 32 hex digits.
struct digest128 {
  std::uint64_t high = 0;
  std::uint64_t low = 0;

  std::string hex() const;
  bool operator==(const digest128& o) const { return high == o.high && low == o.low; }
  bool operator!=(const digest128& o) const { return !(*this == o); }
};

/// Streaming XXH3-128. Every field is written with its length first, so ("ab", "c") and
/// ("a", "bc") hash differently.
class hasher {
 public:
  hasher();
  ~hasher();
  hasher(const hasher&) = delete;
  hasher& operator=(const hasher&) = delete;

  /// Adds one length-prefixed field.
  hasher& field(std::string_view bytes);
  hasher& field(std::uint64_t value);
  digest128 digest() const;

 private:
  struct state;
  std::unique_ptr<state> state_;
};

/// XXH3-64 of a buffer: the checksum of a cache entry's payload.
std::uint64_t checksum64(std::string_view bytes);

/// XXH3-128 of a buffer: a header's content, in a cache key.
digest128 hash128(std::string_view bytes);

}  // namespace kl::nvrtc
