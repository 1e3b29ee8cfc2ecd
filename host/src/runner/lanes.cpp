// Where rows run: a worker process per GPU (or kernlab itself), several per GPU when a row's
// placements spread over them, and the device pool's lanes.
#include "runner/runner.hpp"

#include "worker/spread_executor.hpp"

#include <algorithm>
#include <future>
#include <string>

namespace kl {
std::unique_ptr<row_executor> make_executor(const family_registry& families,
                                            const run_request& request,
                                            const std::vector<std::string>& prefix,
                                            const std::string& log, int ordinal) {
  if (ordinal < 0) ordinal = request.devices.empty() ? 0 : request.devices.front();
  if (request.in_process) return make_in_process_executor(families, ordinal);
  if (request.worker_command.empty())
    throw std::logic_error("run_request: no worker command (set worker_command or in_process)");
  worker_options o;
  o.command = request.worker_command;
  // Device 0 is the worker's default: its command stays as it always was.
  if (ordinal != 0) {
    o.command.push_back("--device");
    o.command.push_back(std::to_string(ordinal));
  }
  o.command.insert(o.command.begin(), prefix.begin(), prefix.end());
  o.kernel_timeout_s = request.kernel_timeout_s;
  o.fault_grace_s = fault_grace_for(request.kernel_timeout_s);
  o.log_path = log;
  if (!prefix.empty()) o.shutdown_grace_s = 120;  // a sanitizer's report takes its time
  return make_isolated_executor(o);
}

// GPU `ordinal`'s executor. With --placement-workers N (rows in workers, timed in more than one
// placement), N workers started side by side, whose placements each row spreads over
// (worker/spread_executor.hpp). A worker beyond the first that cannot start (a GPU in
// exclusive-process mode) leaves the placements to fewer, and the run says why.
std::unique_ptr<row_executor> gpu_executor(const family_registry& families,
                                           const run_request& request, int ordinal) {
  auto one = [&families, &request, ordinal]() -> std::unique_ptr<row_executor> {
    return request.executor_factory ? request.executor_factory(ordinal)
                                    : make_executor(families, request, {}, "", ordinal);
  };
  const timing_options& t = request.timing;
  const int n = request.in_process
                    ? 1
                    : std::clamp(t.placement_workers, 1, std::max(t.placements, t.max_placements));
  if (n == 1) return one();
  std::vector<std::future<std::unique_ptr<row_executor>>> others;
  for (int i = 1; i < n; ++i) others.push_back(std::async(std::launch::async, one));
  std::vector<std::unique_ptr<row_executor>> members;
  members.push_back(one());  // throws as a GPU's only worker would
  std::string why;
  for (auto& f : others) {
    try {
      members.push_back(f.get());
    } catch (const std::exception& e) {
      if (why.empty()) why = e.what();
    }
  }
  std::string status;
  if (!why.empty())
    status = "rows' placements ran in " + std::to_string(members.size()) +
             " worker process(es) of " + std::to_string(n) +
             " (--placement-workers), so their intervals may miss what moves "
             "between processes: " +
             why;
  // A problem every worker holds at once must fit them all, with room to move (relocate()).
  auto spreads = [&families, n](const row_job& job, const cuda::device_info& d) {
    const family* f = families.find(job.variant.family);
    if (!f || d.total_mem == 0) return false;
    try {
      return f->device_bytes_needed(job.config) * static_cast<std::size_t>(n) <= d.total_mem / 2;
    } catch (const std::exception&) {
      return false;
    }
  };
  return make_spread_executor(std::move(members), spreads, status);
}

std::vector<device_pool::lane_factory> lanes_for(const family_registry& families,
                                                 const run_request& request) {
  const std::vector<int> ordinals = request.devices.empty() ? std::vector<int>{0} : request.devices;
  const bool several = ordinals.size() + request.remote_lanes.size() > 1;
  std::vector<device_pool::lane_factory> lanes;
  for (int ordinal : ordinals)
    lanes.emplace_back([&families, &request, ordinal, several]() -> std::unique_ptr<row_executor> {
      try {
        return gpu_executor(families, request, ordinal);
      } catch (const cuda::no_device_error&) {
        throw;
      } catch (const std::exception& e) {
        if (!several) throw;
        throw std::runtime_error("GPU " + std::to_string(ordinal) + ": " + e.what());
      }
    });
  for (const auto& remote : request.remote_lanes) lanes.push_back(remote);
  return lanes;
}

}  // namespace kl
