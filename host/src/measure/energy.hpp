// Energy: what a row's operation costs in joules, read from NVML while the operation runs back to
// back after it was timed (--energy).
//
// The primary source is the device's energy counter (nvmlDeviceGetTotalEnergyConsumption,
// millijoules since the driver was loaded, Volta and newer). It advances in steps, every few tens
// of milliseconds, so a window is measured between two of its updates rather than between two
// arbitrary readings: a thread polls it every millisecond or so, and each update is placed
// midway between the reading that saw it and the one before. The window lasts at least
// --energy-time and until the counter has moved several times (with a cap). The average power is
// the energy between the first and the last update inside the busy window divided by the time
// between them; joules per operation is that power times the GPU time per operation (CUDA events
// around the whole loop). Power samples (nvmlDeviceGetPowerUsage) are taken on the same thread as
// a second source, and are the method where the counter is missing or does not move.
//
// The loop runs the operation alone, back to back, with no L2 flush between runs: what a kernel
// costs when called repeatedly. Its own time per operation is reported beside the figures.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kl {

class nvml_library;

/// --energy and --energy-time.
struct energy_options {
  bool enabled = false;
  double min_time_s = 0.5;  ///< the busy window lasts at least this long
  int min_updates = 5;      ///< ... and until the counter has moved this often inside it
  double cap_s = 10;        ///< ... or until min_time_s + cap_s at the latest
};

/// A row's energy figures. `error` non-empty: energy was asked for and could not be measured.
struct energy_stats {
  std::string method;               ///< "counter" or "power samples"
  double joules_per_op = 0;         ///< average watts x GPU seconds per operation
  double watts = 0;                 ///< average power while the operation ran back to back
  double window_s = 0;              ///< the time the average is taken over
  double us_per_op = 0;             ///< GPU time per operation in the energy loop (no flush)
  std::uint64_t operations = 0;     ///< operations the energy loop ran
  std::size_t counter_updates = 0;  ///< times the counter moved inside the window
  std::size_t power_samples = 0;    ///< power samples inside the window
  double sampled_watts = 0;  ///< the mean of those samples (the second source); 0 without any
  std::string note;          ///< why the method is not the counter, when it is not
  std::string error;

  bool measured() const { return error.empty() && joules_per_op > 0; }
};

/// Where readings come from: NVML for a device, or a fake in the tests.
class power_meter {
 public:
  virtual ~power_meter() = default;
  /// The energy counter in millijoules; nullopt when the device has none.
  virtual std::optional<std::uint64_t> energy_mj() = 0;
  /// The power draw in watts; nullopt when it cannot be read.
  virtual std::optional<double> power_w() = 0;
};

/// NVML's readings for the device with this UUID. `nvml` must outlive it.
class nvml_power_meter final : public power_meter {
 public:
  nvml_power_meter(const nvml_library& nvml, const std::string& uuid);
  /// Why nothing can be read ("" when something can): NVML missing, or the device unknown to it.
  const std::string& why_unavailable() const { return why_; }
  /// Why the counter cannot be read ("" when it can): the samples are then the only source.
  const std::string& why_no_counter() const { return why_no_counter_; }
  std::optional<std::uint64_t> energy_mj() override;
  std::optional<double> power_w() override;

 private:
  const nvml_library& nvml_;
  void* device_ = nullptr;
  std::string why_, why_no_counter_;
};

/// What the meter read during one window, on the host's clock (seconds from any origin).
struct energy_trace {
  struct reading {
    double t = 0;
    std::uint64_t mj = 0;
  };
  struct sample {
    double t = 0;
    double watts = 0;
  };
  bool counter_supported = true;
  std::vector<reading> counter;  ///< every reading, in time order
  std::vector<sample> power;     ///< every sample, in time order
  /// The interval in which the GPU certainly ran the operation back to back.
  double busy_from = 0, busy_until = 0;
  std::uint64_t operations = 0;  ///< operations run in the whole loop
  double gpu_seconds = 0;        ///< the loop's GPU time, first operation to last
};

/// The figures a trace gives (the arithmetic, apart from any device). A counter that goes
/// backwards throws std::runtime_error; a window the counter never moved in falls back to the
/// power samples, with a note; with neither, the stats carry an error.
energy_stats energy_from_trace(const energy_trace& trace);

/// The counter's updates inside [from, until]: (time, millijoules) of each, its time midway
/// between the reading that saw it and the one before. Throws std::runtime_error when the counter
/// goes backwards.
std::vector<energy_trace::reading> counter_updates(const std::vector<energy_trace::reading>& r,
                                                   double from, double until);

/// The device side of the loop, so that the loop can be driven by a fake in the tests.
struct energy_workload {
  std::function<void(std::uint64_t ops)> enqueue;  ///< queues `ops` runs, then marks a chunk
  std::function<void()> wait_oldest;               ///< waits for the oldest marked chunk
  std::function<double()> finish;  ///< waits for everything; the GPU seconds of all the runs
};

/// Runs the loop: chunks of about 10 ms (from `seconds_per_op`, the timed median), two in flight,
/// while a thread polls `meter`, until the window is long enough (energy_options).
energy_stats measure_energy(const energy_workload& work, power_meter& meter,
                            const energy_options& opt, double seconds_per_op);

/// The loop on a stream: `op` enqueues one operation.
energy_stats measure_energy(const std::function<void(CUstream)>& op, CUstream stream,
                            power_meter& meter, const energy_options& opt, double seconds_per_op);

}  // namespace kl
