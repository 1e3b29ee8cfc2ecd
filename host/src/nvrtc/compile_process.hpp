// One NVRTC compile in a child process, so that a compile that does not finish can be stopped.
//
// NVRTC cannot cancel a compile from another thread, and a generated kernel of a few MB can keep
// it busy for many minutes. The child is kernlab's own binary in a hidden mode
// (`kernlab --compile-child`, which runs compile_child_main()): the request goes to its stdin,
// the result (image, log, diagnostics, resource report) comes back on its stdout, both as CBOR.
// A child past its time is killed; one that crashes (NVRTC itself) fails its file alone.
#pragma once

#include "nvrtc/compiler.hpp"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kl::nvrtc {

/// The compile of a file did not finish in time; its child was killed.
class compile_timeout_error : public nvrtc_error {
 public:
  compile_timeout_error(const std::string& path, double seconds);
  const std::string& path() const { return path_; }
  double seconds() const { return seconds_; }

 private:
  std::string path_;
  double seconds_;
};

/// The compile of a file was stopped before it finished, as its caller asked (Ctrl-C); its child
/// was killed. Not the file's fault: no verdict on it.
class compile_stopped_error : public nvrtc_error {
 public:
  explicit compile_stopped_error(const std::string& path);
};

/// Compiles `request` in a child started as `command` (e.g. {"/path/kernlab",
/// "--compile-child"}). Throws compile_timeout_error after `timeout_s` seconds (the child is
/// killed then), compile_stopped_error within 0.1 s of `stop_when` saying true (it is asked all
/// along; the child is killed too), and nvrtc_error when the child cannot be started, fails in
/// NVRTC, crashes or answers nonsense (the message says which, naming the file). The child
/// ends when this process ends (core/lifeline.hpp).
compile_result compile_in_child(const compile_request& request,
                                const std::vector<std::string>& command, double timeout_s,
                                const std::function<bool()>& stop_when = {});

/// The child's side: reads one request from stdin, compiles it, writes the result to stdout.
/// Returns the process's exit code (0 also when the kernel has a compile error: that is a result).
int compile_child_main();

// The messages in bytes (exposed for tests). decode_* throw nvrtc_error saying what is wrong.
std::string encode_request(const compile_request& request);
compile_request decode_request(std::string_view bytes);
/// A result, or (with `error` not empty) the nvrtc_error the child's compile threw.
std::string encode_reply(const compile_result& result, const std::string& error = "");
/// The result in a reply; rethrows the child's nvrtc_error as one.
compile_result decode_reply(std::string_view bytes);

}  // namespace kl::nvrtc
