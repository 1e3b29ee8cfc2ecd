// Test plugin: ABI version 2 with a `release` that appends "released\n" to the file named by the
// environment variable KERNLAB_TEST_RELEASE_MARKER (when set), so a test can see that kernlab
// called it before unloading the plugin.
#include <kernlab/plugin_api.h>

#include <cstdio>
#include <cstdlib>

namespace {

int run(const kl_launch_args*, char* error, size_t capacity) {
  std::snprintf(error, capacity, "release_marker: run is not meant to be timed");
  return KL_STATUS_ERROR;
}

void release(void) {
  const char* path = std::getenv("KERNLAB_TEST_RELEASE_MARKER");
  if (path == nullptr) return;
  if (FILE* f = std::fopen(path, "a")) {
    std::fputs("released\n", f);
    std::fclose(f);
  }
}

const char* const kDtypes[] = {"int32"};
const char* const kOps[] = {"sum"};
const kl_variant_desc kVariants[] = {{"reduce", "with_release", "a version-2 table with release",
                                      nullptr, 0, kDtypes, 1, kOps, 1, 0, nullptr, nullptr, run}};
const kl_plugin kPlugin = {KERNLAB_PLUGIN_ABI_VERSION, "release_marker", kVariants, 1, release};

}  // namespace

KERNLAB_PLUGIN_EXPORT const kl_plugin* kernlab_plugin(void) { return &kPlugin; }
