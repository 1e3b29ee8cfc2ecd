// A stand-in for `kernlab --worker` that misbehaves on request, for the worker-protocol tests:
// each job's "action" says what to do. With --rows [EXIT_MS [PREPARE_MS]] it is a worker the
// executor accepts (a device in its ready message) that passes every row job without running
// anything and prints the job's NVTX range, for the --profile tests (a fake ncu starts it,
// tests/unit/measure/test_profile.cpp), and, for the watchdog's tests
// (tests/unit/worker/test_worker.cpp), waits past the time-out for variants named so.
#include "process/protocol.hpp"
#include "process/worker_process.hpp"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

using namespace kl::worker;

namespace {

// exit_ms: how long it takes to exit once asked, as a worker tearing its context down does;
// prepare_ms: how long it takes to make a problem (a "prepare" job, which it prints).
int row_worker(int exit_ms, int prepare_ms) {
  const nlohmann::json device = {{"ordinal", 0},
                                 {"name", "Fake GPU"},
                                 {"uuid", "GPU-fake"},
                                 {"cc_major", 9},
                                 {"cc_minor", 0},
                                 {"sm_count", 132},
                                 {"max_threads_per_block", 1024},
                                 {"max_threads_per_sm", 2048},
                                 {"max_blocks_per_sm", 32},
                                 {"regs_per_sm", 65536},
                                 {"shared_per_sm", 233472},
                                 {"l2_bytes", 52428800},
                                 {"total_mem", 85899345920ull},
                                 {"sm_clock_khz", 1980000},
                                 {"mem_clock_khz", 2619000},
                                 {"bus_width_bits", 5120},
                                 {"driver_version", 13000}};
  write_message(child_out_fd,
                {message_type::ready, {{"ok", true}, {"device", device}, {"clock_status", ""}}});
  for (;;) {
    std::optional<message> m;
    try {
      m = read_message(child_in_fd, -1);
    } catch (const protocol_error&) {
      return 0;
    }
    if (m->type == message_type::shutdown) {
      std::this_thread::sleep_for(std::chrono::milliseconds(exit_ms));
      return 0;
    }
    const nlohmann::json& job = m->payload.at("job");
    if (m->payload.value("kind", "") == "prepare") {
      std::printf("prepare %s seed %d\n", job.at("row").at("variant").value("name", "").c_str(),
                  job.at("row").at("config").value("seed", 0));
      std::fflush(stdout);
      std::this_thread::sleep_for(std::chrono::milliseconds(prepare_ms));
      write_message(child_out_fd, {message_type::result, {{"error", ""}}});
      continue;
    }
    std::printf("profile_range %s\n", job.value("profile_range", std::string()).c_str());
    std::fflush(stdout);
    nlohmann::json record = job.at("row");
    record["outcome"] = "passed";
    // Variants named for the watchdog's tests wait "on the GPU" first, as a worker does, with
    // heartbeats: 1.5 s, then a fault (late_fault) or an answer (late_finish), or for ever (hang).
    const std::string name = record.at("variant").value("name", "");
    if (name == "late_fault" || name == "late_finish" || name == "hang") {
      const auto began = std::chrono::steady_clock::now();
      for (double waited = 0; name == "hang" || waited < 1500;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        waited = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began)
                     .count();
        write_message(child_out_fd, {message_type::heartbeat, {{"gpu_wait_ms", waited}}});
      }
    }
    if (name == "late_fault") {  // a sticky error: the context is gone, and so is the worker
      record["outcome"] = "crashed";
      record["message"] =
          "cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was "
          "encountered";
      write_message(child_out_fd, {message_type::result, {{"record", record}, {"fatal", true}}});
      return 4;
    }
    write_message(child_out_fd, {message_type::result, {{"record", record}, {"fatal", false}}});
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "--rows")
    return row_worker(argc > 2 ? std::atoi(argv[2]) : 0, argc > 3 ? std::atoi(argv[3]) : 0);
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
