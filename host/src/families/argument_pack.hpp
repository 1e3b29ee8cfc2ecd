// The arguments of one kernel launch, packed for cuLaunchKernel: a problem's buffers and scalars
// in its family's [kernel] order, a variant's scratch and tensor maps after them.
#pragma once

#include "cuda/resources.hpp"
#include "cuda/tensor_map.hpp"

#include <cuda.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kl {

// Packs kernel arguments: each slot holds a pointer or a scalar, and params[i] points at it;
// a tensor map (128 bytes) has a slot of its own kind.
class argument_pack {
 public:
  void add_tensor_map(const cuda::tensor_map& m) {
    maps_.push_back(m);
    order_.push_back({true, maps_.size() - 1});
    sizes_.push_back(sizeof m.bytes);
  }
  /// Throws std::runtime_error when the arguments do not fit kernel `f`'s parameters (how many,
  /// and each one's size), naming `what` packs them: a mismatched signature would have the driver
  /// read past the arguments (a crash) or the kernel read garbage. Nothing when the driver cannot
  /// say.
  void check_against(CUfunction f, const std::string& variant, const std::string& what) const {
    const std::vector<std::size_t> params = cuda::kernel_parameter_sizes(f);
    if (params.empty() && !sizes_.empty()) return;
    std::string why;
    if (params.size() != sizes_.size()) {
      why = "the kernel takes " + std::to_string(params.size()) + " parameters, " + what +
            " gives " + std::to_string(sizes_.size());
    } else {
      for (std::size_t i = 0; i < params.size() && why.empty(); ++i)
        if (params[i] != sizes_[i])
          why = "the kernel's parameter " + std::to_string(i + 1) + " is " +
                std::to_string(params[i]) + " bytes, " + what + " gives " +
                std::to_string(sizes_[i]) + " bytes there";
    }
    if (!why.empty()) throw std::runtime_error(variant + ": " + why + "; make its signature match");
  }
  void add_pointer(CUdeviceptr p) { push(&p, sizeof p); }
  void add_scalar(std::int64_t v, const std::string& type) {
    if (type == "int32") {
      const auto x = static_cast<std::int32_t>(v);
      push(&x, 4);
    } else if (type == "uint32") {
      const auto x = static_cast<std::uint32_t>(v);
      push(&x, 4);
    } else {
      push(&v, 8);
    }
  }
  /// The launch's parameter array. Built on the first call (the slots are complete by then) and
  /// reused: enqueue() runs in the timed region.
  void** params() {
    if (ptrs_.size() != order_.size()) {
      ptrs_.clear();
      for (const auto& [map, i] : order_)
        ptrs_.push_back(map ? static_cast<void*>(maps_[i].bytes) : &slots_[i]);
    }
    return ptrs_.data();
  }

 private:
  void push(const void* p, std::size_t n) {
    std::uint64_t slot = 0;
    std::memcpy(&slot, p, n);
    slots_.push_back(slot);
    order_.push_back({false, slots_.size() - 1});
    sizes_.push_back(n);
  }
  std::vector<std::uint64_t> slots_;
  std::vector<cuda::tensor_map> maps_;
  std::vector<std::pair<bool, std::size_t>> order_;  // (a tensor map?, its index)
  std::vector<std::size_t> sizes_;                   // each argument's bytes
  std::vector<void*> ptrs_;
};

}  // namespace kl
