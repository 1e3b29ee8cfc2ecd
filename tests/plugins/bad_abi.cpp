// Test plugin: built against a future ABI. kernlab must refuse it after reading abi_version and
// before reading anything else in the table (which is otherwise well-formed).
#include <kernlab/plugin_api.h>

#include <cstdio>

namespace {

int run(const kl_launch_args*, char* error, size_t capacity) {
  std::snprintf(error, capacity, "bad_abi: run must never be called");
  return KL_STATUS_ERROR;
}

const char* const kDtypes[] = {"int32"};
const char* const kOps[] = {"sum"};
const kl_variant_desc kVariants[] = {{"reduce", "from_the_future", "abi_version is one ahead",
                                      nullptr, 0, kDtypes, 1, kOps, 1, 0, nullptr, nullptr, run}};
const kl_plugin kPlugin = {KERNLAB_PLUGIN_ABI_VERSION + 1, "bad_abi", kVariants, 1, nullptr};

}  // namespace

KERNLAB_PLUGIN_EXPORT const kl_plugin* kernlab_plugin(void) { return &kPlugin; }
