#include "families/plugin_launch.hpp"

namespace kl {

plugin_launch::plugin_launch(const plugin_kernel& k, plugin_arguments args)
    : kernel_(k), owned_(std::move(args)) {
  args_.family = owned_.family.c_str();
  args_.dtype = owned_.dtype.c_str();
  args_.op = owned_.op.c_str();
  args_.inputs = owned_.inputs.data();
  args_.num_inputs = static_cast<std::uint32_t>(owned_.inputs.size());
  args_.outputs = owned_.outputs.data();
  args_.num_outputs = static_cast<std::uint32_t>(owned_.outputs.size());
  args_.sizes = owned_.sizes.data();
  args_.num_sizes = static_cast<std::uint32_t>(owned_.sizes.size());
  args_.block_size = k.block;
  if (k.desc->workspace_size) {
    std::uint64_t bytes = 0;
    call("workspace_size", k.desc->workspace_size(&args_, &bytes, error_, sizeof error_));
    workspace_ = cuda::device_buffer(bytes);
    args_.workspace = workspace_.as_ptr();
    args_.workspace_bytes = bytes;
  }
  if (k.desc->prepare) call("prepare", k.desc->prepare(&args_, error_, sizeof error_));
  cuda::synchronize_context();
}

void plugin_launch::run(CUstream stream) {
  args_.stream = stream;
  call("run", kernel_.desc->run(&args_, error_, sizeof error_));
}

void plugin_launch::call(const char* what, int status) {
  if (status == KL_STATUS_OK) return;
  error_[sizeof error_ - 1] = '\0';
  const std::string message = error_[0] ? error_ : "(no message)";
  if (status == KL_STATUS_UNSUPPORTED)
    throw not_supported("the plugin does not offer this (" + std::string(what) + "): " + message);
  throw plugin_call_error(std::string("plugin ") + what + " failed: " + message);
}

}  // namespace kl
