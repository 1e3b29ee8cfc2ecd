// kernlab under mpirun without a GPU: the launcher's environment, then 2 to 3 ranks of
// tests/mpi_fake_rank.cpp (rank 0's device pool over every rank's fake GPU: rows measured once
// each, read back in ticket order, a baseline on every GPU, a rank's lost GPU or a rank gone
// silent with its rows run elsewhere), then the kernlab binary itself under mpirun (only rank 0
// writes, --devices refused, a kernlab without the MPI transport refuses to start); then the same
// under Slurm's srun --mpi=pmix, and srun --mpi=none refused. The mpirun tests skip, saying why,
// in a build without MPI (KERNLAB_MPI) or without mpirun; the srun tests where no Slurm answers
// (CI: scripts/slurm_local.sh starts a one-node Slurm on a developer's machine).
#include "mpi/world.hpp"
#include "runner/journal.hpp"
#include "test_util.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

namespace kl {
namespace {

// Sets environment variables for one test, restoring them after.
class scoped_env {
 public:
  void set(const std::string& name, const char* value) {
    if (!saved_.count(name)) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    if (value)
      ::setenv(name.c_str(), value, 1);
    else
      ::unsetenv(name.c_str());
  }
  ~scoped_env() {
    for (const auto& [name, value] : saved_) {
      if (value)
        ::setenv(name.c_str(), value->c_str(), 1);
      else
        ::unsetenv(name.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

const char* launcher_vars[] = {"OMPI_COMM_WORLD_SIZE",
                               "OMPI_COMM_WORLD_RANK",
                               "OMPI_COMM_WORLD_LOCAL_RANK",
                               "PMIX_RANK",
                               "PMI_SIZE",
                               "PMI_RANK",
                               "SLURM_STEP_NUM_TASKS",
                               "SLURM_NTASKS",
                               "SLURM_LOCALID",
                               "SLURM_PROCID",
                               "MPI_LOCALRANKID"};

TEST(MpiLaunch, TheLaunchersEnvironmentSaysTheRankAndTheSize) {
  scoped_env env;
  for (const char* v : launcher_vars) env.set(v, nullptr);
  EXPECT_EQ(mpi::detect_launch().size, 0);  // started by hand: no MPI at all

  env.set("OMPI_COMM_WORLD_SIZE", "4");
  env.set("OMPI_COMM_WORLD_RANK", "3");
  env.set("OMPI_COMM_WORLD_LOCAL_RANK", "1");
  mpi::launch_info l = mpi::detect_launch();
  EXPECT_EQ(l.size, 4);
  EXPECT_EQ(l.rank, 3);
  EXPECT_EQ(l.local_rank, 1);
  EXPECT_EQ(l.source, "OMPI_COMM_WORLD_SIZE");

  for (const char* v : launcher_vars) env.set(v, nullptr);
  env.set("PMIX_RANK", "5");  // srun --mpi=pmix: the size is Slurm's
  env.set("SLURM_STEP_NUM_TASKS", "16");
  env.set("SLURM_LOCALID", "5");
  l = mpi::detect_launch();
  EXPECT_EQ(l.size, 16);
  EXPECT_EQ(l.rank, 5);
  EXPECT_EQ(l.local_rank, 5);

  for (const char* v : launcher_vars) env.set(v, nullptr);
  env.set("PMI_SIZE", "2");  // srun --mpi=pmi2
  env.set("PMI_RANK", "1");
  l = mpi::detect_launch();
  EXPECT_EQ(l.size, 2);
  EXPECT_EQ(l.rank, 1);

  for (const char* v : launcher_vars) env.set(v, nullptr);
  env.set("SLURM_STEP_NUM_TASKS", "3");  // srun --mpi=none: a step's tasks, no PMI
  env.set("SLURM_PROCID", "2");
  l = mpi::detect_launch();
  EXPECT_EQ(l.size, 3);
  EXPECT_EQ(l.rank, 2);
  EXPECT_EQ(l.source, "SLURM_STEP_NUM_TASKS");

  for (const char* v : launcher_vars) env.set(v, nullptr);
  env.set("SLURM_NTASKS", "2");  // a batch script or salloc's shell: no launch at all
  EXPECT_EQ(mpi::detect_launch().size, 0);
}

TEST(MpiLaunch, OneRankOrNoLauncherJoinsNothing) {
  scoped_env env;
  for (const char* v : launcher_vars) env.set(v, nullptr);
  int argc = 1;
  char name[] = "kernlab";
  char* args[] = {name, nullptr};
  char** argv = args;
  // No transport is looked for when there is nothing to join.
  EXPECT_EQ(mpi::world::join(argc, argv, {"/nonexistent/libkernlab_mpi.so"}), nullptr);
  env.set("OMPI_COMM_WORLD_SIZE", "1");
  EXPECT_EQ(mpi::world::join(argc, argv, {"/nonexistent/libkernlab_mpi.so"}), nullptr);
  EXPECT_EQ(mpi::world::current(), nullptr);
}

// What world::join says, with no transport to load, in the environment as it is: "joined" when it
// joined or found no launcher, else its error.
std::string join_without_transport() {
  int argc = 1;
  char name[] = "kernlab";
  char* args[] = {name, nullptr};
  char** argv = args;
  try {
    mpi::world::join(argc, argv, {"/nonexistent/libkernlab_mpi.so"});
    return "joined";
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

TEST(MpiLaunch, SeveralRanksWithoutTheTransportAreRefusedWithTheReason) {
  scoped_env env;
  for (const char* v : launcher_vars) env.set(v, nullptr);
  env.set("OMPI_COMM_WORLD_SIZE", "2");
  const std::string why = join_without_transport();
  EXPECT_NE(why.find("built without MPI"), std::string::npos) << why;
  EXPECT_NE(why.find("--devices"), std::string::npos) << why;
}

// srun's tasks with no MPI plugin (--mpi=none, Slurm's own MpiDefault) have no PMI to join one
// run with: each would run the whole command, so they are refused before any transport is
// looked for.
TEST(MpiLaunch, SrunTasksWithNoMpiPluginAreRefusedWithTheReason) {
  scoped_env env;
  for (const char* v : launcher_vars) env.set(v, nullptr);
  env.set("SLURM_STEP_NUM_TASKS", "2");
  env.set("SLURM_PROCID", "0");
  const std::string why = join_without_transport();
  EXPECT_NE(why.find("no MPI plugin"), std::string::npos) << why;
  EXPECT_NE(why.find("srun --mpi=pmix"), std::string::npos) << why;
  env.set("SLURM_STEP_NUM_TASKS", "1");  // srun -n 1: a run like any other
  int argc = 1;
  char name[] = "kernlab";
  char* args[] = {name, nullptr};
  char** argv = args;
  EXPECT_EQ(mpi::world::join(argc, argv, {"/nonexistent/libkernlab_mpi.so"}), nullptr);
}

#if defined(KERNLAB_MPIEXEC) && defined(KERNLAB_MPI_FAKE_RANK)

// mpirun -np N, as root too, with as many ranks as asked on this machine's cores.
std::string mpirun(int ranks) {
  std::string cmd = std::string(KERNLAB_MPIEXEC) + " --oversubscribe";
  if (::geteuid() == 0) cmd += " --allow-run-as-root";
  return cmd + " -np " + std::to_string(ranks) + " ";
}

bool have_mpirun() { return std::filesystem::exists(KERNLAB_MPIEXEC); }

#define SKIP_WITHOUT_MPIRUN() \
  if (!have_mpirun()) GTEST_SKIP() << KERNLAB_MPIEXEC << " is not there: install openmpi-bin"

// The fake-rank program started by `launch` (mpirun(N) or srun(N)): what rank 0 wrote.
nlohmann::json run_fake_under(const std::string& launch, const std::string& args,
                              test::command_result* result = nullptr, int expect_code = 0) {
  test::temp_dir dir("mpi_fake");
  const std::string out = dir.str() + "/out.json";
  const auto r = test::run_command(launch + KERNLAB_MPI_FAKE_RANK + " " + out + " " + args);
  if (result) *result = r;
  EXPECT_EQ(r.code, expect_code) << r.output;
  if (!std::filesystem::exists(out)) {
    ADD_FAILURE() << "rank 0 wrote no " << out << ":\n" << r.output;
    return nullptr;
  }
  // Rank 0 alone wrote, and wrote only its file.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
  return nlohmann::json::parse(test::read_file(out));
}

// Every ticket in order, every row once and passed; the rows' names.
std::vector<std::string> check_rows(const nlohmann::json& out, int rows) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const auto& t : out.at("records")) {
    for (const auto& r : t.at("records")) {
      EXPECT_EQ(r.at("outcome"), "passed") << r.dump();
      const std::string name = r.at("variant").at("name");
      if (name.rfind("row", 0) == 0) {
        EXPECT_TRUE(seen.insert(name).second) << name << " measured twice";
        names.push_back(name);
      }
    }
  }
  EXPECT_EQ(static_cast<int>(seen.size()), rows);
  for (int i = 0; i < rows && i < static_cast<int>(names.size()); ++i)
    EXPECT_EQ(names[static_cast<std::size_t>(i)], "row" + std::to_string(i));  // ticket order
  return names;
}

// The GPUs (uuids) an every-GPU ticket's records came from.
std::vector<std::string> gpus_of(const nlohmann::json& ticket) {
  std::vector<std::string> out;
  for (const auto& r : ticket.at("records")) out.push_back(r.at("gpu").at("uuid"));
  return out;
}

// The fake-rank program under a launcher, in each case below, asserted the same whichever
// launcher started it: `launch(N)` is the command's prefix for N ranks.
using launcher = std::function<std::string(int)>;

void every_rank_measures_rows_each_once(const launcher& launch) {
  const nlohmann::json out = run_fake_under(launch(3), "--rows 60");
  ASSERT_FALSE(out.is_null());
  EXPECT_EQ(out.at("ranks"), 3);
  const std::vector<std::string> gpus = {"GPU-fake-rank-0", "GPU-fake-rank-1", "GPU-fake-rank-2"};
  EXPECT_EQ(out.at("devices").get<std::vector<std::string>>(), gpus);
  check_rows(out, 60);
  // The baselines ran on every rank's GPU, in GPU order, each with its own GPU's time.
  const auto& records = out.at("records");
  EXPECT_EQ(gpus_of(records.at(0)), gpus);
  EXPECT_EQ(gpus_of(records.at(31)), gpus);
  EXPECT_EQ(records.at(0).at("records").at(2).at("timing").at("median_us"), 3000.0);
  // Every rank took rows; none left.
  for (const auto& n : out.at("rows_run")) EXPECT_GT(n.get<int>(), 2);
  for (const auto& why : out.at("lost")) EXPECT_EQ(why, "");
  EXPECT_DOUBLE_EQ(out.at("launch_floor_ms").get<double>(), 0.002);  // asked of rank 2
}

void a_lost_gpus_row_runs_elsewhere(const launcher& launch) {
  // Rank 2's GPU is lost at its fourth row (after the baseline and two rows).
  const nlohmann::json out = run_fake_under(launch(3), "--rows 40 --lose 2 3");
  ASSERT_FALSE(out.is_null());
  check_rows(out, 40);  // the row it was given ran elsewhere: every row once
  const auto lost = out.at("lost").get<std::vector<std::string>>();
  EXPECT_EQ(lost[0], "");
  EXPECT_EQ(lost[1], "");
  EXPECT_NE(lost[2].find("rank 2"), std::string::npos) << lost[2];
  EXPECT_NE(lost[2].find("fell off the bus"), std::string::npos) << lost[2];
  EXPECT_EQ(out.at("rows_run").at(2), 3);
  EXPECT_DOUBLE_EQ(out.at("launch_floor_ms").get<double>(), 0.002);  // asked of rank 1
  // The second baseline ran on the GPUs still there.
  EXPECT_EQ(gpus_of(out.at("records").at(21)),
            (std::vector<std::string>{"GPU-fake-rank-0", "GPU-fake-rank-1"}));
}

// `code`: the launcher's exit status once rank 0 has ended the job with MPI_Abort, with its own
// exit code (5 here, as a command with failed rows ends with 1).
void a_silent_ranks_row_runs_elsewhere(const launcher& launch, int code) {
  // Rank 1 stops itself (SIGSTOP) at its third row: no record, no heartbeat. After 3 s of
  // silence rank 0 takes it as lost, runs the row elsewhere, writes its file, then ends the job
  // (a stopped rank never reaches MPI_Finalize).
  test::command_result r;
  const nlohmann::json out =
      run_fake_under(launch(3), "--rows 30 --stop 1 2 --silence 3 --exit 5", &r, code);
  ASSERT_FALSE(out.is_null()) << r.output;
  check_rows(out, 30);
  const auto lost = out.at("lost").get<std::vector<std::string>>();
  EXPECT_NE(lost[1].find("sent nothing for 3 s"), std::string::npos) << lost[1];
  EXPECT_EQ(lost[2], "");
}

// With a journal, each other rank journals the rows it ran in its own file (PATH.rank<N>), so
// that --resume knows them should rank 0 be lost before it hears of them.
void each_other_rank_journals_its_rows(const launcher& launch) {
  test::temp_dir dir("mpi_journal");
  const std::string path = dir.str() + "/journal.log";
  const nlohmann::json out = run_fake_under(launch(3), "--rows 40 --journal " + path);
  ASSERT_FALSE(out.is_null());
  check_rows(out, 40);
  std::map<std::string, std::set<std::string>> ran;  // GPU uuid -> the rows it ran
  for (const auto& t : out.at("records"))
    for (const auto& r : t.at("records")) {
      const std::string name = r.at("variant").at("name");
      if (name.rfind("row", 0) == 0) ran[r.at("gpu").at("uuid")].insert(name);
    }
  EXPECT_FALSE(std::filesystem::exists(path));  // rank 0 of this program keeps none
  for (int rank = 1; rank < 3; ++rank) {
    const journal::state s = journal::read(journal::rank_path(path, rank));
    std::set<std::string> done;
    for (const auto& [key, row] : s.done) {
      done.insert(key);
      EXPECT_EQ(row.outcome, "passed");
      EXPECT_EQ(nlohmann::json::parse(row.record).at("gpu").at("uuid"),
                "GPU-fake-rank-" + std::to_string(rank));
    }
    EXPECT_TRUE(s.in_flight.empty());
    EXPECT_EQ(done, ran["GPU-fake-rank-" + std::to_string(rank)]) << "rank " << rank;
    EXPECT_FALSE(done.empty());
  }
  // Rank 0's view on --resume: its own journal, and what the ranks' files say finished.
  EXPECT_EQ(journal::read_with_ranks(path).done.size(),
            ran["GPU-fake-rank-1"].size() + ran["GPU-fake-rank-2"].size());
}

TEST(MpiFake, EveryRankMeasuresRowsEachOnceReadBackInTicketOrder) {
  SKIP_WITHOUT_MPIRUN();
  every_rank_measures_rows_each_once(mpirun);
}

TEST(MpiFake, ARanksLostGpuRetiresItsLaneAndItsRowRunsElsewhere) {
  SKIP_WITHOUT_MPIRUN();
  a_lost_gpus_row_runs_elsewhere(mpirun);
}

TEST(MpiFake, ARankGoneSilentIsLostAndItsRowRunsElsewhere) {
  SKIP_WITHOUT_MPIRUN();
  a_silent_ranks_row_runs_elsewhere(mpirun, 5);
}

TEST(MpiFake, EachOtherRankJournalsTheRowsItRanInItsOwnFile) {
  SKIP_WITHOUT_MPIRUN();
  each_other_rank_journals_its_rows(mpirun);
}

// The kernlab binary under a launcher, with no GPU here.
test::command_result run_kernlab_under(const std::string& launch, const std::string& args) {
  return test::run_command(launch + KERNLAB_BINARY + " --config /dev/null --kernels-dir " +
                           test::kernels_dir() + " " + args);
}

void only_rank_zero_prints_and_writes(const launcher& launch) {
  test::temp_dir dir("mpi_kernlab");
  const std::string json = dir.str() + "/run.json";
  const auto r = run_kernlab_under(
      launch(2), "--compile-only --no-plugins --variant reduce5 --block 256 --json " + json);
  ASSERT_EQ(r.code, 0) << r.output;
  const auto results = nlohmann::json::parse(test::read_file(json));
  EXPECT_TRUE(results.contains("reproducibility")) << results.dump();
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
  const auto alone =
      test::run_kernlab("--kernels-dir " + test::kernels_dir() +
                        " --compile-only --no-plugins --variant reduce5 --block 256");
  EXPECT_EQ(test::count_of(r.output, "reduce.reduce5"),
            test::count_of(alone.output, "reduce.reduce5"))
      << "one rank's output, not two:\n"
      << r.output;
}

void devices_is_a_usage_error(const launcher& launch) {
  const auto r = run_kernlab_under(launch(2), "--no-plugins --variant reduce5 --devices all");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--devices: under mpirun or srun (2 ranks) each rank runs on one GPU"),
            std::string::npos)
      << r.output;
}

void without_the_transport_several_ranks_are_refused(const launcher& launch) {
  test::temp_dir dir("mpi_none");
  const auto copy = dir.path() / "kernlab";
  std::filesystem::copy_file(KERNLAB_BINARY, copy);
  const auto r = test::run_command(launch(2) + copy.string() + " --version");
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_EQ(test::count_of(r.output, "this kernlab has no MPI transport"), 1u) << r.output;
}

TEST(MpiKernlab, OnlyRankZeroPrintsAndWritesAndTheOtherRanksStop) {
  SKIP_WITHOUT_MPIRUN();
  only_rank_zero_prints_and_writes(mpirun);
}

TEST(MpiKernlab, DevicesUnderMpirunIsAUsageError) {
  SKIP_WITHOUT_MPIRUN();
  devices_is_a_usage_error(mpirun);
}

TEST(MpiKernlab, AKernlabWithoutTheTransportRefusesSeveralRanks) {
  SKIP_WITHOUT_MPIRUN();
  without_the_transport_several_ranks_are_refused(mpirun);
}

// Slurm's srun, when a Slurm answers on this machine (scripts/slurm_local.sh starts a one-node
// one; results history: 2026-11-26-slurm-local/). --overcommit: three tasks on a 2-core node, as
// mpirun's --oversubscribe; --immediate and timeout: a Slurm that cannot run the step now fails
// the test instead of queueing it for ever.
std::string srun_with(const std::string& mpi, int ranks) {
  return "timeout 300 srun --immediate=60 --overcommit --mpi=" + mpi + " -n " +
         std::to_string(ranks) + " ";
}

std::string srun(int ranks) { return srun_with("pmix", ranks); }

std::string trimmed(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

// Why the srun tests cannot run here; "" when srun is on PATH, slurmctld answers, srun offers
// PMIx, and sinfo reports a node idle or mixed within 10 s. Where Slurm is installed but not
// running (CI on a developer's machine), scontrol ping says so at once (sinfo would retry 9 s).
const std::string& why_no_slurm() {
  static const std::string why = []() -> std::string {
    if (test::run_command("command -v srun").code != 0) return "srun is not on PATH";
    const auto ping = test::run_command("timeout 5 scontrol ping");
    if (ping.code != 0)
      return "slurmctld does not answer (scontrol ping: " +
             trimmed(ping.output.substr(0, ping.output.find('\n'))) + ")";
    const auto ready = test::run_command(
        "timeout 10 sh -c 'until sinfo -h -o %T 2>/dev/null | grep -qxE \"idle|mixed\"; do "
        "sleep 0.5; done'");
    if (ready.code != 0) {
      const auto state = test::run_command("timeout 5 sinfo -h -o %T");
      return "no node idle or mixed within 10 s (sinfo -h -o %T: " + trimmed(state.output) + ")";
    }
    const auto plugins = test::run_command("timeout 10 srun --mpi=list");
    if (plugins.output.find("pmix") == std::string::npos)
      return "srun offers no pmix plugin (srun --mpi=list: " + trimmed(plugins.output) + ")";
    return "";
  }();
  return why;
}

#define SKIP_WITHOUT_SLURM()                          \
  if (!why_no_slurm().empty())                        \
  GTEST_SKIP() << "no Slurm here: " << why_no_slurm() \
               << " (scripts/slurm_local.sh starts a one-node Slurm)"

TEST(MpiSrunFake, EveryRankMeasuresRowsEachOnceReadBackInTicketOrder) {
  SKIP_WITHOUT_SLURM();
  every_rank_measures_rows_each_once(srun);
}

TEST(MpiSrunFake, ARanksLostGpuRetiresItsLaneAndItsRowRunsElsewhere) {
  SKIP_WITHOUT_SLURM();
  a_lost_gpus_row_runs_elsewhere(srun);
}

// Rank 0's MPI_Abort ends the job as under mpirun, and srun returns its code (5). (Had rank 0
// ended with 0, srun would return 137: slurmstepd ends the stopped rank with SIGKILL, and a
// status of 0 does not hide that. The file is complete all the same.)
TEST(MpiSrunFake, ARankGoneSilentIsLostAndItsRowRunsElsewhere) {
  SKIP_WITHOUT_SLURM();
  a_silent_ranks_row_runs_elsewhere(srun, 5);
}

TEST(MpiSrunFake, EachOtherRankJournalsTheRowsItRanInItsOwnFile) {
  SKIP_WITHOUT_SLURM();
  each_other_rank_journals_its_rows(srun);
}

TEST(MpiSrunKernlab, OnlyRankZeroPrintsAndWritesAndTheOtherRanksStop) {
  SKIP_WITHOUT_SLURM();
  only_rank_zero_prints_and_writes(srun);
}

TEST(MpiSrunKernlab, DevicesUnderSrunIsAUsageError) {
  SKIP_WITHOUT_SLURM();
  devices_is_a_usage_error(srun);
}

TEST(MpiSrunKernlab, AKernlabWithoutTheTransportRefusesSeveralRanks) {
  SKIP_WITHOUT_SLURM();
  without_the_transport_several_ranks_are_refused(srun);
}

// A measuring run on a machine with no CUDA driver: the same outcome and exit code as with one
// kernlab, said once, by rank 0, and no file.
TEST(MpiSrunKernlab, NoGpuIsSaidOnceByRankZero) {
  SKIP_WITHOUT_SLURM();
  if (void* cuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    ::dlclose(cuda);
    GTEST_SKIP() << "a CUDA driver is here: this test is for a machine without one";
  }
  test::temp_dir dir("mpi_srun_nogpu");
  const std::string json = dir.str() + "/run.json";
  const auto r =
      run_kernlab_under(srun(2), "--no-plugins --family reduce --size 1000 --json " + json);
  EXPECT_EQ(r.code, 3) << r.output;  // exit_code::no_device
  EXPECT_EQ(test::count_of(r.output, "no CUDA driver/device"), 1u) << r.output;
  EXPECT_FALSE(std::filesystem::exists(json));
}

// srun with no MPI plugin starts the tasks as independent processes: kernlab refuses, said once
// (by the task whose SLURM_PROCID is 0), instead of running the whole command in each.
TEST(MpiSrunKernlab, SrunWithNoMpiPluginIsRefusedOnce) {
  SKIP_WITHOUT_SLURM();
  test::temp_dir dir("mpi_srun_none");
  const std::string json = dir.str() + "/run.json";
  const auto r =
      run_kernlab_under(srun_with("none", 2),
                        "--compile-only --no-plugins --variant reduce5 --block 256 --json " + json);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_EQ(test::count_of(r.output, "tasks with no MPI plugin"), 1u) << r.output;
  EXPECT_EQ(test::count_of(r.output, "reduce.reduce5"), 0u) << r.output;
  EXPECT_FALSE(std::filesystem::exists(json));
}

#else

TEST(MpiFake, SkippedWithoutMpi) {
  GTEST_SKIP() << "kernlab was built without MPI (KERNLAB_MPI; install libopenmpi-dev and "
                  "openmpi-bin, then reconfigure): the mpirun and srun tests need it";
}

#endif

}  // namespace
}  // namespace kl
