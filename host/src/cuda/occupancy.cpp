#include "cuda/occupancy.hpp"

#include <algorithm>

namespace kl {

sm_limits limits_for(const std::string& arch) {
  sm_limits l;
  if (arch == "sm_80") {
    l.shared_bytes = 167936;  // 164 KiB
  } else if (arch == "sm_86" || arch == "sm_89") {
    l.max_threads = 1536;
    l.max_blocks = arch == "sm_86" ? 16 : 24;
    l.shared_bytes = 102400;  // 100 KiB
  }
  return l;  // sm_90 and anything unknown
}

occupancy_estimate estimate_occupancy(int regs, std::size_t shared, unsigned block,
                                      const sm_limits& l) {
  occupancy_estimate e;
  if (block == 0) return e;
  const int warps = static_cast<int>((block + 31) / 32);
  int best = std::min(l.max_threads / static_cast<int>(block), l.max_blocks);
  e.limiter = l.max_threads / static_cast<int>(block) <= l.max_blocks ? "threads" : "blocks";
  if (regs > 0) {
    // Each warp's registers are allocated in units of register_unit.
    const int per_warp = (regs * 32 + l.register_unit - 1) / l.register_unit * l.register_unit;
    const int by_regs = l.registers / (per_warp * warps);
    if (by_regs < best) {
      best = by_regs;
      e.limiter = "registers";
    }
  }
  if (shared > 0) {
    const std::size_t per_block = shared + l.reserved_shared_per_block;
    const int by_shared = static_cast<int>(l.shared_bytes / per_block);
    if (by_shared < best) {
      best = by_shared;
      e.limiter = "shared memory";
    }
  }
  e.blocks_per_sm = std::max(0, best);
  e.fraction = static_cast<double>(e.blocks_per_sm) * block / l.max_threads;
  return e;
}

}  // namespace kl
