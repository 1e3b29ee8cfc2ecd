#include "cuda/device.hpp"

#include "cuda/driver.hpp"

#include <cstdio>
#include <cstring>

namespace kl::cuda {
namespace {
int attribute(CUdevice dev, CUdevice_attribute a) {
  int v = 0;
  KL_CU(cuDeviceGetAttribute(&v, a, dev));
  return v;
}
}  // namespace

std::string uuid_text(const unsigned char (&b)[16]) {
  char text[64];
  std::snprintf(text, sizeof text,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return text;
}

int device_count() {
  int n = 0;
  KL_CU(cuDeviceGetCount(&n));
  return n;
}

device_info query_device(int ordinal) {
  CUdevice dev = 0;
  KL_CU(cuDeviceGet(&dev, ordinal));
  device_info info;
  info.ordinal = ordinal;
  char name[256] = {};
  KL_CU(cuDeviceGetName(name, sizeof name, dev));
  info.name = name;
  CUuuid uuid{};
  KL_CU(cuDeviceGetUuid(&uuid, dev));
  unsigned char bytes[16];
  std::memcpy(bytes, uuid.bytes, sizeof bytes);
  info.uuid = uuid_text(bytes);
  info.cc_major = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info.cc_minor = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info.sm_count = attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info.max_threads_per_block = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  info.max_threads_per_sm = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  info.max_blocks_per_sm = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  info.regs_per_sm = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  info.shared_per_sm = static_cast<std::size_t>(
      attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR));
  info.l2_bytes = static_cast<std::size_t>(attribute(dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
  info.sm_clock_khz = attribute(dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  info.mem_clock_khz = attribute(dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  info.bus_width_bits = attribute(dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  KL_CU(cuDeviceTotalMem(&info.total_mem, dev));
  KL_CU(cuDriverGetVersion(&info.driver_version));
  return info;
}

int device_info::tensor16_flops_per_sm_clock() const {
  switch (cc_major * 10 + cc_minor) {
    case 80: return 2048;  // A100: 312 TFLOP/s at 1410 MHz on 108 SMs
    case 90: return 4096;  // H100/H200: 989 TFLOP/s at 1830 MHz on 132 SMs
    default: return 0;
  }
}

int device_info::fp64_tensor_flops_per_sm_clock() const {
  switch (cc_major * 10 + cc_minor) {
    case 80: return 128;  // A100: 19.5 TFLOP/s at 1410 MHz on 108 SMs
    case 90: return 256;  // H100/H200: 67 TFLOP/s at 1980 MHz on 132 SMs (SXM)
    default: return 0;
  }
}

int device_info::fp32_lanes_per_sm() const {
  switch (cc_major * 10 + cc_minor) {
    case 60: return 64;
    case 61:
    case 62: return 128;
    case 70:
    case 72:
    case 75: return 64;
    case 80: return 64;
    case 86:
    case 87:
    case 89: return 128;
    case 90: return 128;
    case 100:
    case 101:
    case 103:
    case 110:
    case 120:
    case 121: return 128;
    default: return 0;
  }
}

std::size_t free_device_memory() {
  std::size_t free_bytes = 0, total = 0;
  KL_CU(cuMemGetInfo(&free_bytes, &total));
  return free_bytes;
}

}  // namespace kl::cuda
