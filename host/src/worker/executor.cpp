#include "worker/executor.hpp"

#include "exec/family_jobs.hpp"
#include "process/protocol.hpp"
#include "process/worker_process.hpp"
#include "record/record_json.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <optional>
#include <thread>

namespace kl {
namespace {

using namespace worker;
using nlohmann::json;
using clock_type = std::chrono::steady_clock;

// A family job, on the device that `runner` holds (its context is current on this thread).
json family_job(const family_registry& families, const row_runner& runner, const json& m) {
  return run_family_job(families, m.at("family").get<std::string>(),
                        m.at("name").get<std::string>(), m.at("args"), runner.device());
}

class in_process final : public row_executor {
 public:
  in_process(const family_registry& f, int ordinal) : families_(f), runner_(f, ordinal) {}
  json run_family_job(const std::string& family, const std::string& name,
                      const json& args) override {
    return family_job(families_, runner_, {{"family", family}, {"name", name}, {"args", args}});
  }
  const cuda::device_info& device() override { return runner_.device(); }
  std::string clock_status() override { return runner_.clock_status(); }
  std::string energy_status() override { return runner_.energy_status(); }
  timing_stats launch_floor(const timing_options& opt) override {
    return runner_.launch_floor(opt);
  }
  result_record run(const row_job& job) override { return runner_.run(job); }

 private:
  const family_registry& families_;
  row_runner runner_;
};

class isolated final : public row_executor {
 public:
  explicit isolated(worker_options opt) : opt_(std::move(opt)) { start(); }
  ~isolated() override {
    request_exit();
    if (!exit_requested_ || !w_) return;
    try {
      // An orderly exit: under compute-sanitizer this is when the report is written.
      w_->wait_for_exit(static_cast<int>(opt_.shutdown_grace_s * 1000));
    } catch (const protocol_error&) {
    }
  }

  void request_exit() override {
    if (!w_ || exit_requested_) return;
    try {
      w_->send({message_type::shutdown, json::object()});
      exit_requested_ = true;
    } catch (const protocol_error&) {
    }
  }

  const cuda::device_info& device() override { return device_; }
  std::string clock_status() override { return clock_status_; }
  std::string energy_status() override { return energy_status_; }
  int workers_started() const override { return started_; }

  timing_stats launch_floor(const timing_options& opt) override {
    result_record r;
    // kernlab's own empty kernel, the worker's first launch: its wait holds the context's and
    // the module's first loading, which took over 5 s on an H100 while three other test
    // processes started theirs. A hang here is a broken driver, not a user's kernel, so it gets
    // at least a minute whatever --kernel-timeout says.
    const json reply = exchange({{"kind", "floor"}, {"timing", to_json(opt)}}, "the launch floor",
                                r, std::max(opt_.kernel_timeout_s, 60.0));
    if (reply.is_null()) throw std::runtime_error(r.message);
    return timing_stats_from_json(reply.at("timing"));
  }

  result_record run(const row_job& job) override {
    result_record r = job.record();
    r.gpu = device_.identity();  // a crash or a hang is recorded here, on this GPU's row
    if (!w_) restart();
    const json reply =
        exchange({{"kind", "row"}, {"job", to_json(job)}},
                 job.variant.qualified_name() + " block " + std::to_string(job.block), r);
    if (reply.is_null()) return r;  // crashed or timed out: r says so
    return record_from_json(reply.at("record"));
  }

  void prepare(const row_job& job) override {
    if (!w_) return;  // a worker that stopped: the row starts a fresh one, and makes its problem
    row_job light;    // what the problem and a plugin's operation need; not the image
    light.variant = job.variant;
    light.config = job.config;
    light.block = job.block;
    result_record r;
    // Judged by --kernel-timeout as the row is: a plugin that hangs costs that once more, not
    // longer.
    exchange({{"kind", "prepare"}, {"job", to_json(light)}},
             "the problem of " + job.variant.qualified_name(), r);
  }

  json run_family_job(const std::string& family, const std::string& name,
                      const json& args) override {
    result_record r;
    const json reply =
        exchange({{"kind", "family_job"}, {"family", family}, {"name", name}, {"args", args}},
                 family + " " + name, r);
    if (reply.is_null()) throw std::runtime_error(family + " " + name + ": " + r.message);
    if (!reply.at("error").get<std::string>().empty())
      throw std::runtime_error(family + " " + name + ": " + reply.at("error").get<std::string>());
    return reply.at("result");
  }

 private:
  void start() {
    w_ = std::make_unique<worker_process>(opt_.command, opt_.log_path);
    ++started_;
    // Creating the context and compiling the flush kernel takes a second or two.
    const auto ready = w_->receive(120000);
    if (!ready || ready->type != message_type::ready)
      throw std::runtime_error("the worker did not start (" +
                               (ready ? std::string("unexpected message") : w_->stop()) + ")");
    if (!ready->payload.at("ok").get<bool>()) {
      const std::string why = ready->payload.at("error");
      if (ready->payload.value("no_device", false)) throw cuda::no_device_error(why);
      throw std::runtime_error("the worker could not start: " + why);
    }
    device_ = device_from_json(ready->payload.at("device"));
    clock_status_ = ready->payload.at("clock_status");
    energy_status_ = ready->payload.value("energy_status", "");
  }

  // A fresh worker after the last one crashed or hung. One that cannot start means the GPU
  // itself is gone (or unusable): the row about to run never ran, and another GPU may take it.
  void restart() {
    try {
      start();
    } catch (const std::exception& e) {
      throw device_lost_error(
          "GPU " + std::to_string(device_.ordinal) + " (" + device_.name +
          "): no worker could be started after the last one stopped: " + e.what());
    }
  }

  // Sends a job and waits for its result, watching for hangs and deaths. Returns the result's
  // payload, or null after recording a crash or a timeout in `r`.
  // `timeout_s`: the watchdog's limit for this job (default: --kernel-timeout).
  json exchange(const json& job, const std::string& what, result_record& r, double timeout_s = 0) {
    if (!w_) start();
    if (timeout_s <= 0) timeout_s = opt_.kernel_timeout_s;
    const int timeout_ms = static_cast<int>(timeout_s * 1000);
    // A worker that sends nothing at all (not even heartbeats) is given a little longer.
    const int silence_ms = timeout_ms + 5000;
    // The backstop for a hang outside any GPU wait (a plugin blocking inside its own call):
    // no row of the sampling rule's length takes anywhere near this.
    const auto row_limit = std::chrono::seconds(600) + std::chrono::milliseconds(6 * timeout_ms);
    const auto grace = std::chrono::milliseconds(static_cast<int>(opt_.fault_grace_s * 1000));
    const auto began = clock_type::now();
    auto last_message = began;
    std::optional<clock_type::time_point> overdue;  // since a launch passed the time-out
    double wait_ms = 0;                             // the GPU wait the last heartbeat reported...
    auto wait_seen = began;                         // ...and when it came
    const std::string late =
        "a launch did not finish within " + fmt_seconds(timeout_s) + " (--kernel-timeout)";
    try {
      w_->send({message_type::job, job});
      for (;;) {
        const auto m = w_->receive(200);
        if (overdue && clock_type::now() - *overdue > grace)
          return hung(r, what,
                      late + " nor report a fault in the " + fmt_seconds(opt_.fault_grace_s) +
                          " after; the worker was stopped");
        if (!m) {
          if (clock_type::now() - last_message > std::chrono::milliseconds(silence_ms))
            return hung(
                r, what,
                "the worker stopped answering for " + std::to_string(silence_ms / 1000) + " s");
          continue;
        }
        last_message = clock_type::now();
        if (last_message - began > row_limit)
          return hung(r, what,
                      "the row did not finish within " +
                          std::to_string(
                              std::chrono::duration_cast<std::chrono::seconds>(row_limit).count()) +
                          " s");
        if (m->type == message_type::heartbeat) {
          // Past the time-out the launch is a hang, unless the driver reports a fault within the
          // grace: that ends the wait with a sticky error, and the result says CRASHED.
          wait_ms = m->payload.value("gpu_wait_ms", 0.0);
          wait_seen = last_message;
          if (!overdue && wait_ms > timeout_ms) overdue = last_message;
          continue;
        }
        if (m->type != message_type::result) continue;
        const bool fatal = m->payload.value("fatal", false);
        if (fatal) {
          // The worker's context is gone; it exits, and the next row gets a fresh one.
          w_->wait_for_exit();
          w_.reset();
        }
        if (overdue && !fatal) {  // finished, but late: a hang all the same; the worker is fine
          r.status = outcome::timeout;
          r.message = late + " (" + what + ")";
          return nullptr;
        }
        json payload = m->payload;
        if (overdue && payload.contains("record")) {
          // A fault the driver reported in the grace: the row says how late (when the result
          // came, not after the worker's exit), since a fault that comes later reads TIMEOUT.
          const double waited_s =
              (wait_ms +
               std::chrono::duration<double, std::milli>(last_message - wait_seen).count()) /
              1000;
          auto& message = payload["record"]["message"];
          message = message.get<std::string>() + " (reported after about " +
                    fmt_seconds(std::round(waited_s * 10) / 10) + " on the GPU, past the " +
                    fmt_seconds(timeout_s) + " --kernel-timeout)";
        }
        return payload;
      }
    } catch (const protocol_error&) {
      const std::string how = w_->wait_for_exit();
      w_.reset();
      r.status = outcome::crashed;
      r.message = "the worker died (" + how + ") while running " + what;
      return nullptr;
    }
  }

  json hung(result_record& r, const std::string& what, const std::string& why) {
    w_->stop();
    w_.reset();
    r.status = outcome::timeout;
    r.message = why + " (" + what + ")";
    return nullptr;
  }

  static std::string fmt_seconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g s", s);
    return buf;
  }

  worker_options opt_;
  std::unique_ptr<worker_process> w_;
  bool exit_requested_ = false;  // request_exit() sent the worker its shutdown
  cuda::device_info device_;
  std::string clock_status_, energy_status_;
  int started_ = 0;
};

}  // namespace

double fault_grace_for(double kernel_timeout_s) {
  return std::min(std::max(kernel_timeout_s, 10.0), 30.0);
}

json device_to_json(const cuda::device_info& d) {
  return {{"ordinal", d.ordinal},
          {"name", d.name},
          {"uuid", d.uuid},
          {"cc_major", d.cc_major},
          {"cc_minor", d.cc_minor},
          {"sm_count", d.sm_count},
          {"max_threads_per_block", d.max_threads_per_block},
          {"max_threads_per_sm", d.max_threads_per_sm},
          {"max_blocks_per_sm", d.max_blocks_per_sm},
          {"regs_per_sm", d.regs_per_sm},
          {"shared_per_sm", d.shared_per_sm},
          {"l2_bytes", d.l2_bytes},
          {"total_mem", d.total_mem},
          {"sm_clock_khz", d.sm_clock_khz},
          {"mem_clock_khz", d.mem_clock_khz},
          {"bus_width_bits", d.bus_width_bits},
          {"driver_version", d.driver_version}};
}

cuda::device_info device_from_json(const json& j) {
  cuda::device_info d;
  d.ordinal = j.at("ordinal");
  d.name = j.at("name");
  d.uuid = j.at("uuid");
  d.cc_major = j.at("cc_major");
  d.cc_minor = j.at("cc_minor");
  d.sm_count = j.at("sm_count");
  d.max_threads_per_block = j.at("max_threads_per_block");
  d.max_threads_per_sm = j.at("max_threads_per_sm");
  d.max_blocks_per_sm = j.at("max_blocks_per_sm");
  d.regs_per_sm = j.at("regs_per_sm");
  d.shared_per_sm = j.at("shared_per_sm");
  d.l2_bytes = j.at("l2_bytes");
  d.total_mem = j.at("total_mem");
  d.sm_clock_khz = j.at("sm_clock_khz");
  d.mem_clock_khz = j.at("mem_clock_khz");
  d.bus_width_bits = j.at("bus_width_bits");
  d.driver_version = j.at("driver_version");
  return d;
}

std::unique_ptr<row_executor> make_in_process_executor(const family_registry& families,
                                                       int ordinal) {
  return std::make_unique<in_process>(families, ordinal);
}

std::unique_ptr<row_executor> make_isolated_executor(const worker_options& opt) {
  return std::make_unique<isolated>(opt);
}

int worker_main(const family_registry& families, int ordinal) {
  std::mutex write_lock;
  auto send = [&](const message& m) {
    std::lock_guard<std::mutex> lock(write_lock);
    write_message(child_out_fd, m);
  };
  std::unique_ptr<row_runner> runner;
  try {
    runner = std::make_unique<row_runner>(families, ordinal);
    runner->settle();
  } catch (const cuda::no_device_error& e) {
    send({message_type::ready, {{"ok", false}, {"no_device", true}, {"error", e.why()}}});
    return 3;
  } catch (const std::exception& e) {
    send({message_type::ready, {{"ok", false}, {"error", e.what()}}});
    return 1;
  }
  send({message_type::ready,
        {{"ok", true},
         {"device", device_to_json(runner->device())},
         {"clock_status", runner->clock_status()},
         {"energy_status", runner->energy_status()}}});

  // Heartbeats while a job runs: how long the worker has been waiting on the GPU, which is what
  // kernlab's watchdog judges. None while idle, so that an idle worker never fills the pipe.
  std::atomic<bool> busy{false}, done{false};
  std::thread heartbeat([&] {
    while (!done) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (!busy) continue;
      try {
        send({message_type::heartbeat, {{"gpu_wait_ms", cuda::wait_scope::waiting_ms()}}});
      } catch (const protocol_error&) {
        return;
      }
    }
  });
  int code = 0;
  try {
    for (;;) {
      const auto m = read_message(child_in_fd, -1);
      if (!m || m->type == message_type::shutdown) break;
      if (m->type != message_type::job) continue;
      busy = true;
      json reply;
      if (m->payload.at("kind") == "floor") {
        reply = {{"timing", to_json(runner->launch_floor(
                                timing_options_from_json(m->payload.at("timing"))))}};
      } else if (m->payload.at("kind") == "prepare") {
        // A problem that cannot be made here is the row's to report, when it runs.
        try {
          runner->prepare(job_from_json(m->payload.at("job")));
          reply = {{"error", ""}};
        } catch (const cuda::cuda_error& e) {
          reply = {{"error", e.what()}, {"fatal", is_sticky(e.code())}};
          if (is_sticky(e.code())) code = 4;
        } catch (const std::exception& e) {
          reply = {{"error", e.what()}};
        }
      } else if (m->payload.at("kind") == "family_job") {
        // Its failure is the reply's error; a sticky CUDA error ends this worker like a row's.
        try {
          reply = {{"result", family_job(families, *runner, m->payload)}, {"error", ""}};
        } catch (const cuda::cuda_error& e) {
          reply = {{"result", nullptr}, {"error", e.what()}, {"fatal", is_sticky(e.code())}};
          if (is_sticky(e.code())) code = 4;
        } catch (const std::exception& e) {
          reply = {{"result", nullptr}, {"error", e.what()}};
        }
      } else {
        reply = {{"record", to_json(runner->run(job_from_json(m->payload.at("job"))))},
                 {"fatal", runner->context_lost()}};
      }
      busy = false;
      send({message_type::result, reply});
      if (code == 4) break;  // a family job lost the context
      if (runner->context_lost()) {
        code = 4;  // nothing more can run in this context: kernlab starts a fresh worker
        break;
      }
    }
  } catch (const protocol_error&) {
    // kernlab has gone away.
  }
  done = true;
  heartbeat.join();
  return code;
}

}  // namespace kl
