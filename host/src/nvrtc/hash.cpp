#include "nvrtc/hash.hpp"

// Header-only use of libxxhash: the implementation is compiled into this file, so there is no
// library to link or to find at run time.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstdio>
#include <new>

namespace kl::nvrtc {

struct hasher::state {
  XXH3_state_t* s = nullptr;
};

std::string digest128::hex() const {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(high),
                static_cast<unsigned long long>(low));
  return buf;
}

hasher::hasher() : state_(std::make_unique<state>()) {
  state_->s = XXH3_createState();
  if (!state_->s) throw std::bad_alloc();
  XXH3_128bits_reset(state_->s);
}

hasher::~hasher() { XXH3_freeState(state_->s); }

hasher& hasher::field(std::string_view bytes) {
  field(static_cast<std::uint64_t>(bytes.size()));
  XXH3_128bits_update(state_->s, bytes.data(), bytes.size());
  return *this;
}

hasher& hasher::field(std::uint64_t value) {
  unsigned char le[8];  // little-endian, so a key means the same on every host
  for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>(value >> (8 * i));
  XXH3_128bits_update(state_->s, le, sizeof le);
  return *this;
}

digest128 hasher::digest() const {
  const XXH128_hash_t h = XXH3_128bits_digest(state_->s);
  return {h.high64, h.low64};
}

std::uint64_t checksum64(std::string_view bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

digest128 hash128(std::string_view bytes) {
  const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  return {h.high64, h.low64};
}

}  // namespace kl::nvrtc
