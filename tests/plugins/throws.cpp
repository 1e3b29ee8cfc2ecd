// Test plugin: run throws a C++ exception internally. The try/catch that every entry point must
// have turns it into KL_STATUS_ERROR with the exception's text; nothing crosses the C boundary.
#include <kernlab/plugin_api.h>

#include <cstdio>
#include <exception>
#include <stdexcept>

namespace {

void do_the_work() { throw std::runtime_error("planted exception from throws plugin"); }

int run(const kl_launch_args*, char* error, size_t capacity) {
  try {
    do_the_work();
    return KL_STATUS_OK;
  } catch (const std::exception& e) {
    std::snprintf(error, capacity, "caught: %s", e.what());
  } catch (...) {
    std::snprintf(error, capacity, "caught: unknown exception");
  }
  return KL_STATUS_ERROR;
}

const char* const kDtypes[] = {"int32"};
const char* const kOps[] = {"sum"};
const kl_variant_desc kVariants[] = {{"reduce", "throws_inside", "run throws, catches, reports",
                                      nullptr, 0, kDtypes, 1, kOps, 1, 0, nullptr, nullptr, run}};
const kl_plugin kPlugin = {KERNLAB_PLUGIN_ABI_VERSION, "throws", kVariants, 1, nullptr};

}  // namespace

KERNLAB_PLUGIN_EXPORT const kl_plugin* kernlab_plugin(void) { return &kPlugin; }
