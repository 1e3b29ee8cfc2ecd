// Test plugin: a valid reduce variant whose run always fails with a known message, which
// kernlab must report as the variant's error while every other variant still runs.
#include <kernlab/plugin_api.h>

#include <cstdio>

namespace {

int run(const kl_launch_args*, char* error, size_t capacity) {
  std::snprintf(error, capacity, "planted failure from run_error plugin");
  return KL_STATUS_ERROR;
}

const char* const kDtypes[] = {"int32"};
const char* const kOps[] = {"sum"};
const kl_variant_desc kVariants[] = {{"reduce", "always_fails", "run always returns an error",
                                      nullptr, 0, kDtypes, 1, kOps, 1, 0, nullptr, nullptr, run}};
const kl_plugin kPlugin = {KERNLAB_PLUGIN_ABI_VERSION, "run_error", kVariants, 1, nullptr};

}  // namespace

KERNLAB_PLUGIN_EXPORT const kl_plugin* kernlab_plugin(void) { return &kPlugin; }
