#include "runner/compile_stage.hpp"

#include "core/interrupt.hpp"
#include "families/family.hpp"
#include "nvrtc/compile_process.hpp"

#include <algorithm>
#include <csignal>
#include <optional>
#include <set>

namespace kl {
namespace {

double ms_between(std::chrono::steady_clock::time_point a,
                  std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

nvrtc::compile_request make_compile_request(const family& fam, const registry_entry& e,
                                            const run_request& request, const std::string& arch,
                                            std::vector<instantiation>* instances) {
  nvrtc::compile_request req;
  req.source = e.source;
  req.path = e.descriptor.origin_path;
  // A file that asks for an architecture-specific target (sm_90a) is compiled for it; its rows
  // run only where that target is the GPU's own (decide_before_compile).
  req.arch = e.descriptor.target.empty() ? arch : e.descriptor.target;
  req.include_dirs = request.include_dirs;
  req.pre_includes = fam.pre_includes();
  // defines: a tunable's macro has this point's value (each point is a compile of its own).
  for (const define_spec& d : e.descriptor.defines) {
    std::optional<std::int64_t> value = d.value;
    for (const auto& [name, v] : e.descriptor.point)
      if (!value && name == d.name) value = v;
    if (value) req.extra_options.push_back("-D" + d.name + "=" + std::to_string(*value));
  }
  std::set<std::string> exprs;  // sorted: the same request always makes the same key
  for (const auto& c : configs_for(fam, request)) {
    if (!e.descriptor.supports_dtype(c.dtype) || !e.descriptor.supports_op(c.op)) continue;
    for (unsigned b : blocks_for(e.descriptor, request))
      if (e.descriptor.supports_block(b) && e.descriptor.unmet_requirement(b, c.dtype).empty()) {
        const std::string expr = fam.name_expression(e.descriptor, b, c);
        if (exprs.insert(expr).second && instances)
          instances->push_back(
              {expr, b, c.dtype, c.op, fam.dynamic_shared_bytes(e.descriptor, b, c)});
      }
  }
  req.name_expressions.assign(exprs.begin(), exprs.end());
  return req;
}

nvrtc::compile_request make_reference_request(const family& fam, const run_request& request,
                                              const std::string& arch,
                                              std::vector<instantiation>* instances) {
  nvrtc::compile_request req;
  std::set<std::string> exprs;  // sorted: the same request always makes the same key
  for (const auto& c : configs_for(fam, request)) {
    nvrtc::compile_request one = fam.reference_request(c.dtype, arch, c.op);
    const std::string expr = one.name_expressions.front();
    if (exprs.insert(expr).second && instances)
      instances->push_back({expr, fam.spec().reference.block, c.dtype, c.op});
    if (req.path.empty()) req = std::move(one);
  }
  req.name_expressions.assign(exprs.begin(), exprs.end());
  return req;
}

compile_stage::compile_stage(const family_registry& families, const run_request& request,
                             std::string arch, thread_pool* shared)
    : cache_(request.cache),
      want_keys_(request.want_keys),
      compile_command_(request.compile_command),
      compile_timeout_s_(request.compile_timeout_s),
      start_(std::chrono::steady_clock::now()),
      scanner_(request.toolkit_include_dirs) {
  std::vector<std::pair<std::size_t, nvrtc::compile_request>> work;
  for (const registry_entry* e : request.variants) {
    if (e->descriptor.origin != origin_kind::source) continue;
    index_[e] = slots_.size();
    slot s;
    s.record.entry = e;
    if (!e->error.empty()) {
      s.record.error = e->error;
    } else {
      auto req = make_compile_request(*families.find(e->descriptor.family), *e, request, arch,
                                      &s.record.instances);
      if (!req.name_expressions.empty()) work.emplace_back(slots_.size(), std::move(req));
    }
    slots_.push_back(std::move(s));
  }
  for (const registry_entry* e : request.references) {
    index_[e] = slots_.size();
    slot s;
    s.record.entry = e;
    auto req = make_reference_request(*families.find(e->descriptor.family), request, arch,
                                      &s.record.instances);
    if (!req.name_expressions.empty()) work.emplace_back(slots_.size(), std::move(req));
    slots_.push_back(std::move(s));
  }
  if (work.empty()) return;
  jobs_ = shared                 ? shared->size()
          : request.compile_jobs ? request.compile_jobs
                                 : thread_pool::hardware_threads();
  if (!shared) jobs_ = std::min<unsigned>(jobs_, static_cast<unsigned>(work.size()));
  // Longest first, so no thread is left with a big file at the end while the others idle (LPT
  // scheduling). The cost is guessed from the source's size times its instantiations, which
  // orders the shipped files close to their measured compile times. With a GPU the first file
  // still goes first: the runner times files in request order and should start at once; the
  // files after it are timed far slower than they compile, so their order costs nothing.
  auto cost = [](const nvrtc::compile_request& r) {
    return r.source.size() * r.name_expressions.size();
  };
  const auto from = work.begin() + (request.compile_only ? 0 : 1);
  std::stable_sort(from, work.end(),
                   [&](const auto& a, const auto& b) { return cost(a.second) > cost(b.second); });
  if (shared) {
    pool_ = shared;
  } else {
    own_pool_ = std::make_unique<thread_pool>(jobs_);
    pool_ = own_pool_.get();
  }
  for (auto& [i, req] : work) {
    slots_[i].queued = true;
    slots_[i].done =
        pool_->submit([this, i = i, req = std::move(req)] { compile_one(slots_[i], req); });
  }
}

compile_stage::~compile_stage() = default;

void compile_stage::warn(const std::string& message) {
  std::lock_guard<std::mutex> lock(warnings_mutex_);
  warnings_.push_back(message);
}

void compile_stage::compile_one(slot& s, const nvrtc::compile_request& request) {
  const auto t0 = std::chrono::steady_clock::now();
  compile_record& rec = s.record;
  try {
    // Without a cache, and unless --watch wants them, there is no key to make: no header is read.
    nvrtc::digest128 key;
    if (cache_ || want_keys_) {
      key = nvrtc::make_key(request, scanner_);
      rec.key = key.hex();
    }
    if (cache_) {
      nvrtc::cache_lookup found = cache_->lookup(key);
      if (found.status == nvrtc::lookup_status::hit) {
        rec.result = std::move(found.result);
        rec.cache = cache_use::hit;
      } else {
        rec.cache = cache_use::miss;
        if (found.status == nvrtc::lookup_status::corrupt) {
          ++corrupt_;
          warn("damaged compile cache entry for " + request.path + " (" + found.problem +
               "); compiled again");
        }
      }
    }
    if (rec.cache != cache_use::hit) {
      // A miss compiles in a child process when there is one to start (kernlab's own binary),
      // so that a compile past --compile-timeout can be killed; a hit above started nothing.
      rec.result = compile_command_.empty()
                       ? nvrtc::compile(request)
                       : nvrtc::compile_in_child(
                             request, compile_command_, compile_timeout_s_,
                             [this] { return stop_on_interrupt_ && interrupt_requested(); });
      if (!rec.result.ok) {
        rec.error = "compile error:\n" + rec.result.error_summary();
      } else if (cache_) {
        try {
          cache_->store(key, rec.result);
          ++stores_;
        } catch (const nvrtc::cache_error& e) {
          std::lock_guard<std::mutex> lock(warnings_mutex_);
          if (!store_failed_)
            warnings_.push_back(std::string("cannot store in the compile cache: ") + e.what() +
                                " (compiling without storing)");
          store_failed_ = true;
        }
      }
    }
  } catch (const nvrtc::compile_timeout_error& ex) {
    rec.error = std::string(ex.what()) + " (--compile-timeout)";
  } catch (const nvrtc::compile_stopped_error& ex) {
    rec.error = std::string(ex.what()) + " (" +
                (interrupt_signal() == SIGTERM ? "SIGTERM" : "Ctrl-C") + ")";
    rec.stopped = true;
  } catch (const std::exception& ex) {
    rec.error = ex.what();
  }
  s.finished = std::chrono::steady_clock::now();
  rec.milliseconds = ms_between(t0, s.finished);
}

const compile_record& compile_stage::get(const registry_entry* e) {
  slot& s = slots_.at(index_.at(e));
  if (s.done.valid()) s.done.get();  // compile_one catches everything; get() rethrows nothing
  return s.record;
}

void compile_stage::finish(sweep_result& out) {
  compile_summary& sum = out.compile_stats;
  sum.jobs = jobs_;
  sum.cache_dir = cache_ ? cache_->dir().string() : "";
  auto last = start_;
  for (auto& s : slots_) {
    if (!s.queued) continue;  // a header error, or nothing to compile
    if (s.done.valid()) s.done.get();
    ++sum.files;
    last = std::max(last, s.finished);
    if (s.record.cache == cache_use::hit) ++sum.hits;
    if (s.record.cache == cache_use::miss) ++sum.misses;
    if (!s.record.error.empty()) ++sum.failed;
  }
  sum.wall_ms = ms_between(start_, last);
  if (cache_ && sum.files > 0) {
    nvrtc::cache_counters run;
    run.runs = 1;
    run.hits = sum.hits;
    run.misses = sum.misses;
    run.stores = stores_;
    run.corrupt = corrupt_;
    try {
      cache_->add_counters(run);
    } catch (const nvrtc::cache_error& e) {
      warn(std::string("cannot update the compile cache's counters: ") + e.what());
    }
    // New entries may have passed the cap: drop the least recently used. Only after a run that
    // stored something (a run of hits adds nothing), and never waiting for another process.
    if (stores_ > 0) {
      try {
        cache_->prune(cache_->max_bytes(), false);
      } catch (const nvrtc::cache_error& e) {
        warn(std::string("cannot prune the compile cache: ") + e.what());
      }
    }
  }
  for (auto& s : slots_) out.compiles.push_back(std::move(s.record));
  slots_.clear();
  index_.clear();
  std::lock_guard<std::mutex> lock(warnings_mutex_);
  for (auto& w : warnings_) out.warnings.push_back(std::move(w));
  warnings_.clear();
}

}  // namespace kl
