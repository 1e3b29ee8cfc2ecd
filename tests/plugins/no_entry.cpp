// Test plugin: a valid shared object with no `kernlab_plugin` symbol. It exports a near miss,
// `kernlab_plugin_v0`, so the test also shows that the entry point is looked up by exact name.
#include <kernlab/plugin_api.h>

namespace {

const kl_plugin kPlugin = {KERNLAB_PLUGIN_ABI_VERSION, "no_entry", nullptr, 0, nullptr};

}  // namespace

KERNLAB_PLUGIN_EXPORT const kl_plugin* kernlab_plugin_v0(void) { return &kPlugin; }
