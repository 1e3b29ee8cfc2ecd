// Theoretical occupancy from a kernel's resources and its block size, without a GPU: the same
// arithmetic as CUDA's occupancy calculator, from the SM's limits. With a GPU the runner asks the
// driver (cuOccupancyMaxActiveBlocksPerMultiprocessor); this serves --resources anywhere.
#pragma once

#include <cstddef>
#include <string>

namespace kl {

struct sm_limits {
  int max_threads = 2048;
  int max_blocks = 32;
  int registers = 65536;
  std::size_t shared_bytes = 233472;  ///< usable shared memory per SM (228 KiB on sm_90)
  std::size_t reserved_shared_per_block = 1024;
  int register_unit = 256;            ///< registers are allocated per warp in units of this
  int max_registers_per_thread = 255;
};

/// The limits of an architecture ("sm_90"; unknown ones get sm_90's, which the result says).
sm_limits limits_for(const std::string& arch);

struct occupancy_estimate {
  int blocks_per_sm = 0;
  double fraction = 0;   ///< resident threads / max threads per SM
  std::string limiter;   ///< "threads", "blocks", "registers" or "shared memory"
};

occupancy_estimate estimate_occupancy(int registers_per_thread, std::size_t shared_per_block,
                                      unsigned block, const sm_limits& limits);

}  // namespace kl
