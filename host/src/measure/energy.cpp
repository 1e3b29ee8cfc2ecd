#include "measure/energy.hpp"

#include "cuda/resources.hpp"
#include "measure/nvml.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace kl {

nvml_power_meter::nvml_power_meter(const nvml_library& nvml, const std::string& uuid)
    : nvml_(nvml) {
  if (!nvml.available()) {
    why_ = "NVML not available: " + nvml.why_unavailable();
    return;
  }
  device_ = nvml.device_by_uuid(uuid, why_);
  if (!device_) return;
  if (!nvml.total_energy_mj(device_, &why_no_counter_)) {
    if (!nvml.power_mw(device_))
      why_ = "NVML reads neither the energy counter (" + why_no_counter_ + ") nor the power of " +
             uuid;
  } else {
    why_no_counter_.clear();
  }
  if (!why_.empty()) device_ = nullptr;
}

std::optional<std::uint64_t> nvml_power_meter::energy_mj() {
  if (!device_ || !why_no_counter_.empty()) return std::nullopt;
  return nvml_.total_energy_mj(device_);
}

std::optional<double> nvml_power_meter::power_w() {
  const auto mw = device_ ? nvml_.power_mw(device_) : std::nullopt;
  if (!mw) return std::nullopt;
  return *mw / 1000.0;
}

std::vector<energy_trace::reading> counter_updates(const std::vector<energy_trace::reading>& r,
                                                   double from, double until) {
  std::vector<energy_trace::reading> out;
  for (std::size_t i = 1; i < r.size(); ++i) {
    if (r[i].mj < r[i - 1].mj)
      throw std::runtime_error("the energy counter went backwards (" + std::to_string(r[i].mj) +
                               " mJ read after " + std::to_string(r[i - 1].mj) + " mJ)");
    if (r[i].mj == r[i - 1].mj) continue;
    // The update happened between the two readings: placed midway, it is off by at most half
    // the polling interval.
    const double t = 0.5 * (r[i - 1].t + r[i].t);
    if (t >= from && t <= until) out.push_back({t, r[i].mj});
  }
  return out;
}

energy_stats energy_from_trace(const energy_trace& tr) {
  energy_stats s;
  s.operations = tr.operations;
  if (tr.operations == 0 || !(tr.gpu_seconds > 0)) {
    s.error = "the energy loop ran no operation";
    return s;
  }
  const double seconds_per_op = tr.gpu_seconds / static_cast<double>(tr.operations);
  s.us_per_op = seconds_per_op * 1e6;

  // The second source: the power samples inside the busy window, weighted by the time each
  // stands for (trapezoids between neighbours).
  std::vector<energy_trace::sample> inside;
  for (const auto& p : tr.power)
    if (p.t >= tr.busy_from && p.t <= tr.busy_until) inside.push_back(p);
  s.power_samples = inside.size();
  double samples_span = 0;
  if (inside.size() == 1) {
    s.sampled_watts = inside.front().watts;
  } else if (inside.size() > 1) {
    double area = 0;
    for (std::size_t i = 1; i < inside.size(); ++i)
      area += 0.5 * (inside[i].watts + inside[i - 1].watts) * (inside[i].t - inside[i - 1].t);
    samples_span = inside.back().t - inside.front().t;
    double sum = 0;
    for (const auto& p : inside) sum += p.watts;
    s.sampled_watts = samples_span > 0 ? area / samples_span : sum / inside.size();
  }

  if (tr.counter_supported) {
    const auto ups = counter_updates(tr.counter, tr.busy_from, tr.busy_until);
    s.counter_updates = ups.size();
    if (ups.size() >= 2 && ups.back().t > ups.front().t) {
      s.method = "counter";
      s.window_s = ups.back().t - ups.front().t;
      s.watts = static_cast<double>(ups.back().mj - ups.front().mj) / 1000.0 / s.window_s;
      s.joules_per_op = s.watts * seconds_per_op;
      return s;
    }
    char what[160];
    std::snprintf(what, sizeof what, "the energy counter moved %zu time(s) in the %.2f s window",
                  ups.size(), tr.busy_until - tr.busy_from);
    s.note = what;
  } else {
    s.note = "the device has no energy counter";
  }
  if (inside.empty()) {
    s.error = s.note + ", and no power sample could be read";
    return s;
  }
  s.method = "power samples";
  s.watts = s.sampled_watts;
  s.window_s = samples_span;
  s.joules_per_op = s.watts * seconds_per_op;
  return s;
}

namespace {

using clock_type = std::chrono::steady_clock;

// Polls a meter on a thread of its own, from construction until stop(): the counter about every
// millisecond, the power every 5 ms (an NVML call takes tens of microseconds).
class sampler {
 public:
  explicit sampler(power_meter& meter) : meter_(meter), origin_(clock_type::now()) {
    const auto first = meter_.energy_mj();
    trace_.counter_supported = first.has_value();
    if (first) trace_.counter.push_back({now(), *first});
    thread_ = std::thread([this] { loop(); });
  }
  ~sampler() { stop(); }
  sampler(const sampler&) = delete;
  sampler& operator=(const sampler&) = delete;

  double now() const { return std::chrono::duration<double>(clock_type::now() - origin_).count(); }
  bool counter_supported() const { return trace_.counter_supported; }
  /// The counter's updates seen after `t` so far.
  std::size_t updates_since(double t) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<std::size_t>(
        change_times_.end() - std::lower_bound(change_times_.begin(), change_times_.end(), t));
  }
  void stop() {
    done_ = true;
    if (thread_.joinable()) thread_.join();
  }
  energy_trace take() {
    stop();
    return std::move(trace_);
  }

 private:
  void loop() {
    double next_power = 0;
    while (!done_) {
      const double t = now();
      if (trace_.counter_supported)
        if (const auto mj = meter_.energy_mj()) {
          std::lock_guard<std::mutex> lock(mutex_);
          if (!trace_.counter.empty() && *mj != trace_.counter.back().mj)
            change_times_.push_back(0.5 * (trace_.counter.back().t + t));
          trace_.counter.push_back({t, *mj});
        }
      if (t >= next_power) {
        if (const auto w = meter_.power_w()) {
          std::lock_guard<std::mutex> lock(mutex_);
          trace_.power.push_back({t, *w});
        }
        next_power = t + 0.005;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(1000));
    }
  }

  power_meter& meter_;
  clock_type::time_point origin_;
  mutable std::mutex mutex_;
  energy_trace trace_;
  std::vector<double> change_times_;
  std::atomic<bool> done_{false};
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace

energy_stats measure_energy(const energy_workload& work, power_meter& meter,
                            const energy_options& opt, double seconds_per_op) {
  // Chunks of about 10 ms, two in flight: the GPU always has the next one queued while the host
  // waits for the last, so it never idles, and the host looks at the clock every 10 ms.
  constexpr double chunk_s = 0.01;
  const double per = seconds_per_op > 0 ? std::ceil(chunk_s / seconds_per_op) : 1.0;
  const auto per_chunk = static_cast<std::uint64_t>(std::clamp(per, 1.0, 1048576.0));
  sampler meter_thread(meter);
  std::uint64_t ops = 0;
  work.enqueue(per_chunk);
  work.enqueue(per_chunk);
  ops += 2 * per_chunk;
  work.wait_oldest();
  // From here until the loop ends the GPU runs the operation without a break: a chunk is always
  // queued behind the one running.
  const double from = meter_thread.now();
  for (;;) {
    work.enqueue(per_chunk);
    ops += per_chunk;
    work.wait_oldest();
    const double elapsed = meter_thread.now() - from;
    if (elapsed >= opt.min_time_s + opt.cap_s) break;
    if (elapsed >= opt.min_time_s &&
        (!meter_thread.counter_supported() ||
         meter_thread.updates_since(from) >= static_cast<std::size_t>(opt.min_updates)))
      break;
  }
  const double until = meter_thread.now();
  const double gpu_seconds = work.finish();
  energy_trace trace = meter_thread.take();
  trace.busy_from = from;
  trace.busy_until = until;
  trace.operations = ops;
  trace.gpu_seconds = gpu_seconds;
  try {
    return energy_from_trace(trace);
  } catch (const std::runtime_error& e) {
    // A reading that makes no sense costs the row its energy figures, not its timing.
    energy_stats s;
    s.operations = ops;
    s.error = e.what();
    return s;
  }
}

energy_stats measure_energy(const std::function<void(CUstream)>& op, CUstream stream,
                            power_meter& meter, const energy_options& opt, double seconds_per_op) {
  cuda::event start;
  cuda::event marks[3];  // at most two chunks are in flight
  std::size_t oldest = 0, pending = 0, last = 0;
  bool started = false;
  energy_workload work;
  work.enqueue = [&](std::uint64_t n) {
    if (!started) {
      start.record(stream);
      started = true;
    }
    for (std::uint64_t i = 0; i < n; ++i) op(stream);
    last = (oldest + pending) % 3;
    marks[last].record(stream);
    ++pending;
  };
  work.wait_oldest = [&] {
    marks[oldest].synchronize();  // a wait the watchdog sees
    oldest = (oldest + 1) % 3;
    --pending;
  };
  work.finish = [&] {
    marks[last].synchronize();
    pending = 0;
    return marks[last].elapsed_since(start) / 1e3;
  };
  return measure_energy(work, meter, opt, seconds_per_op);
}

}  // namespace kl
