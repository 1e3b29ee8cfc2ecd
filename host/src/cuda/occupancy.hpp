// Theoretical occupancy from a kernel's resources and its block size, without a GPU: the same
// arithmetic as CUDA's occupancy calculator (cuda_occupancy.h), from the SM's limits of each
// architecture. With a GPU the runner asks the driver
// (cuOccupancyMaxActiveBlocksPerMultiprocessor); this serves --resources anywhere, for any --arch.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace kl {

/// One architecture's per-SM limits, as the occupancy calculator and the CUDA programming guide's
/// "technical specifications per compute capability" table give them.
struct sm_limits {
  std::string arch = "sm_90";
  int max_threads = 2048;  ///< resident threads per SM
  int max_blocks = 32;     ///< resident blocks per SM
  int registers = 65536;   ///< 32-bit registers per SM
  int registers_per_block = 65536;
  int max_registers_per_thread = 255;
  int register_unit = 256;  ///< a warp's registers are allocated in units of this
  int warp_unit = 4;        ///< warps are allocated registers per SM sub-partition (4 of them)
  std::size_t shared_bytes = 233472;             ///< shared memory per SM (228 KiB on sm_90)
  std::size_t shared_per_block = 232448;         ///< the most one block may opt into
  std::size_t reserved_shared_per_block = 1024;  ///< the driver's own, per block (sm_80 and up)
  std::size_t shared_unit = 128;                 ///< shared memory allocation granularity
};

/// The limits of an architecture ("sm_90", "sm_120a"); std::nullopt for one without data.
std::optional<sm_limits> find_limits(const std::string& arch);

/// The limits of an architecture; throws std::invalid_argument naming the known ones.
sm_limits limits_for(const std::string& arch);

/// Every architecture with limits: "sm_75", "sm_80", ... (the CUDA 13 toolkit's targets).
std::vector<std::string> known_architectures();

struct occupancy_estimate {
  int blocks_per_sm = 0;
  double fraction = 0;  ///< resident threads / max threads per SM
  std::string limiter;  ///< "threads", "blocks", "registers" or "shared memory"
};

/// Resident blocks per SM for `block` threads using `registers_per_thread` and `shared_per_block`
/// bytes of (static plus dynamic) shared memory. 0 blocks when one block does not fit at all.
occupancy_estimate estimate_occupancy(int registers_per_thread, std::size_t shared_per_block,
                                      unsigned block, const sm_limits& limits);

}  // namespace kl
