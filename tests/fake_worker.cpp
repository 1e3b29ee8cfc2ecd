// A stand-in for `kernlab --worker` that misbehaves on request, for the worker-protocol tests:
// each job's "action" says what to do.
#include "process/protocol.hpp"
#include "process/worker_process.hpp"

#include <unistd.h>
#include <csignal>

using namespace kl::worker;

int main() {
  write_message(child_out_fd, {message_type::ready, {{"device", "fake"}}});
  for (;;) {
    std::optional<message> m;
    try {
      m = read_message(child_in_fd, -1);
    } catch (const protocol_error&) {
      return 0;  // kernlab went away
    }
    if (m->type == message_type::shutdown) return 0;
    const std::string action = m->payload.value("action", "echo");
    if (action == "echo") {
      write_message(child_out_fd, {message_type::result, m->payload});
    } else if (action == "heartbeats") {  // progress, then the result
      for (int i = 0; i < 3; ++i)
        write_message(child_out_fd, {message_type::heartbeat, {{"gpu_wait_ms", 1.0 * i}}});
      write_message(child_out_fd, {message_type::result, m->payload});
    } else if (action == "exit") {
      _exit(7);
    } else if (action == "segv") {
      std::raise(SIGSEGV);
    } else if (action == "hang") {
      for (;;) pause();
    } else if (action == "garbage") {
      const unsigned char junk[] = {0xff, 0xff, 0xff, 0x7f, 0x09};
      (void)!write(child_out_fd, junk, sizeof junk);
      pause();
    } else if (action == "print") {  // stdout must not reach the protocol
      std::printf("noise on stdout\n");
      std::fflush(stdout);
      write_message(child_out_fd, {message_type::result, m->payload});
    }
  }
}
