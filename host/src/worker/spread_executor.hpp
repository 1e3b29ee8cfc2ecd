// A row's placements spread over several worker processes on one GPU.
//
// Placements inside one process share what a process fixes once: which physical pages the driver
// hands it, where its modules' code lands, its context's own allocations. Measured on an H200, a
// row's median moved about twice as much between two processes as between the placements of one
// (docs/measuring.md), so an interval made from one process's placements was too narrow. Here
// placement i of a row runs in worker (first + i) mod N, each worker moving the problem before
// it times the row a second time, and the row's interval is made from all the placements'
// medians (measure/timing.hpp, combine_placements): it covers what moves between processes.
//
// Each placement is a full run of the row in its worker: validated there, then timed once. The
// row's record is the first placement's, with the timing of all of them; a placement that does
// not pass (a wrong result in one process only, a crash) is the row's record, as it is.
#pragma once

#include "worker/executor.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace kl {

/// Whether a row may spread over the workers of this GPU (false keeps it in the first: a problem
/// too large to be held by every worker at once).
using spread_predicate = std::function<bool(const row_job&, const cuda::device_info&)>;

/// `members` run rows on one GPU (device(), launch_floor() and the statuses are the first's).
/// With one member, or for a row timed in one placement, rows run in the first as they are.
/// `status`: why there are fewer members than asked for ("" when there are as many).
std::unique_ptr<row_executor> make_spread_executor(
    std::vector<std::unique_ptr<row_executor>> members, spread_predicate spreads,
    std::string status = "");

}  // namespace kl
