// The MPI side of mpi/world.hpp: rank 0's lanes for the other ranks' GPUs and the other ranks'
// serve loop. A message is the worker protocol's (process/protocol.hpp): its type is the MPI tag,
// its payload the same MessagePack-encoded JSON (a row job with its CUBIN, a record), so a rank
// answers exactly what a worker answers.
//
// The MPI calls go through libkernlab_mpi.so's table (mpi/transport_abi.hpp), loaded here.
//
// Threads: rank 0's pool drives each lane from a thread of its own, and a serving rank sends
// heartbeats from a second thread, so every MPI call is made under one lock (the MPI library is
// asked for MPI_THREAD_SERIALIZED only), and nothing blocks inside MPI: sends are posted then
// tested, receives probed, each with a deadline, so a rank that is gone costs a timeout, never a
// hang.
#include "mpi/world.hpp"

#include "core/interrupt.hpp"
#include "core/json_text.hpp"
#include "cuda/driver.hpp"
#include "mpi/transport_abi.hpp"
#include "process/protocol.hpp"
#include "record/record_json.hpp"
#include "runner/journal.hpp"

#include <dlfcn.h>

#include <filesystem>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

namespace kl::mpi {

using nlohmann::json;
using worker::message;
using worker::message_type;
using clock_type = std::chrono::steady_clock;

namespace {

world* the_world = nullptr;
const kl_mpi_transport* api = nullptr;  // the loaded libkernlab_mpi.so's table

std::string error_text(int rc) {
  char text[512] = {};
  api->error_text(rc, text, sizeof text);
  return text[0] ? std::string(text) : "MPI error " + std::to_string(rc);
}

void check(int rc, const char* call) {
  if (rc != 0) throw std::runtime_error(std::string(call) + " failed: " + error_text(rc));
}

// libkernlab_mpi.so from the first of `paths` that exists. RTLD_GLOBAL: OpenMPI's components,
// which it opens itself, look for libmpi's symbols among the global ones.
const kl_mpi_transport* load_transport(const std::vector<std::string>& paths) {
  std::string tried;
  for (const auto& path : paths) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      tried += (tried.empty() ? "" : ", ") + path;
      continue;
    }
    void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
      const char* why = ::dlerror();
      throw std::runtime_error("cannot load " + path + ": " + (why ? why : "dlopen failed") +
                               " (is OpenMPI's libmpi on the library path? docs/many_gpus.md)");
    }
    using get_fn = const kl_mpi_transport* (*)();
    auto get = reinterpret_cast<get_fn>(::dlsym(lib, "kl_mpi_transport_get"));
    const kl_mpi_transport* t = get ? get() : nullptr;
    if (!t || t->abi != KL_MPI_TRANSPORT_ABI)
      throw std::runtime_error(path + " is not this kernlab's MPI transport (another build?)");
    return t;  // never closed: MPI lives until the process ends
  }
  throw std::runtime_error("this kernlab has no MPI transport (looked for " + tried +
                           "): it was built without MPI (libopenmpi-dev, cmake "
                           "-DKERNLAB_MPI=ON), so each rank would run the whole command and write "
                           "the same files; build it with MPI, or run one kernlab with --devices");
}

// Polling without burning a core: short waits while a reply may be near, longer ones after.
class backoff {
 public:
  void wait() {
    std::this_thread::sleep_for(std::chrono::microseconds(us_));
    us_ = std::min(us_ * 2, 2000);
  }

 private:
  int us_ = 20;
};

double seconds_since(clock_type::time_point t) {
  return std::chrono::duration<double>(clock_type::now() - t).count();
}

}  // namespace

struct world::impl {
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
  std::string host;
  std::mutex m;  // held for every MPI call
  // Rank 0: the ranks that need no stop message any more (stopped, or lost), by rank; those lost;
  // each rank's announcement once received (a --watch round's pool asks again).
  std::vector<char> done, lost;
  std::map<int, message> hellos;
  bool lost_any = false;
  int exit_code = 0;  // rank 0: the command's, for MPI_Abort

  // A message on its way out: the bytes stay alive until the send completes.
  struct outgoing {
    std::vector<std::uint8_t> bytes;
    void* request = nullptr;  // the transport's until complete() or cancel()
  };

  std::unique_ptr<outgoing> post(int to, message_type type, const json& payload) {
    auto out = std::make_unique<outgoing>();
    out->bytes = json::to_msgpack(payload);
    if (out->bytes.size() > worker::max_payload_bytes)
      throw std::runtime_error("a message to rank " + std::to_string(to) + " is too large (" +
                               std::to_string(out->bytes.size()) + " bytes)");
    std::lock_guard<std::mutex> lock(m);
    check(api->isend(out->bytes.data(), static_cast<int>(out->bytes.size()), to,
                     static_cast<int>(type), &out->request),
          "MPI_Isend");
    return out;
  }

  bool complete(outgoing& out) {
    if (!out.request) return true;
    std::lock_guard<std::mutex> lock(m);
    int flag = 0;
    check(api->test(out.request, &flag), "MPI_Test");
    if (flag) out.request = nullptr;
    return flag != 0;
  }

  // Gives up on a send that the other side never took.
  void cancel(outgoing& out) {
    if (!out.request) return;
    std::lock_guard<std::mutex> lock(m);
    api->cancel(out.request);
    out.request = nullptr;
  }

  // Sends one message, waiting at most timeout_s (negative: for ever) for it to be taken; false
  // when it was not (the send is then cancelled).
  bool send(int to, message_type type, const json& payload, double timeout_s) {
    auto out = post(to, type, payload);
    const auto began = clock_type::now();
    backoff pause;
    while (!complete(*out)) {
      if (timeout_s >= 0 && seconds_since(began) > timeout_s) {
        cancel(*out);
        return false;
      }
      pause.wait();
    }
    return true;
  }

  // The next message from rank `from`, waiting at most timeout_s (negative: for ever); nothing
  // on timeout.
  std::optional<message> receive(int from, double timeout_s) {
    const auto began = clock_type::now();
    backoff pause;
    for (;;) {
      std::vector<std::uint8_t> bytes;
      int tag = 0;
      {
        std::lock_guard<std::mutex> lock(m);
        int flag = 0, found_tag = 0, n = 0;
        check(api->iprobe(from, &flag, &found_tag, &n), "MPI_Iprobe");
        if (flag) {
          bytes.resize(static_cast<std::size_t>(n));
          tag = found_tag;
          check(api->recv(bytes.data(), n, from, tag), "MPI_Recv");
        }
      }
      if (tag != 0) {
        if (tag < 1 || tag > 5)
          throw std::runtime_error("rank " + std::to_string(from) + " sent a message of type " +
                                   std::to_string(tag));
        message msg;
        msg.type = static_cast<message_type>(tag);
        try {
          msg.payload = json::from_msgpack(bytes);
        } catch (const json::exception& e) {
          throw std::runtime_error("rank " + std::to_string(from) +
                                   " sent a malformed message: " + e.what());
        }
        return msg;
      }
      if (timeout_s >= 0 && seconds_since(began) > timeout_s) return std::nullopt;
      pause.wait();
    }
  }

  void mark_done(int r, bool is_lost) {
    std::lock_guard<std::mutex> lock(m);
    done.at(static_cast<std::size_t>(r)) = 1;
    if (is_lost) {
      lost.at(static_cast<std::size_t>(r)) = 1;
      lost_any = true;
    }
  }

  bool is_lost(int r) {
    std::lock_guard<std::mutex> lock(m);
    return lost.at(static_cast<std::size_t>(r)) != 0;
  }

  // Rank r's announcement, waiting at most timeout_s for it the first time.
  std::optional<message> hello(int r, double timeout_s) {
    {
      std::lock_guard<std::mutex> lock(m);
      if (auto it = hellos.find(r); it != hellos.end()) return it->second;
    }
    auto h = receive(r, timeout_s);
    if (h) {
      std::lock_guard<std::mutex> lock(m);
      hellos[r] = *h;
    }
    return h;
  }
};

namespace {

// Rank 0's view of another rank's GPU: run() sends the row there and waits for the record.
class remote_executor final : public row_executor {
 public:
  remote_executor(world::impl& w, int rank, const remote_options& opt)
      : w_(w), rank_(rank), opt_(opt) {
    if (w_.is_lost(rank_)) throw std::runtime_error(name() + " was lost earlier in this run");
    const auto hello = w_.hello(rank_, opt_.start_timeout_s);
    if (!hello) {
      w_.mark_done(rank_, true);
      throw std::runtime_error(name() + " did not announce its GPU within " +
                               std::to_string(static_cast<int>(opt_.start_timeout_s)) + " s");
    }
    if (hello->type != message_type::ready)
      throw std::runtime_error(name() + " sent something else before announcing its GPU");
    const json& h = hello->payload;
    host_ = h.value("host", "");
    if (!h.at("ok").get<bool>()) {
      const std::string why = h.at("error");
      if (h.value("no_device", false)) throw cuda::no_device_error(name() + ": " + why);
      throw std::runtime_error(name() + ": " + why);
    }
    device_ = device_from_json(h.at("device"));
    clock_status_ = h.value("clock_status", "");
    energy_status_ = h.value("energy_status", "");
    workers_started_ = h.value("workers_started", 0);
  }

  const cuda::device_info& device() override { return device_; }
  std::string clock_status() override { return clock_status_; }
  std::string energy_status() override { return energy_status_; }
  int workers_started() const override { return workers_started_; }

  timing_stats launch_floor(const timing_options& opt) override {
    const json reply = exchange({{"kind", "floor"}, {"timing", to_json(opt)}});
    if (reply.contains("error"))
      throw std::runtime_error(name() + ": " + reply["error"].get<std::string>());
    return timing_stats_from_json(reply.at("timing"));
  }

  result_record run(const row_job& job) override {
    const json reply = exchange({{"kind", "row"}, {"job", to_json(job)}});
    if (reply.contains("lost")) {
      lost_ = name() + ": " + reply["lost"].get<std::string>();
      throw device_lost_error(lost_);
    }
    // Not the GPU's fault (the pool records the row as failed and goes on).
    if (reply.contains("error"))
      throw std::runtime_error(name() + ": " + reply["error"].get<std::string>());
    return record_from_json(reply.at("record"));
  }

  json run_family_job(const std::string& family, const std::string& job_name,
                      const json& args) override {
    const json reply =
        exchange({{"kind", "family_job"}, {"family", family}, {"name", job_name}, {"args", args}});
    if (reply.contains("lost"))
      throw std::runtime_error(name() + ": " + reply["lost"].get<std::string>());
    if (reply.contains("error"))
      throw std::runtime_error(family + " " + job_name + " (" + name() +
                               "): " + reply["error"].get<std::string>());
    return reply.at("result");
  }

 private:
  std::string name() const {
    return "rank " + std::to_string(rank_) + (host_.empty() ? "" : " (" + host_ + ")");
  }

  [[noreturn]] void lose(const std::string& why) {
    lost_ = name() + " " + why + "; its rows go to the other GPUs";
    w_.mark_done(rank_, true);
    throw device_lost_error(lost_);
  }

  // Sends a job and waits for the reply, reading the heartbeats the rank sends while it works.
  json exchange(const json& job) {
    if (!lost_.empty()) throw device_lost_error(lost_);
    if (!w_.send(rank_, message_type::job, job, opt_.silence_s))
      lose("did not take a job within " + std::to_string(static_cast<int>(opt_.silence_s)) + " s");
    auto heard = clock_type::now();
    for (;;) {
      const auto m = w_.receive(rank_, 0.5);
      if (!m) {
        if (seconds_since(heard) > opt_.silence_s)
          lose("sent nothing for " + std::to_string(static_cast<int>(opt_.silence_s)) +
               " s while running a row");
        continue;
      }
      heard = clock_type::now();
      if (m->type == message_type::heartbeat) continue;
      if (m->type != message_type::result) continue;
      workers_started_ = m->payload.value("workers_started", workers_started_.load());
      return m->payload;
    }
  }

  world::impl& w_;
  int rank_;
  remote_options opt_;
  std::string host_;
  cuda::device_info device_;
  std::string clock_status_, energy_status_;
  std::atomic<int> workers_started_{0};
  std::string lost_;
};

// A serving rank's answer to one job, from its own executor (`ex`; null once its GPU is gone).
json answer(std::unique_ptr<row_executor>& ex, const std::string& gone, const json& job) {
  if (!ex) return {{"lost", gone}};
  const std::string kind = job.at("kind");
  json reply;
  try {
    if (kind == "row") {
      result_record r = ex->run(job_from_json(job.at("job")));
      if (!r.gpu) r.gpu = ex->device().identity();  // as rank 0's pool would: for its journal
      reply = {{"record", to_json(r)}};
    } else if (kind == "floor") {
      reply = {{"timing", to_json(ex->launch_floor(timing_options_from_json(job.at("timing"))))}};
    } else if (kind == "family_job") {
      reply = {{"result", ex->run_family_job(job.at("family"), job.at("name"), job.at("args"))}};
    } else {
      reply = {{"error", "unknown job kind '" + kind + "'"}};
    }
  } catch (const device_lost_error& e) {
    reply = {{"lost", e.what()}};
  } catch (const std::exception& e) {
    reply = {{"error", e.what()}};
  }
  reply["workers_started"] = ex->workers_started();
  return reply;
}

}  // namespace

std::unique_ptr<world> world::join(int& argc, char**& argv,
                                   const std::vector<std::string>& transports) {
  const launch_info l = detect_launch();
  if (l.size == 0 || l.size == 1) return nullptr;
  if (the_world) throw std::logic_error("mpi::world::join: joined already");
  if (l.source == "SLURM_STEP_NUM_TASKS")
    throw std::runtime_error(
        "srun started " + std::to_string(l.size) +
        " tasks with no MPI plugin (srun --mpi=none, or the cluster's MpiDefault), so they cannot "
        "join one run: each would run the whole command and write the same files; start them "
        "with srun --mpi=pmix (srun --mpi=list shows the plugins), or run one kernlab with "
        "--devices");
  if (!api) api = load_transport(transports);
  check(api->init(&argc, &argv), "MPI_Init_thread");
  auto p = std::make_unique<impl>();
  try {
    check(api->ranks(&p->rank, &p->size, &p->local_rank, &p->local_size), "MPI_Comm_rank");
    char name[256] = {};
    if (api->host(name, sizeof name) == 0) p->host = name;
    p->done.assign(static_cast<std::size_t>(p->size), 0);
    p->lost.assign(static_cast<std::size_t>(p->size), 0);
    p->done[0] = 1;
  } catch (...) {
    api->finalize();
    throw;
  }
  std::unique_ptr<world> w(new world(std::move(p)));
  the_world = w.get();
  return w;
}

world* world::current() { return the_world; }

void world::set_exit_code(int code) { impl_->exit_code = code; }

world::world(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

world::~world() {
  if (impl_->rank == 0) {
    try {
      stop_all();
    } catch (const std::exception&) {
    }
  }
  the_world = nullptr;
  if (impl_->lost_any) {
    // A rank that stopped answering may never reach MPI_Finalize, which waits for every rank:
    // rank 0 has written what it had to, so it ends the job instead of waiting for ever, with
    // the command's exit code (failed rows, say), which the launcher returns.
    api->abort(impl_->exit_code);
  }
  api->finalize();
}

int world::rank() const { return impl_->rank; }
int world::size() const { return impl_->size; }
int world::local_rank() const { return impl_->local_rank; }
int world::local_size() const { return impl_->local_size; }
int world::local_device(int visible) const { return visible > 0 ? impl_->local_rank % visible : 0; }
const std::string& world::host() const { return impl_->host; }

std::vector<device_pool::lane_factory> world::remote_lanes(const remote_options& opt) {
  if (impl_->rank != 0) throw std::logic_error("mpi::world::remote_lanes: rank 0's only");
  std::vector<device_pool::lane_factory> lanes;
  for (int r = 1; r < impl_->size; ++r)
    lanes.emplace_back([this, r, opt]() -> std::unique_ptr<row_executor> {
      return std::make_unique<remote_executor>(*impl_, r, opt);
    });
  return lanes;
}

int world::serve(const std::function<std::unique_ptr<row_executor>()>& make,
                 const rank_journal* journal_to) {
  if (impl_->rank == 0) throw std::logic_error("mpi::world::serve: not rank 0's");
  impl& w = *impl_;
  // Ctrl-C reaches every rank of mpirun: rank 0 decides what stops, this rank goes on until told.
  ignore_interrupts();
  std::unique_ptr<row_executor> ex;
  std::string gone;
  json hello;
  try {
    ex = make();
    hello = {{"ok", true},
             {"device", device_to_json(ex->device())},
             {"clock_status", ex->clock_status()},
             {"energy_status", ex->energy_status()},
             {"workers_started", ex->workers_started()}};
  } catch (const cuda::no_device_error& e) {
    gone = e.what();
    hello = {{"ok", false}, {"no_device", true}, {"error", e.why()}};
  } catch (const std::exception& e) {
    gone = e.what();
    hello = {{"ok", false}, {"error", e.what()}};
  }
  hello["host"] = w.host;
  // Posted, not waited for: rank 0 may never ask for this GPU (--list, --compile-only).
  auto announced = w.post(0, message_type::ready, hello);

  std::atomic<bool> busy{false}, finished{false};
  std::thread heartbeat([&] {
    while (!finished) {
      for (int i = 0; i < 10 && !finished; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (busy && !finished) w.send(0, message_type::heartbeat, json::object(), 10);
    }
  });
  int code = 0;
  std::unique_ptr<kl::journal> log;
  bool log_failed = false;
  try {
    for (;;) {
      const auto m = w.receive(0, -1);
      if (m->type == message_type::shutdown) break;
      if (m->type != message_type::job) continue;
      busy = true;
      // A row with a journal key: journalled here as in rank 0's journal, so that the rows this
      // rank finished are known should rank 0 be lost before it hears of them.
      std::string key;
      if (m->payload.value("kind", "") == "row")
        key = m->payload.at("job").value("journal_key", std::string());
      if (!key.empty() && !log && !log_failed && journal_to && !journal_to->path.empty()) {
        try {
          log = std::make_unique<kl::journal>(kl::journal::rank_path(journal_to->path, w.rank),
                                              !journal_to->resume);
        } catch (const std::exception&) {
          log_failed = true;  // a help, never a reason to lose the run
        }
      }
      if (log && !key.empty()) log->started(key);
      json reply = answer(ex, gone, m->payload);
      if (log && !key.empty() && reply.contains("record"))
        log->finished(key, reply["record"].value("outcome", std::string("passed")),
                      json_text(reply["record"]));
      busy = false;
      if (reply.contains("lost") && ex) {
        gone = reply["lost"];
        ex.reset();  // its GPU takes no more rows; rank 0 retires this lane
      }
      w.send(0, message_type::result, reply, -1);
    }
  } catch (const std::exception&) {
    code = 1;
  }
  finished = true;
  heartbeat.join();
  if (!w.complete(*announced)) w.cancel(*announced);
  ex.reset();  // the worker shuts down before this rank leaves
  return code;
}

void world::stop_all() {
  impl& w = *impl_;
  if (w.rank != 0) return;
  std::vector<std::pair<int, std::unique_ptr<impl::outgoing>>> sent;
  for (int r = 1; r < w.size; ++r) {
    {
      std::lock_guard<std::mutex> lock(w.m);
      if (w.done[static_cast<std::size_t>(r)]) continue;
    }
    sent.emplace_back(r, w.post(r, message_type::shutdown, json::object()));
  }
  const auto began = clock_type::now();
  for (auto& [r, out] : sent) {
    backoff pause;
    while (!w.complete(*out)) {
      if (seconds_since(began) > 10) {
        w.cancel(*out);
        w.mark_done(r, true);
        break;
      }
      pause.wait();
    }
    w.mark_done(r, false);
  }
}

}  // namespace kl::mpi
