// Test plugin that does harm while it is loaded or read, one harm per build (KL_HOSTILE, set by
// tests/plugins/CMakeLists.txt). kernlab must refuse each with one warning naming the file and
// the reason, and go on: the probe process takes the harm, never kernlab itself.
//   abort        a constructor calls abort()
//   throws       a constructor throws (std::terminate)
//   exit0        a constructor calls exit(0): the probe ends "successfully" without a word
//   hang         a constructor never returns
//   huge_count   the table says its one variant has 100000 dtypes
//   wild_table   the table's variant array points at unmapped memory
#include <kernlab/plugin_api.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#define KL_STRINGIFY2(x) #x
#define KL_STRINGIFY(x) KL_STRINGIFY2(x)

namespace {

bool is(const char* mode) { return std::strcmp(KL_STRINGIFY(KL_HOSTILE), mode) == 0; }

struct harm_on_load {
  harm_on_load() {
    if (is("abort")) std::abort();
    if (is("throws")) throw std::runtime_error("hostile plugin: thrown from a constructor");
    if (is("exit0")) std::exit(0);
    if (is("hang"))
      for (;;) pause();
  }
};
const harm_on_load harm;

int run(const kl_launch_args*, char* error, size_t capacity) {
  std::snprintf(error, capacity, "hostile: run must never be called");
  return KL_STATUS_ERROR;
}

const char* const kDtypes[] = {"int32"};
const char* const kOps[] = {"sum"};
const kl_variant_desc kVariants[] = {{"reduce", "hostile_" KL_STRINGIFY(KL_HOSTILE),
                                      "must never be listed",  // family, name, summary
                                      nullptr, 0, kDtypes, is("huge_count") ? 100000u : 1u, kOps,
                                      1,  // what it offers
                                      0, nullptr, nullptr, run}};
const kl_variant_desc* const kWild = reinterpret_cast<const kl_variant_desc*>(std::uintptr_t{16});
const kl_plugin kPlugin = {KERNLAB_PLUGIN_ABI_VERSION, "hostile",
                           is("wild_table") ? kWild : kVariants, is("wild_table") ? 2u : 1u,
                           nullptr};

}  // namespace

KERNLAB_PLUGIN_EXPORT const kl_plugin* kernlab_plugin(void) { return &kPlugin; }
