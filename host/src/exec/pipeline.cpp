#include "exec/pipeline.hpp"

#include "cuda/resources.hpp"
#include "families/pipeline.hpp"
#include "record/record_json.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>

namespace kl {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

struct chunk {
  std::uint64_t first = 0, count = 0;
};

std::vector<chunk> plan_chunks(std::uint64_t n, unsigned chunks, std::uint64_t align) {
  const std::uint64_t size = chunk_units(n, chunks, align);
  std::vector<chunk> out;
  for (std::uint64_t first = 0; first < n; first += size)
    out.push_back({first, std::min(size, n - first)});
  return out;
}

// What one run of a configuration measured.
struct run_times {
  double wall = 0, h2d = 0, kernel = 0, d2h = 0;
  std::vector<chunk_timeline> chunks;  // per chunk, in microseconds from the start event
};

// The family's pipeline problem on the device, the kernel, pinned host copies of every in and
// out buffer, and the streams.
class pipeline_rig {
 public:
  pipeline_rig(const family& fam, const pipeline_job& job, const cuda::device_info& device)
      : job_(job), module_(job.kernel.cubin) {
    kernel_.function = module_.function(job.kernel.lowered_name);
    kernel_.block = job.kernel.block;
    kernel_.dynamic_shared_bytes =
        fam.dynamic_shared_bytes(job.kernel.variant, job.kernel.block, job.kernel.config);
    cuda::check(cuda::allow_dynamic_shared(kernel_.function, kernel_.dynamic_shared_bytes),
                "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", __FILE__, __LINE__);
    int per_sm = 0;
    KL_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_.function,
                                                      static_cast<int>(job.kernel.block),
                                                      kernel_.dynamic_shared_bytes));
    if (per_sm == 0)
      throw std::runtime_error(job.kernel.variant.qualified_name() +
                               " does not fit on an SM at block " +
                               std::to_string(job.kernel.block));
    kernel_.resident_blocks = per_sm * device.sm_count;
    problem_ = fam.make_pipeline_problem(job.kernel.config, device);
    n_ = problem_->units();
    for (const auto& b : problem_->buffers()) {
      // Each chunk starts 256-byte aligned in every buffer (the kernel contract's promise).
      align_ =
          std::max<std::uint64_t>(align_, 256 / std::gcd<std::uint64_t>(256, b.bytes_per_unit));
      auto host = std::make_unique<cuda::pinned_buffer>(b.bytes_per_unit * n_);
      if (b.input) {
        std::memcpy(host->data(), b.host, b.bytes_per_unit * n_);
        bytes_in_ += static_cast<double>(b.bytes_per_unit * n_);
      } else {
        bytes_out_ += static_cast<double>(b.bytes_per_unit * n_);
      }
      host_.push_back(std::move(host));
    }
    unsigned most = 2;  // the bound needs two
    for (unsigned s : job.options.streams) most = std::max(most, s);
    for (unsigned s = 0; s < most; ++s) streams_.push_back(std::make_unique<cuda::stream>());
  }

  int resident() const { return kernel_.resident_blocks; }
  std::uint64_t n() const { return n_; }
  std::uint64_t align() const { return align_; }
  double bytes_in() const { return bytes_in_; }
  double bytes_out() const { return bytes_out_; }

  // The launches of a list of chunks, made before they are timed.
  std::vector<std::unique_ptr<chunk_launch>> launches(const std::vector<chunk>& chunks) {
    std::vector<std::unique_ptr<chunk_launch>> out;
    for (const auto& c : chunks)
      out.push_back(problem_->launch(job_.kernel.variant, kernel_, c.first, c.count));
    return out;
  }

  void h2d(const chunk& c, CUstream s) {
    const auto& bufs = problem_->buffers();
    for (std::size_t i = 0; i < bufs.size(); ++i)
      if (bufs[i].input)
        KL_CU(cuMemcpyHtoDAsync(bufs[i].device + c.first * bufs[i].bytes_per_unit,
                                host_[i]->data() + c.first * bufs[i].bytes_per_unit,
                                c.count * bufs[i].bytes_per_unit, s));
  }
  void d2h(const chunk& c, CUstream s) {
    const auto& bufs = problem_->buffers();
    for (std::size_t i = 0; i < bufs.size(); ++i)
      if (!bufs[i].input)
        KL_CU(cuMemcpyDtoHAsync(host_[i]->data() + c.first * bufs[i].bytes_per_unit,
                                bufs[i].device + c.first * bufs[i].bytes_per_unit,
                                c.count * bufs[i].bytes_per_unit, s));
  }

  // One stage over the whole data on one stream, alone: 0 H2D, 1 kernel, 2 D2H.
  double stage_alone(int stage, chunk_launch& whole) {
    const chunk all{0, n_};
    CUstream s = streams_[0]->get();
    start_.record(s);
    if (stage == 0)
      h2d(all, s);
    else if (stage == 1)
      whole.enqueue(s);
    else
      d2h(all, s);
    stop_.record(s);
    stop_.synchronize();
    return stop_.elapsed_since(start_);
  }

  // The bound: H2D and D2H of the whole data at once, on two streams, no kernel.
  double both_directions() {
    const chunk all{0, n_};
    CUstream a = streams_[0]->get(), b = streams_[1]->get();
    start_.record(a);
    KL_CU(cuStreamWaitEvent(b, start_.get(), 0));
    h2d(all, a);
    d2h(all, b);
    joined_.record(b);
    KL_CU(cuStreamWaitEvent(a, joined_.get(), 0));
    stop_.record(a);
    stop_.synchronize();
    return stop_.elapsed_since(start_);
  }

  // One run of a configuration. Every stream waits for the start event, so nothing begins before
  // it; the stop event waits for every stream.
  run_times run(unsigned streams, const std::string& order, const std::vector<chunk>& chunks,
                std::vector<std::unique_ptr<chunk_launch>>& launches) {
    const std::size_t need = 6 * chunks.size();
    while (events_.size() < need) events_.push_back(std::make_unique<cuda::event>());
    while (joins_.size() < streams_.size()) joins_.push_back(std::make_unique<cuda::event>());
    CUstream first = streams_[0]->get();
    start_.record(first);
    for (unsigned s = 1; s < streams; ++s)
      KL_CU(cuStreamWaitEvent(streams_[s]->get(), start_.get(), 0));
    for (const auto& [stage, c] : issue_sequence(order, static_cast<unsigned>(chunks.size()))) {
      CUstream s = streams_[c % streams]->get();
      events_[6 * c + 2 * stage]->record(s);
      if (stage == 0)
        h2d(chunks[c], s);
      else if (stage == 1)
        launches[c]->enqueue(s);
      else
        d2h(chunks[c], s);
      events_[6 * c + 2 * stage + 1]->record(s);
    }
    for (unsigned s = 1; s < streams; ++s) {
      joins_[s]->record(streams_[s]->get());
      KL_CU(cuStreamWaitEvent(first, joins_[s]->get(), 0));
    }
    stop_.record(first);
    stop_.synchronize();
    run_times t;
    t.wall = stop_.elapsed_since(start_);
    t.chunks.resize(chunks.size());
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      t.chunks[c].chunk = static_cast<unsigned>(c);
      t.chunks[c].stream = static_cast<unsigned>(c % streams);
      for (int stage = 0; stage < 3; ++stage) {
        t.chunks[c].begin_us[stage] = 1e3 * events_[6 * c + 2 * stage]->elapsed_since(start_);
        t.chunks[c].end_us[stage] = 1e3 * events_[6 * c + 2 * stage + 1]->elapsed_since(start_);
      }
    }
    double* spans[3] = {&t.h2d, &t.kernel, &t.d2h};
    for (int stage = 0; stage < 3; ++stage) {
      double begin = 1e300, end = 0;
      for (const auto& c : t.chunks) {
        begin = std::min(begin, c.begin_us[stage]);
        end = std::max(end, c.end_us[stage]);
      }
      *spans[stage] = (end - begin) / 1e3;
    }
    return t;
  }

  // Both ends of every output get the problem's poison (for an integer output the reference's
  // complement), so that any byte the pipeline does not bring back differs from the reference.
  void poison() {
    const auto& bufs = problem_->buffers();
    for (std::size_t i = 0; i < bufs.size(); ++i) {
      if (bufs[i].input) continue;
      auto it = poisons_.find(bufs[i].name);
      if (it == poisons_.end())
        it = poisons_.emplace(bufs[i].name, problem_->poison(bufs[i].name)).first;
      const std::size_t size = bufs[i].bytes_per_unit * n_;
      std::memcpy(host_[i]->data(), it->second.data(), size);
      KL_CU(cuMemcpyHtoD(bufs[i].device, host_[i]->data(), size));
    }
  }
  check_result check() const {
    std::map<std::string, const std::uint8_t*> outputs;
    const auto& bufs = problem_->buffers();
    for (std::size_t i = 0; i < bufs.size(); ++i)
      if (!bufs[i].input) outputs[bufs[i].name] = host_[i]->data();
    return problem_->check(outputs);
  }

 private:
  const pipeline_job& job_;
  cuda::module module_;
  source_kernel kernel_;
  std::unique_ptr<pipeline_problem> problem_;
  std::uint64_t n_ = 0, align_ = 1;
  double bytes_in_ = 0, bytes_out_ = 0;
  std::vector<std::unique_ptr<cuda::pinned_buffer>> host_;    // by buffer, as problem_->buffers()
  std::map<std::string, std::vector<std::uint8_t>> poisons_;  // by output, made once
  std::vector<std::unique_ptr<cuda::stream>> streams_;
  std::vector<std::unique_ptr<cuda::event>> events_, joins_;
  cuda::event start_, stop_, joined_;
};

const char* const stage_keys[3] = {"h2d_us", "kernel_us", "d2h_us"};

nlohmann::json timeline_json(const std::vector<chunk_timeline>& chunks) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : chunks) {
    nlohmann::json j = {{"chunk", c.chunk}, {"stream", c.stream}};
    for (int stage = 0; stage < 3; ++stage)
      j[stage_keys[stage]] = {c.begin_us[stage], c.end_us[stage]};
    out.push_back(j);
  }
  return out;
}

std::vector<chunk_timeline> timeline_from_json(const nlohmann::json& j) {
  std::vector<chunk_timeline> out;
  for (const auto& x : j) {
    chunk_timeline c;
    c.chunk = x.at("chunk");
    c.stream = x.at("stream");
    for (int stage = 0; stage < 3; ++stage) {
      c.begin_us[stage] = x.at(stage_keys[stage]).at(0);
      c.end_us[stage] = x.at(stage_keys[stage]).at(1);
    }
    out.push_back(c);
  }
  return out;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

std::uint64_t chunk_units(std::uint64_t n, unsigned chunks, std::uint64_t align) {
  if (n == 0 || chunks == 0 || align == 0)
    throw std::invalid_argument("the pipeline needs n >= 1, chunks >= 1 and an alignment >= 1");
  const std::uint64_t per = (n + chunks - 1) / chunks;
  return (per + align - 1) / align * align;
}

std::vector<std::pair<int, unsigned>> issue_sequence(const std::string& order, unsigned chunks) {
  std::vector<std::pair<int, unsigned>> out;
  if (order == "breadth") {
    for (int stage = 0; stage < 3; ++stage)
      for (unsigned c = 0; c < chunks; ++c) out.emplace_back(stage, c);
  } else if (order == "depth") {
    for (unsigned c = 0; c < chunks; ++c)
      for (int stage = 0; stage < 3; ++stage) out.emplace_back(stage, c);
  } else {
    throw std::invalid_argument("issue order must be 'breadth' or 'depth', not '" + order + "'");
  }
  return out;
}

pipeline_report run_pipeline(const family& fam, const pipeline_job& job,
                             const cuda::device_info& device) {
  if (job.kernel.variant.origin != origin_kind::source)
    throw std::invalid_argument("the pipeline runs a kernel file, not " +
                                job.kernel.variant.qualified_name());
  if (job.options.runs < 1) throw std::invalid_argument("the pipeline needs at least one run");
  pipeline_rig rig(fam, job, device);
  pipeline_report rep;
  rep.family = fam.name();
  rep.variant = job.kernel.variant.qualified_name();
  rep.block = job.kernel.block;
  rep.config = job.kernel.config;
  rep.bytes_in = rig.bytes_in();
  rep.bytes_out = rig.bytes_out();
  rep.resident_blocks = rig.resident();
  // The kernel over the whole data, for its time alone.
  auto whole = rig.launches({chunk{0, rig.n()}});

  const int runs = job.options.runs;
  auto timed = [&](auto once) {
    once();  // warm-up: module loading, first-touch of the pinned pages
    std::vector<double> t;
    for (int i = 0; i < runs; ++i) t.push_back(once());
    return median(t);
  };
  rep.h2d_alone_ms = timed([&] { return rig.stage_alone(0, *whole.front()); });
  rep.kernel_alone_ms = timed([&] { return rig.stage_alone(1, *whole.front()); });
  rep.d2h_alone_ms = timed([&] { return rig.stage_alone(2, *whole.front()); });
  rep.serial_ms = rep.h2d_alone_ms + rep.kernel_alone_ms + rep.d2h_alone_ms;
  rep.bound_ms = timed([&] { return rig.both_directions(); });

  std::map<std::string, double> one_stream;  // order -> wall with one stream
  for (const auto& order : job.options.orders) {
    for (unsigned streams : job.options.streams) {
      const unsigned asked =
          job.options.chunks ? job.options.chunks : job.options.chunks_per_stream * streams;
      const auto chunks = plan_chunks(rig.n(), asked, rig.align());
      auto launches = rig.launches(chunks);
      pipeline_row row;
      row.streams = streams;
      row.order = order;
      row.chunks = static_cast<unsigned>(chunks.size());
      row.chunk_units = chunks.front().count;
      rig.run(streams, order, chunks, launches);  // warm-up
      std::vector<run_times> all;
      for (int i = 0; i < runs; ++i) {
        if (i + 1 == runs) rig.poison();  // the last run is the one validated
        all.push_back(rig.run(streams, order, chunks, launches));
      }
      const check_result c = rig.check();
      row.valid = c.ok;
      if (!c.ok) row.check = "expected " + c.expected + ", got " + c.got + " (" + c.detail + ")";
      std::vector<run_times> sorted = all;
      std::sort(sorted.begin(), sorted.end(),
                [](const run_times& a, const run_times& b) { return a.wall < b.wall; });
      // The median run (the lower middle one for an even count): its stage spans go with it.
      const run_times& mid = sorted[(sorted.size() - 1) / 2];
      row.wall_ms = sorted.size() % 2 ? mid.wall : (mid.wall + sorted[sorted.size() / 2].wall) / 2;
      row.wall_min_ms = sorted.front().wall;
      row.wall_max_ms = sorted.back().wall;
      row.h2d_ms = mid.h2d;
      row.kernel_ms = mid.kernel;
      row.d2h_ms = mid.d2h;
      row.timeline = mid.chunks;
      row.h2d_gbs = rep.bytes_in / (row.h2d_ms * 1e6);
      row.d2h_gbs = rep.bytes_out / (row.d2h_ms * 1e6);
      row.overlap = rep.serial_ms / row.wall_ms;
      row.x_bound = row.wall_ms / rep.bound_ms;
      if (streams == 1) one_stream[order] = row.wall_ms;
      rep.rows.push_back(row);
    }
  }
  for (auto& row : rep.rows)
    row.speedup = one_stream.count(row.order) ? one_stream[row.order] / row.wall_ms : 0;
  return rep;
}

nlohmann::json to_json(const pipeline_options& o) {
  return {{"streams", o.streams},
          {"orders", o.orders},
          {"chunks", o.chunks},
          {"chunks_per_stream", o.chunks_per_stream},
          {"runs", o.runs}};
}

pipeline_options pipeline_options_from_json(const nlohmann::json& j) {
  pipeline_options o;
  o.streams = j.at("streams").get<std::vector<unsigned>>();
  o.orders = j.at("orders").get<std::vector<std::string>>();
  o.chunks = j.at("chunks").get<unsigned>();
  o.chunks_per_stream = j.at("chunks_per_stream").get<unsigned>();
  o.runs = j.at("runs").get<int>();
  return o;
}

nlohmann::json to_json(const pipeline_job& job) {
  return {{"kernel", to_json(job.kernel)}, {"options", to_json(job.options)}};
}

pipeline_job pipeline_job_from_json(const nlohmann::json& j) {
  pipeline_job job;
  job.kernel = job_from_json(j.at("kernel"));
  job.options = pipeline_options_from_json(j.at("options"));
  return job;
}

nlohmann::json to_json(const pipeline_report& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& x : r.rows)
    rows.push_back({{"streams", x.streams},
                    {"order", x.order},
                    {"chunks", x.chunks},
                    {"chunk_units", x.chunk_units},
                    {"wall_ms", x.wall_ms},
                    {"wall_min_ms", x.wall_min_ms},
                    {"wall_max_ms", x.wall_max_ms},
                    {"h2d_ms", x.h2d_ms},
                    {"kernel_ms", x.kernel_ms},
                    {"d2h_ms", x.d2h_ms},
                    {"h2d_gbs", x.h2d_gbs},
                    {"d2h_gbs", x.d2h_gbs},
                    {"overlap", x.overlap},
                    {"speedup", x.speedup},
                    {"x_bound", x.x_bound},
                    {"valid", x.valid},
                    {"check", x.check},
                    {"timeline", timeline_json(x.timeline)}});
  return {{"family", r.family},
          {"variant", r.variant},
          {"block", r.block},
          {"config", to_json(r.config)},
          {"bytes_in", r.bytes_in},
          {"bytes_out", r.bytes_out},
          {"resident_blocks", r.resident_blocks},
          {"h2d_alone_ms", r.h2d_alone_ms},
          {"kernel_alone_ms", r.kernel_alone_ms},
          {"d2h_alone_ms", r.d2h_alone_ms},
          {"serial_ms", r.serial_ms},
          {"bound_ms", r.bound_ms},
          {"rows", rows}};
}

pipeline_report pipeline_report_from_json(const nlohmann::json& j) {
  pipeline_report r;
  r.variant = j.at("variant");
  r.family = j.at("family");
  r.block = j.at("block");
  r.config = config_from_json(j.at("config"));
  r.bytes_in = j.at("bytes_in");
  r.bytes_out = j.at("bytes_out");
  r.resident_blocks = j.at("resident_blocks");
  r.h2d_alone_ms = j.at("h2d_alone_ms");
  r.kernel_alone_ms = j.at("kernel_alone_ms");
  r.d2h_alone_ms = j.at("d2h_alone_ms");
  r.serial_ms = j.at("serial_ms");
  r.bound_ms = j.at("bound_ms");
  for (const auto& x : j.at("rows")) {
    pipeline_row row;
    row.streams = x.at("streams");
    row.order = x.at("order");
    row.chunks = x.at("chunks");
    row.chunk_units = x.at("chunk_units");
    row.wall_ms = x.at("wall_ms");
    row.wall_min_ms = x.at("wall_min_ms");
    row.wall_max_ms = x.at("wall_max_ms");
    row.h2d_ms = x.at("h2d_ms");
    row.kernel_ms = x.at("kernel_ms");
    row.d2h_ms = x.at("d2h_ms");
    row.h2d_gbs = x.at("h2d_gbs");
    row.d2h_gbs = x.at("d2h_gbs");
    row.overlap = x.at("overlap");
    row.speedup = x.at("speedup");
    row.x_bound = x.at("x_bound");
    row.valid = x.at("valid");
    row.check = x.at("check");
    row.timeline = timeline_from_json(x.at("timeline"));
    r.rows.push_back(row);
  }
  return r;
}

void print_pipeline(std::ostream& os, const pipeline_report& r, const cuda::device_info& device,
                    bool markdown) {
  os << "\n"
     << (markdown ? "### " : "== ") << r.family << " pipeline  " << r.config.describe() << "  ("
     << fmt("%.2f", r.bytes_in / 1073741824.0) << " GiB in, "
     << fmt("%.2f", r.bytes_out / 1073741824.0) << " GiB out)  kernel " << r.variant << " block "
     << r.block << "  seed " << r.config.seed << "  on " << device.name << "\n"
     << (markdown ? "\n" : "");
  os << "stages alone (one stream, whole data): H2D " << fmt("%.2f", r.h2d_alone_ms) << " ms ("
     << fmt("%.1f", r.bytes_in / (r.h2d_alone_ms * 1e6)) << " GB/s), kernel "
     << fmt("%.2f", r.kernel_alone_ms) << " ms, D2H " << fmt("%.2f", r.d2h_alone_ms) << " ms ("
     << fmt("%.1f", r.bytes_out / (r.d2h_alone_ms * 1e6)) << " GB/s); one after another "
     << fmt("%.2f", r.serial_ms) << " ms\n"
     << (markdown ? "\n" : "");
  os << "bound: H2D and D2H of the same data at once on two streams, no kernel: "
     << fmt("%.2f", r.bound_ms) << " ms\n\n";

  const std::vector<std::string> header = {
      "order",  "streams",  "chunks",   "wall ms", "min-max ms", "H2D ms",  "kernel ms",
      "D2H ms", "H2D GB/s", "D2H GB/s", "overlap", "speedup",    "x bound", "output"};
  std::vector<std::vector<std::string>> cells;
  for (const auto& x : r.rows)
    cells.push_back({x.order, std::to_string(x.streams), std::to_string(x.chunks),
                     fmt("%.2f", x.wall_ms),
                     fmt("%.2f", x.wall_min_ms) + "-" + fmt("%.2f", x.wall_max_ms),
                     fmt("%.2f", x.h2d_ms), fmt("%.2f", x.kernel_ms), fmt("%.2f", x.d2h_ms),
                     fmt("%.1f", x.h2d_gbs), fmt("%.1f", x.d2h_gbs), fmt("%.2f", x.overlap),
                     fmt("%.2fx", x.speedup), fmt("%.3f", x.x_bound), x.valid ? "exact" : "WRONG"});
  auto write = [&](const std::vector<std::string>& h,
                   const std::vector<std::vector<std::string>>& rows) {
    if (markdown) {
      os << "|";
      for (const auto& c : h) os << " " << c << " |";
      os << "\n|";
      for (std::size_t i = 0; i < h.size(); ++i) os << (i ? " ---: |" : " --- |");
      os << "\n";
      for (const auto& row : rows) {
        os << "|";
        for (const auto& c : row) os << " " << c << " |";
        os << "\n";
      }
      os << "\n";
      return;
    }
    std::vector<std::size_t> w(h.size());
    for (std::size_t i = 0; i < h.size(); ++i) w[i] = h[i].size();
    for (const auto& row : rows)
      for (std::size_t i = 0; i < row.size(); ++i) w[i] = std::max(w[i], row[i].size());
    auto line = [&](const std::vector<std::string>& row) {
      for (std::size_t i = 0; i < row.size(); ++i) {
        const std::string pad(w[i] - row[i].size(), ' ');
        os << (i ? "  " : "") << (i ? pad + row[i] : row[i] + pad);
      }
      os << "\n";
    };
    line(h);
    for (const auto& row : rows) line(row);
  };
  write(header, cells);
  for (const auto& x : r.rows)
    if (!x.valid)
      os << "WRONG output (" << x.order << ", " << x.streams << " streams): " << x.check << "\n";

  // Breadth and depth side by side, per stream count.
  std::map<unsigned, std::map<std::string, const pipeline_row*>> by;
  for (const auto& x : r.rows) by[x.streams][x.order] = &x;
  std::vector<std::vector<std::string>> side;
  for (const auto& [streams, orders] : by) {
    auto cell = [&](const char* order, bool ratio) {
      auto it = orders.find(order);
      if (it == orders.end()) return std::string("-");
      return ratio ? fmt("%.3f", it->second->x_bound) : fmt("%.2f", it->second->wall_ms);
    };
    side.push_back({std::to_string(streams), cell("breadth", false), cell("breadth", true),
                    cell("depth", false), cell("depth", true)});
  }
  os << (markdown ? "" : "\n");
  write({"streams", "breadth ms", "breadth x bound", "depth ms", "depth x bound"}, side);
  const pipeline_row* best = nullptr;
  for (const auto& x : r.rows)
    if (x.valid && (!best || x.wall_ms < best->wall_ms)) best = &x;
  if (best)
    os << "best: " << best->order << ", " << best->streams << " streams, " << best->chunks
       << " chunks: " << fmt("%.2f", best->wall_ms) << " ms, "
       << fmt("%.1f", (best->x_bound - 1) * 100) << "% over the bound (" << fmt("%.2f", r.bound_ms)
       << " ms), " << fmt("%.2f", best->overlap) << "x overlap\n";
  os << "(wall: median of the runs, first issue to last completion; stage ms: each stage's span in "
        "the median run; overlap: the stages alone, summed, / wall; speedup: one stream's wall / "
        "this wall, same order)\n";
}

}  // namespace kl
