#include "runner/device_pool.hpp"

#include "core/interrupt.hpp"
#include "cuda/driver.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>

namespace kl {
namespace {

// The record of a row that no GPU ran, and no GPU will: every GPU (or every GPU of the row's
// model) left the run, the last for `why`.
result_record not_run(const row_job& job, const std::string& why, const std::string& model = "") {
  result_record r = job.record();
  r.status = outcome::failed;
  r.message =
      "not run: every " + (model.empty() ? "GPU" : model) + " left the run (the last: " + why + ")";
  return r;
}

}  // namespace

device_pool::device_pool(const std::vector<int>& ordinals, const executor_factory& make) {
  if (ordinals.empty()) throw std::invalid_argument("device_pool: no GPU given");
  std::vector<lane_factory> lanes;
  std::vector<std::string> names;
  for (int ordinal : ordinals) {
    lanes.emplace_back([&make, ordinal] { return make(ordinal); });
    names.push_back("GPU " + std::to_string(ordinal));
  }
  start(lanes, names);
}

device_pool::device_pool(const std::vector<lane_factory>& lanes) {
  if (lanes.empty()) throw std::invalid_argument("device_pool: no GPU given");
  start(lanes, std::vector<std::string>(lanes.size()));
}

void device_pool::start(const std::vector<lane_factory>& make,
                        const std::vector<std::string>& names) {
  lanes_.resize(make.size());
  if (make.size() == 1) {
    lanes_[0].executor = make[0]();
  } else {
    // Each worker takes a second or two to create its context: they start side by side.
    std::vector<std::exception_ptr> failed(make.size());
    std::vector<std::thread> starting;
    for (std::size_t i = 0; i < make.size(); ++i)
      starting.emplace_back([&, i] {
        try {
          lanes_[i].executor = make[i]();
        } catch (...) {
          failed[i] = std::current_exception();
        }
      });
    for (auto& t : starting) t.join();
    for (std::size_t i = 0; i < make.size(); ++i) {
      if (!failed[i]) continue;
      try {
        std::rethrow_exception(failed[i]);
      } catch (const cuda::no_device_error&) {
        throw;
      } catch (const std::exception& e) {
        if (names[i].empty()) throw;
        throw std::runtime_error(names[i] + ": " + e.what());
      }
    }
  }
  for (auto& l : lanes_) devices_.push_back(l.executor->device());
  // One image per file serves every lane: another rank's GPU (MPI) must share the first's
  // architecture as --devices' GPUs must (app/plan.cpp checks those before they start).
  for (std::size_t i = 1; i < devices_.size(); ++i)
    if (devices_[i].arch() != devices_[0].arch())
      throw std::invalid_argument(
          "GPU " + std::to_string(i) + " of the run (" + devices_[i].name + ", " +
          devices_[i].arch() + ") is not of the first's architecture (" + devices_[0].name + ", " +
          devices_[0].arch() + "); one run compiles for one architecture");
  if (threaded())
    for (std::size_t i = 0; i < lanes_.size(); ++i)
      lanes_[i].thread = std::thread([this, i] { lane_loop(i); });
}

device_pool::~device_pool() {
  {
    std::lock_guard<std::mutex> lock(m_);
    stopping_ = true;
  }
  cancel();
  work_.notify_all();
  for (auto& l : lanes_)
    if (l.thread.joinable()) l.thread.join();
  // Every GPU's workers asked to exit before any is waited for: they exit side by side.
  for (auto& l : lanes_)
    if (l.executor) l.executor->request_exit();
}

std::size_t device_pool::submit(row_job job, bool every_gpu, const std::string& model) {
  std::lock_guard<std::mutex> lock(m_);
  const std::size_t ticket = next_ticket_++;
  task& t = tasks_[ticket];
  t.job = std::move(job);
  t.every_gpu = every_gpu && threaded();
  t.model = model;
  if (cancelled_) {
    t.cancelled = t.done = true;
    return ticket;
  }
  if (!any_alive()) {
    std::string why;
    for (const auto& l : lanes_)
      if (!l.lost.empty()) why = l.lost;
    t.records.emplace_back(0, not_run(t.job, why));
    t.done = true;
    return ticket;
  }
  // A row for one model: some GPU of that model must still be here.
  bool served = false, known = false;
  std::string why;
  for (std::size_t i = 0; i < lanes_.size(); ++i) {
    if (!serves(i, model)) continue;
    known = true;
    served = served || lanes_[i].alive;
    if (!lanes_[i].lost.empty()) why = lanes_[i].lost;
  }
  if (!served) {
    result_record r = t.job.record();
    r.status = outcome::failed;
    r.message = "not run: no GPU of the run is a " + model;
    t.records.emplace_back(0, known ? not_run(t.job, why, model) : r);
    t.done = true;
    return ticket;
  }
  if (t.every_gpu) {
    t.parts_left = 0;
    for (std::size_t i = 0; i < lanes_.size(); ++i)
      if (lanes_[i].alive && serves(i, model)) {
        lanes_[i].own.push_back(ticket);
        ++t.parts_left;
      }
  } else {
    // One GPU runs everything from the shared queue, in the caller's thread (take()).
    queue_for(threaded() ? model : "").push_back(ticket);
  }
  work_.notify_all();
  return ticket;
}

bool device_pool::any_alive() const {
  return std::any_of(lanes_.begin(), lanes_.end(), [](const lane& l) { return l.alive; });
}

void device_pool::finish_part(std::size_t ticket) {
  task& t = tasks_.at(ticket);
  if (t.parts_left > 0) --t.parts_left;
  if (t.parts_left > 0) return;
  std::sort(t.records.begin(), t.records.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  t.done = true;
  done_.notify_all();
}

void device_pool::fail_everything_left(const std::string& why) {
  for (auto& [ticket, t] : tasks_) {
    if (t.done || t.started) continue;
    t.records.clear();
    t.records.emplace_back(0, not_run(t.job, why));
    t.parts_left = 0;
    t.done = true;
  }
  queue_.clear();
  for (auto& [model, q] : model_queues_) q.clear();  // the lanes hold references to them
  done_.notify_all();
}

void device_pool::fail_model_left(const std::string& model, const std::string& why) {
  const auto it = model_queues_.find(model);
  if (it == model_queues_.end()) return;
  for (std::size_t ticket : it->second) {
    task& t = tasks_.at(ticket);
    t.records.clear();
    t.records.emplace_back(0, not_run(t.job, why, model));
    t.parts_left = 0;
    t.done = true;
  }
  it->second.clear();
  done_.notify_all();
}

void device_pool::retire(std::size_t i, const std::string& why) {
  lane& l = lanes_[i];
  l.alive = false;
  l.lost = why;
  // Its share of the every-GPU rows is done without it; the others have their own.
  for (std::size_t ticket : std::exchange(l.own, {})) {
    finish_part(ticket);
    task& t = tasks_.at(ticket);
    if (t.done && t.records.empty() && !t.cancelled) t.records.emplace_back(i, not_run(t.job, why));
  }
  if (!any_alive()) {
    fail_everything_left(why);
  } else {
    bool model_left = false;
    for (std::size_t j = 0; j < lanes_.size(); ++j)
      model_left = model_left || (lanes_[j].alive && devices_[j].name == devices_[i].name);
    if (!model_left) fail_model_left(devices_[i].name, why);
  }
  work_.notify_all();  // the row it gave back is someone else's now
}

bool device_pool::run_on(std::size_t i, std::size_t ticket, std::unique_lock<std::mutex>& lock) {
  task& t = tasks_.at(ticket);  // a map's node stays put; the task is not taken before it is done
  t.started = true;
  // A tune's row races against the best known now, which may have come back after it was queued.
  if (t.job.race_live) t.job.timing.race_ms = race_bound_now(t.job.timing.race_ms, t.job.race_live);
  lock.unlock();
  if (on_start_) on_start_(ticket, i);
  result_record r;
  std::string lost;
  try {
    r = lanes_[i].executor->run(t.job);
  } catch (const device_lost_error& e) {
    lost = e.what();
  } catch (const std::exception& e) {
    // Not the GPU's fault (a reply kernlab cannot read): the row fails, the GPU goes on.
    r = t.job.record();
    r.status = outcome::failed;
    r.message = e.what();
  }
  if (lost.empty()) {
    if (!r.gpu) r.gpu = devices_[i].identity();
    if (on_finish_) on_finish_(ticket, i, r);
  }
  lock.lock();
  if (!lost.empty()) {
    // The row never ran: it goes back to the front of the queue, for the GPUs still here (an
    // every-GPU row is simply one GPU short).
    t.started = false;
    if (t.every_gpu)
      finish_part(ticket);
    else
      queue_for(threaded() ? t.model : "").push_front(ticket);
    retire(i, lost);
    if (t.done && t.records.empty() && !t.cancelled)
      t.records.emplace_back(i, not_run(t.job, lost));
    return false;
  }
  ++lanes_[i].rows;
  t.records.emplace_back(i, std::move(r));
  finish_part(ticket);
  return true;
}

void device_pool::lane_loop(std::size_t i) {
  std::unique_lock<std::mutex> lock(m_);
  lane& l = lanes_[i];
  // Its model's own rows (a tune over several models), beside the shared queue and its own
  // every-GPU rows. (A map's node stays put; fail_everything_left only empties it.)
  std::deque<std::size_t>& model = model_queues_[devices_[i].name];
  for (;;) {
    work_.wait(lock, [&] {
      return stopping_ || (!cancelled_ && (!l.own.empty() || !queue_.empty() || !model.empty()));
    });
    if (stopping_ || cancelled_) return;
    if (stop_on_interrupt_ && interrupt_requested()) {
      cancel_locked();
      return;
    }
    // The lower ticket first: a GPU's rows, its own baselines included, go in request order.
    std::deque<std::size_t>* from = nullptr;
    for (std::deque<std::size_t>* q : {&l.own, &queue_, &model})
      if (!q->empty() && (!from || q->front() < from->front())) from = q;
    const std::size_t ticket = from->front();
    from->pop_front();
    if (!run_on(i, ticket, lock)) return;  // this GPU is gone
  }
}

std::vector<result_record> device_pool::take(std::size_t ticket) {
  std::unique_lock<std::mutex> lock(m_);
  if (!tasks_.count(ticket)) throw std::logic_error("device_pool: ticket taken twice or unknown");
  if (threaded()) {
    done_.wait(lock, [&] { return tasks_.at(ticket).done; });
  } else {
    // One GPU: the rows queued up to this one run now, in this thread, in order.
    while (!tasks_.at(ticket).done) {
      if (queue_.empty()) throw std::logic_error("device_pool: a queued row was lost");
      const std::size_t next = queue_.front();
      queue_.pop_front();
      run_on(0, next, lock);
    }
  }
  std::vector<result_record> out;
  for (auto& [gpu, r] : tasks_.at(ticket).records) out.push_back(std::move(r));
  tasks_.erase(ticket);
  return out;
}

bool device_pool::ready(std::size_t ticket) {
  std::lock_guard<std::mutex> lock(m_);
  const auto it = tasks_.find(ticket);
  return it == tasks_.end() || it->second.done;
}

void device_pool::cancel() {
  std::lock_guard<std::mutex> lock(m_);
  cancel_locked();
}

void device_pool::cancel_locked() {
  cancelled_ = true;
  drop_queued(nullptr);
}

void device_pool::withdraw(const std::vector<std::size_t>& tickets) {
  std::lock_guard<std::mutex> lock(m_);
  const std::set<std::size_t> which(tickets.begin(), tickets.end());
  drop_queued(&which);
}

void device_pool::drop_queued(const std::set<std::size_t>* which) {
  auto drop = [&](std::deque<std::size_t>& q) {
    std::deque<std::size_t> kept;
    for (std::size_t ticket : q) {
      if (which && !which->count(ticket)) {
        kept.push_back(ticket);
        continue;
      }
      task& t = tasks_.at(ticket);
      if (t.every_gpu) {
        // One GPU's share: the row is done once the GPUs that started it have finished, with
        // their records (none started it: cancelled).
        if (t.parts_left > 0) --t.parts_left;
        if (t.parts_left == 0) {
          t.cancelled = t.records.empty();
          t.done = true;
        }
      } else {
        t.cancelled = t.done = true;
        t.parts_left = 0;
      }
    }
    q = std::move(kept);
  };
  drop(queue_);
  for (auto& [model, q] : model_queues_) drop(q);
  for (auto& l : lanes_) drop(l.own);
  done_.notify_all();
  work_.notify_all();
}

int device_pool::workers_started() const {
  int n = 0;
  for (const auto& l : lanes_) n += l.executor->workers_started();
  return n;
}

std::vector<std::string> device_pool::lost() const {
  std::lock_guard<std::mutex> lock(m_);
  std::vector<std::string> out;
  for (const auto& l : lanes_) out.push_back(l.lost);
  return out;
}

std::vector<std::size_t> device_pool::rows_run() const {
  std::lock_guard<std::mutex> lock(m_);
  std::vector<std::size_t> out;
  for (const auto& l : lanes_) out.push_back(l.rows);
  return out;
}

}  // namespace kl
