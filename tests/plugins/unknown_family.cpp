// Test plugin: a well-formed table whose only variant names a family kernlab does not know.
#include <kernlab/plugin_api.h>

#include <cstdio>

namespace {

int run(const kl_launch_args*, char* error, size_t capacity) {
  std::snprintf(error, capacity, "unknown_family: run must never be called");
  return KL_STATUS_ERROR;
}

const char* const kDtypes[] = {"int32"};
const char* const kOps[] = {"sum"};
const kl_variant_desc kVariants[] = {{"no_such_family", "mystery", "a family kernlab does not know",
                                      nullptr, 0, kDtypes, 1, kOps, 1, 0, nullptr, nullptr, run}};
const kl_plugin kPlugin = {KERNLAB_PLUGIN_ABI_VERSION, "unknown_family", kVariants, 1, nullptr};

}  // namespace

KERNLAB_PLUGIN_EXPORT const kl_plugin* kernlab_plugin(void) { return &kPlugin; }
