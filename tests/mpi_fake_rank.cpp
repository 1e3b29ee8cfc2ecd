// kernlab's MPI path with fake GPUs, for tests/unit/mpi/test_mpi.cpp: started by mpirun with N
// ranks, rank 0 builds the device pool of kernlab's runs (its own fake GPU, then one lane per other
// rank, mpi::world::remote_lanes) and queues rows; every other rank serves its fake GPU
// (mpi::world::serve). Rank 0 alone writes OUT: each row's records in ticket order, the GPUs,
// which left, and how many rows each ran.
//
//   mpirun -np 3 kernlab_mpi_fake_rank OUT [--rows N] [--lose RANK AFTER] [--stop RANK AFTER]
//                                          [--silence S] [--journal PATH] [--exit CODE]
// --lose: that rank's GPU is lost after AFTER rows (its executor throws device_lost_error).
// --stop: that rank stops itself (SIGSTOP) at its row AFTER, so it never answers again.
// --journal: each row carries its name as its journal key, and every other rank journals the rows
// it runs in its file of journal PATH (PATH.rank<N>), as kernlab's ranks do.
// --exit: rank 0 ends with CODE (as kernlab ends with its command's), which the launcher returns
// even when a lost rank makes rank 0 end the job with MPI_Abort.
#include "mpi/world.hpp"
#include "record/record_json.hpp"
#include "runner/device_pool.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

namespace {

using namespace kl;

// A GPU that passes every row after a few milliseconds, its median 1 + its rank in ms.
class fake_gpu final : public row_executor {
 public:
  fake_gpu(int rank, int lose_after, int stop_at) : lose_after_(lose_after), stop_at_(stop_at) {
    device_.ordinal = rank;
    device_.name = "Fake GPU";
    device_.uuid = "GPU-fake-rank-" + std::to_string(rank);
    device_.cc_major = 9;
    device_.max_threads_per_block = 1024;
  }
  const cuda::device_info& device() override { return device_; }
  std::string clock_status() override { return ""; }
  std::string energy_status() override { return ""; }
  timing_stats launch_floor(const timing_options&) override {
    timing_stats t;
    t.median_ms = 0.002;
    return t;
  }
  int workers_started() const override { return 1; }
  nlohmann::json run_family_job(const std::string&, const std::string&,
                                const nlohmann::json&) override {
    return nullptr;
  }
  result_record run(const row_job& job) override {
    if (lose_after_ >= 0 && runs_ >= lose_after_)
      throw device_lost_error("fake GPU of rank " + std::to_string(device_.ordinal) +
                              " fell off the bus");
    if (stop_at_ >= 0 && runs_ == stop_at_) std::raise(SIGSTOP);
    ++runs_;
    std::this_thread::sleep_for(std::chrono::milliseconds(3 + device_.ordinal));
    result_record r = job.record();
    r.status = outcome::passed;
    timing_stats t;
    t.median_ms = 1 + device_.ordinal;
    r.timing = t;
    return r;
  }

 private:
  cuda::device_info device_;
  int lose_after_, stop_at_;
  int runs_ = 0;
};

row_job job_named(const std::string& name) {
  row_job j;
  j.variant.family = "reduce";
  j.variant.name = name;
  j.block = 256;
  j.cubin = std::string(4096, 'x');  // an image travels with each row
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<mpi::world> world;
  try {
    world = mpi::world::join(argc, argv, {KERNLAB_MPI_TRANSPORT_PATH});
  } catch (const std::exception& e) {
    std::cerr << "kernlab_mpi_fake_rank: " << e.what() << "\n";
    return 1;
  }
  if (!world || argc < 2) {
    std::cerr << "usage: mpirun -np N kernlab_mpi_fake_rank OUT [options]\n";
    return 2;
  }
  const std::string out_path = argv[1];
  int rows = 40, lose_rank = -1, lose_after = -1, stop_rank = -1, stop_at = -1;
  double silence_s = 60;
  mpi::world::rank_journal journal;
  int exit_code = 0;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rows" && i + 1 < argc) {
      rows = std::atoi(argv[++i]);
    } else if (a == "--lose" && i + 2 < argc) {
      lose_rank = std::atoi(argv[++i]);
      lose_after = std::atoi(argv[++i]);
    } else if (a == "--stop" && i + 2 < argc) {
      stop_rank = std::atoi(argv[++i]);
      stop_at = std::atoi(argv[++i]);
    } else if (a == "--silence" && i + 1 < argc) {
      silence_s = std::atof(argv[++i]);
    } else if (a == "--journal" && i + 1 < argc) {
      journal.path = argv[++i];
    } else if (a == "--exit" && i + 1 < argc) {
      exit_code = std::atoi(argv[++i]);
    }
  }
  const int rank = world->rank();
  auto make = [&] {
    return std::make_unique<fake_gpu>(rank, rank == lose_rank ? lose_after : -1,
                                      rank == stop_rank ? stop_at : -1);
  };
  if (rank != 0) return world->serve(make, &journal);

  std::vector<device_pool::lane_factory> lanes = {make};
  mpi::remote_options opt;
  opt.silence_s = silence_s;
  for (auto& lane : world->remote_lanes(opt)) lanes.push_back(std::move(lane));
  nlohmann::json out;
  {
    device_pool pool(lanes);
    // A baseline on every GPU first, rows, another baseline halfway, rows.
    std::vector<std::pair<std::size_t, std::string>> tickets;
    tickets.emplace_back(pool.submit(job_named("baseline0"), true), "baseline0");
    for (int i = 0; i < rows; ++i) {
      if (i == rows / 2) tickets.emplace_back(pool.submit(job_named("baseline1"), true), "");
      const std::string name = "row" + std::to_string(i);
      row_job job = job_named(name);
      if (!journal.path.empty()) job.journal_key = name;
      tickets.emplace_back(pool.submit(std::move(job)), name);
    }
    out["records"] = nlohmann::json::array();
    for (const auto& [ticket, name] : tickets) {
      nlohmann::json t = {{"ticket", ticket}, {"records", nlohmann::json::array()}};
      for (const auto& r : pool.take(ticket)) t["records"].push_back(to_json(r));
      out["records"].push_back(t);
    }
    for (const auto& d : pool.devices()) out["devices"].push_back(d.uuid);
    out["lost"] = pool.lost();
    out["rows_run"] = pool.rows_run();
    // The launch floor, asked of the last rank still in the run.
    for (std::size_t i = pool.size(); i-- > 1;)
      if (pool.lost()[i].empty()) {
        out["launch_floor_ms"] = pool.executor(i).launch_floor({}).median_ms;
        break;
      }
    out["ranks"] = world->size();
  }
  std::ofstream(out_path) << out.dump(1) << "\n";
  world->set_exit_code(exit_code);
  return exit_code;
}
