// Test family plugin (include/kernlab/family_api.h) for a family written in the tests: out =
// SCALE * in + 1. Its generator "quarters" gives element i = ((i * 7919 + seed) mod 4001 - 2000)
// / 4, exact in float32; its reference "affine" computes the answer on the host. N = 13 is a
// planted failure of the generator, N = 17 of the reference, to see their messages reach the
// row.
#include <kernlab/family_api.h>

#include <cstdio>
#include <cstring>

namespace {

double axis(const kl_family_point* p, const char* name) {
  for (uint32_t i = 0; i < p->num_axes; ++i)
    if (std::strcmp(p->axis_names[i], name) == 0) return p->axis_values[i];
  return -1;
}

int quarters(const kl_family_point* p, const char* buffer, const char* dtype, void* out,
             uint64_t first, uint64_t count, char* error, size_t capacity) {
  if (axis(p, "N") == 13) {
    std::snprintf(error, capacity, "planted failure of quarters for buffer %s", buffer);
    return KL_FAMILY_ERROR;
  }
  if (std::strcmp(dtype, "float32") != 0) {
    std::snprintf(error, capacity, "quarters makes float32, not %s", dtype);
    return KL_FAMILY_ERROR;
  }
  float* f = static_cast<float*>(out);
  for (uint64_t k = 0; k < count; ++k) {
    const uint64_t i = first + k;
    f[k] = static_cast<float>(static_cast<long long>((i * 7919 + p->seed) % 4001) - 2000) / 4.0f;
  }
  return KL_FAMILY_OK;
}

int affine(const kl_family_point* p, const kl_family_buffer* in, uint32_t num_in,
           const kl_family_buffer* out, uint32_t num_out, char* error, size_t capacity) {
  if (axis(p, "N") == 17) {
    std::snprintf(error, capacity, "planted failure of the affine reference");
    return KL_FAMILY_ERROR;
  }
  if (num_in != 1 || num_out != 1 || in[0].count != out[0].count) {
    std::snprintf(error, capacity, "affine expects one input and one output of one length");
    return KL_FAMILY_ERROR;
  }
  const float scale = static_cast<float>(axis(p, "SCALE"));
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (uint64_t i = 0; i < in[0].count; ++i) y[i] = scale * x[i] + 1.0f;
  return KL_FAMILY_OK;
}

const kl_family_generator kGenerators[] = {{"quarters", quarters}};
const kl_family_reference kReferences[] = {{"affine", affine}};
const kl_family_plugin kPlugin = {
    KERNLAB_FAMILY_ABI_VERSION, "affine", kGenerators, 1, kReferences, 1};

}  // namespace

KERNLAB_FAMILY_EXPORT const kl_family_plugin* kernlab_family(void) { return &kPlugin; }
