// Host memory a result is downloaded into to be checked, kept across a problem's rows: page-locked
// for a download at the link's speed, pageable when the driver will not pin that much.
#pragma once

#include "cuda/resources.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace kl::cuda {

class staging_buffer {
 public:
  /// At least `bytes` of host memory, made at the first call (and again when more is asked).
  std::uint8_t* get(std::size_t bytes) {
    if (pinned_ && pinned_->bytes() >= bytes) return pinned_->data();
    if (!pageable_.empty() && pageable_.size() >= bytes) return pageable_.data();
    pinned_.reset();
    try {
      pinned_ = std::make_unique<pinned_buffer>(bytes);
      pageable_.clear();
      return pinned_->data();
    } catch (const cuda_error&) {
      pageable_.resize(bytes);
      return pageable_.data();
    }
  }

 private:
  std::unique_ptr<pinned_buffer> pinned_;
  std::vector<std::uint8_t> pageable_;  // instead, if pinning failed
};

}  // namespace kl::cuda
