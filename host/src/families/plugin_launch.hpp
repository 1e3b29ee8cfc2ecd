// The plugin side of an operation, the same for every family: the launch arguments that cross
// the C ABI, the workspace the plugin asks for, and its status codes turned into exceptions.
#pragma once

#include "cuda/resources.hpp"
#include "families/operation.hpp"

#include <kernlab/plugin_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace kl {

/// A plugin function reported KL_STATUS_ERROR; what() carries the plugin's message.
class plugin_call_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What a family passes to a plugin variant (plugin_api.h says what each family's are).
struct plugin_arguments {
  std::string family, dtype, op;
  std::vector<const void*> inputs;  ///< device pointers
  std::vector<void*> outputs;       ///< device pointers
  std::vector<std::uint64_t> sizes;
};

/// One plugin variant bound to one configuration's buffers. The constructor asks for the
/// workspace and allocates it, then calls prepare and waits for it: all outside the timed
/// region. KL_STATUS_UNSUPPORTED from any call throws not_supported (the row is skipped with the
/// plugin's message), KL_STATUS_ERROR throws plugin_call_error (the row fails with it).
class plugin_launch {
 public:
  plugin_launch(const plugin_kernel& k, plugin_arguments args);
  plugin_launch(const plugin_launch&) = delete;
  plugin_launch& operator=(const plugin_launch&) = delete;

  /// Calls the variant's run function on `stream`.
  void run(CUstream stream);

 private:
  void call(const char* what, int status);

  plugin_kernel kernel_;
  plugin_arguments owned_;  // the strings and arrays args_ points into
  cuda::device_buffer workspace_;
  kl_launch_args args_{};
  char error_[1024] = {};
};

}  // namespace kl
