// Test plugin: built against plugin ABI version 1, whose kl_plugin ends after num_variants (no
// `release`). kernlab must still load it and never read past the end of its table.
#include <kernlab/plugin_api.h>

#include <cstdio>

namespace {

// kl_plugin as version 1 defined it.
struct kl_plugin_v1 {
  uint32_t abi_version;
  const char* name;
  const kl_variant_desc* variants;
  uint32_t num_variants;
};

int run(const kl_launch_args*, char* error, size_t capacity) {
  std::snprintf(error, capacity, "abi_v1: run is not meant to be timed");
  return KL_STATUS_ERROR;
}

const char* const kDtypes[] = {"int32"};
const char* const kOps[] = {"sum"};
const kl_variant_desc kVariants[] = {{"reduce", "from_abi_v1", "a version-1 table", nullptr, 0,
                                      kDtypes, 1, kOps, 1, 0, nullptr, nullptr, run}};
const kl_plugin_v1 kPlugin = {1, "abi_v1", kVariants, 1};

}  // namespace

KERNLAB_PLUGIN_EXPORT const kl_plugin* kernlab_plugin(void) {
  return reinterpret_cast<const kl_plugin*>(&kPlugin);
}
