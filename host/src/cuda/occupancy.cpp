#include "cuda/occupancy.hpp"

#include <algorithm>
#include <stdexcept>

namespace kl {
namespace {

// Per architecture: resident threads and blocks per SM, shared memory per SM (KiB). Registers
// (64 Ki per SM and per block, 255 per thread, allocated per warp in units of 256, warps in
// groups of the SM's 4 sub-partitions) are the same on all of them. The driver reserves 1 KiB of
// shared memory per block from sm_80 on; shared memory is allocated in 256-byte units before sm_80
// and 128-byte units since. Sources: cuda_occupancy.h and the CUDA programming guide.
struct arch_row {
  int cc;  // 75 for sm_75
  int max_threads;
  int max_blocks;
  int shared_kib;
};
constexpr arch_row kArchitectures[] = {
    {75, 1024, 16, 64},                         // Turing
    {80, 2048, 32, 164},                        // A100
    {86, 1536, 16, 100},                        // GA10x
    {87, 1536, 16, 164},                        // Orin
    {88, 1536, 16, 100},  {89, 1536, 24, 100},  // Ada
    {90, 2048, 32, 228},                        // Hopper
    {100, 2048, 32, 228},                       // B200
    {103, 2048, 32, 228},                       // B300
    {110, 1536, 24, 228},                       // Thor
    {120, 1536, 24, 100},                       // RTX Blackwell
    {121, 1536, 24, 100},                       // GB10
};

// 90 from "sm_90", "sm_90a", "sm_100f", "compute_90"; -1 otherwise.
int compute_capability_of(const std::string& arch) {
  std::size_t pos = 0;
  if (arch.rfind("sm_", 0) == 0)
    pos = 3;
  else if (arch.rfind("compute_", 0) == 0)
    pos = 8;
  else
    return -1;
  std::size_t end = pos;
  while (end < arch.size() && arch[end] >= '0' && arch[end] <= '9') ++end;
  const std::string suffix = arch.substr(end);
  if (end == pos || end - pos > 3 || !(suffix.empty() || suffix == "a" || suffix == "f")) return -1;
  return std::stoi(arch.substr(pos, end - pos));
}

}  // namespace

std::optional<sm_limits> find_limits(const std::string& arch) {
  const int cc = compute_capability_of(arch);
  for (const auto& row : kArchitectures) {
    if (row.cc != cc) continue;
    sm_limits l;
    l.arch = arch;
    l.max_threads = row.max_threads;
    l.max_blocks = row.max_blocks;
    l.shared_bytes = static_cast<std::size_t>(row.shared_kib) * 1024;
    l.reserved_shared_per_block = cc >= 80 ? 1024 : 0;
    l.shared_per_block = l.shared_bytes - l.reserved_shared_per_block;
    l.shared_unit = cc >= 80 ? 128 : 256;
    return l;
  }
  return std::nullopt;
}

std::vector<std::string> known_architectures() {
  std::vector<std::string> names;
  for (const auto& row : kArchitectures) names.push_back("sm_" + std::to_string(row.cc));
  return names;
}

sm_limits limits_for(const std::string& arch) {
  if (auto l = find_limits(arch)) return *l;
  std::string known;
  for (const auto& a : known_architectures()) known += (known.empty() ? "" : ", ") + a;
  throw std::invalid_argument("no occupancy data for architecture '" + arch + "' (known: " + known +
                              ")");
}

occupancy_estimate estimate_occupancy(int regs, std::size_t shared, unsigned block,
                                      const sm_limits& l) {
  occupancy_estimate e;
  if (block == 0) return e;
  const int warps = static_cast<int>((block + 31) / 32);
  const int by_threads = l.max_threads / (warps * 32);  // warp slots, as the calculator counts
  int best = std::min(by_threads, l.max_blocks);
  e.limiter = by_threads <= l.max_blocks ? "threads" : "blocks";
  if (regs > 0) {
    // Each warp's registers are allocated in units of register_unit, within one of the SM's
    // sub-partitions: a sub-partition holds whole warps only.
    const int per_warp = (regs * 32 + l.register_unit - 1) / l.register_unit * l.register_unit;
    const int warps_rounded = (warps + l.warp_unit - 1) / l.warp_unit * l.warp_unit;
    int by_regs = 0;
    if (regs <= l.max_registers_per_thread && per_warp * warps_rounded <= l.registers_per_block) {
      const int warps_per_partition = l.registers / l.warp_unit / per_warp;
      by_regs = warps_per_partition * l.warp_unit / warps;
    }
    if (by_regs < best) {
      best = by_regs;
      e.limiter = "registers";
    }
  }
  // The driver's reserved shared memory counts for every block, with or without the kernel's own.
  const std::size_t used = shared + l.reserved_shared_per_block;
  if (used > 0) {
    const std::size_t per_block = (used + l.shared_unit - 1) / l.shared_unit * l.shared_unit;
    const int by_shared = per_block > l.shared_per_block + l.reserved_shared_per_block
                              ? 0
                              : static_cast<int>(l.shared_bytes / per_block);
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
