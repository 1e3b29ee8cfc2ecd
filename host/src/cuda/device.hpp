// What kernlab needs to know about the GPU it runs on: identity, the numbers that define its
// peaks, and the limits that decide whether a configuration can run at all.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>

namespace kl::cuda {

/// Which GPU measured a row: enough to tell two GPUs of one host apart (the ordinal, the UUID)
/// and two models apart (the name, the clocks), kept in every record it measured.
struct gpu_identity {
  int ordinal = 0;
  std::string uuid;
  std::string name;
  int sm_clock_khz = 0;   ///< maximum SM clock
  int mem_clock_khz = 0;  ///< peak memory clock
};

struct device_info {
  int ordinal = 0;
  std::string name;
  std::string uuid;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int regs_per_sm = 0;
  std::size_t shared_per_sm = 0;
  std::size_t l2_bytes = 0;
  std::size_t total_mem = 0;
  int sm_clock_khz = 0;   ///< maximum SM clock
  int mem_clock_khz = 0;  ///< peak memory clock
  int bus_width_bits = 0;
  int driver_version = 0;  ///< e.g. 13000

  gpu_identity identity() const { return {ordinal, uuid, name, sm_clock_khz, mem_clock_khz}; }
  /// "sm_90": the architecture NVRTC compiles for.
  std::string arch() const { return "sm_" + std::to_string(cc_major * 10 + cc_minor); }
  /// Theoretical DRAM bandwidth in bytes/s: memory clock x bus width x 2 (double data rate).
  double peak_bandwidth() const { return 2.0 * mem_clock_khz * 1e3 * bus_width_bits / 8.0; }
  /// FP32 lanes (FMA units) per SM for the compute capability (CUDA C++ Programming Guide,
  /// "Arithmetic Instructions"); 0 for one this table does not know.
  int fp32_lanes_per_sm() const;
  /// Theoretical FP32 throughput in FLOP/s: SMs x FP32 lanes x 2 (an FMA is two FLOPs) x the
  /// maximum SM clock. 0 when the lanes are unknown.
  double peak_fp32_flops() const {
    return 2.0 * sm_count * fp32_lanes_per_sm() * sm_clock_khz * 1e3;
  }
  /// Dense FP16/BF16 tensor-core FLOPs per SM per clock with FP32 accumulation, from NVIDIA's
  /// architecture whitepapers (A100: 1024 FMA; H100: 2048 FMA); 0 for an architecture this table
  /// does not know (some parts accumulate in FP32 at a fraction of the FP16 rate).
  int tensor16_flops_per_sm_clock() const;
  /// The 16-bit tensor-core peak in FLOP/s at the maximum SM clock; 0 when unknown.
  double peak_tensor16_flops() const {
    return static_cast<double>(sm_count) * tensor16_flops_per_sm_clock() * sm_clock_khz * 1e3;
  }
  /// Dense TF32 tensor-core FLOPs per SM per clock (half the 16-bit rate on A100 and H100); 0
  /// when unknown.
  int tf32_flops_per_sm_clock() const { return tensor16_flops_per_sm_clock() / 2; }
  /// The TF32 tensor-core peak in FLOP/s at the maximum SM clock; 0 when unknown.
  double peak_tf32_flops() const {
    return static_cast<double>(sm_count) * tf32_flops_per_sm_clock() * sm_clock_khz * 1e3;
  }
  /// Dense FP64 tensor-core (DMMA) FLOPs per SM per clock, from NVIDIA's datasheets (A100: 128,
  /// 19.5 TFLOP/s at 1410 MHz on 108 SMs; H100/H200: 256, 67 TFLOP/s at 1980 MHz on 132 SMs);
  /// 0 for an architecture this table does not know (the consumer parts run DMMA on their few
  /// FP64 units, far below any tensor-core rate).
  int fp64_tensor_flops_per_sm_clock() const;
  /// The FP64 tensor-core peak in FLOP/s at the maximum SM clock; 0 when unknown.
  double peak_fp64_tensor_flops() const {
    return static_cast<double>(sm_count) * fp64_tensor_flops_per_sm_clock() * sm_clock_khz * 1e3;
  }
  /// The tensor-core FLOPs per SM per clock of a tensor roofline ("tensor", "tf32", "fp64"); 0
  /// for another word or an unknown part.
  int tensor_flops_per_sm_clock_for(const std::string& roofline) const {
    if (roofline == "tensor") return tensor16_flops_per_sm_clock();
    if (roofline == "tf32") return tf32_flops_per_sm_clock();
    if (roofline == "fp64") return fp64_tensor_flops_per_sm_clock();
    return 0;
  }
  /// The compute peak a record's roofline ("compute": FP32 lanes, "tensor": 16-bit tensor
  /// cores, "tf32": TF32 tensor cores, "fp64": FP64 tensor cores) is measured against; 0 for
  /// "bandwidth" or an unknown word, or an unknown part.
  double peak_flops_for(const std::string& roofline) const {
    if (roofline == "tensor") return peak_tensor16_flops();
    if (roofline == "tf32") return peak_tf32_flops();
    if (roofline == "fp64") return peak_fp64_tensor_flops();
    return roofline == "compute" ? peak_fp32_flops() : 0.0;
  }
};

/// How many GPUs the driver sees. Needs the driver.
int device_count();

/// Reads the attributes of device `ordinal`. Needs the driver.
device_info query_device(int ordinal);

/// A device's 16-byte UUID (cuDeviceGetUuid) as NVML and nvidia-smi write it:
/// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lowercase hex. NVML finds a device by this text.
std::string uuid_text(const unsigned char (&bytes)[16]);

/// Bytes of device memory free now.
std::size_t free_device_memory();

}  // namespace kl::cuda
