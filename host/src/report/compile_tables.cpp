// The compile stage's tables: each file's compile (--compile-only), each instantiation's resources
// and occupancy (--resources), the summary line, --watch's changed rows and the cache's state.
#include "report/table.hpp"
#include "report/text_helpers.hpp"

#include "report/text_table.hpp"

#include "families/family.hpp"

#include "cuda/occupancy.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>
#include <sstream>

namespace kl {

using namespace text;

void print_compile_table(std::ostream& os, const std::vector<compile_record>& compiles,
                         const std::string& arch) {
  os << "compiled for " << arch << "\n";
  const std::size_t nw = name_width(
      compiles, [](const compile_record& c) { return c.entry->descriptor.qualified_name(); });
  os << col("variant", nw) << col("instances", 10, true) << col("cache", 7, true)
     << col("compile ms", 12, true) << col("regs", 9, true) << col("spill B", 9, true)
     << "  status\n";
  std::vector<std::string> errors;
  for (const auto& c : compiles) {
    long spill = 0;
    for (const auto& kv : c.result.resources)
      spill = std::max(spill, kv.second.spill_store_bytes + kv.second.spill_load_bytes);
    const std::string regs = register_range(c.result);
    const bool ok = c.error.empty();
    os << col(c.entry->descriptor.qualified_name(), nw)
       << col(std::to_string(c.result.lowered_names.size()), 10, true)
       << col(to_string(c.cache), 7, true) << col(milliseconds(c.milliseconds), 12, true)
       << col(regs, 9, true) << col(regs != "-" ? std::to_string(spill) : "-", 9, true) << "  "
       << (ok ? "ok" : "FAILED") << "\n";
    if (!ok) errors.push_back(c.error);
  }
  for (const auto& e : errors) os << "\n" << e << (e.empty() || e.back() == '\n' ? "" : "\n");
}

namespace {
// A block's shared memory: the kernel's static bytes and what its launch asks for.
std::size_t shared_per_block(const nvrtc::resource_usage& r, const instantiation& inst) {
  return static_cast<std::size_t>(r.static_shared_bytes) + inst.dynamic_shared_bytes;
}
}  // namespace

void print_resources(std::ostream& os, const std::vector<compile_record>& compiles,
                     const std::string& arch, bool markdown) {
  // A device newer than kernlab's table gets its resources without an occupancy, never another
  // architecture's.
  const std::optional<sm_limits> limits = find_limits(arch);
  if (limits)
    os << "resources for " << arch
       << " (from ptxas; occupancy is theoretical: " << limits->max_threads << " threads, "
       << limits->max_blocks << " blocks, " << limits->registers << " registers, "
       << limits->shared_bytes / 1024 << " KiB of shared memory per SM)\n";
  else
    os << "resources for " << arch << " (from ptxas; no occupancy: kernlab has no SM limits for "
       << arch << ")\n";
  text_table t;
  // smem B: the kernel's static shared memory; dyn B: what its launch asks for (the header's
  // shared_bytes). The occupancy counts both.
  t.header = {"variant", "block",   "dtype",   "op",        "regs",      "smem B",
              "dyn B",   "stack B", "spill B", "blocks/SM", "occupancy", "limited by"};
  t.right = {false, true, false, false, true, true, true, true, true, true, true, false};
  std::vector<std::string> errors;
  for (const auto& c : compiles) {
    if (!c.error.empty()) {
      errors.push_back(c.error);
      continue;
    }
    for (const auto& inst : c.instances) {
      auto it = c.result.resources.find(inst.name_expression);
      if (it == c.result.resources.end()) continue;
      const auto& r = it->second;
      const auto occ =
          limits ? estimate_occupancy(r.registers, shared_per_block(r, inst), inst.block, *limits)
                 : occupancy_estimate{};
      const std::string& target = c.entry->descriptor.target;
      t.rows.push_back({c.entry->descriptor.name + (target.empty() ? "" : " (" + target + ")"),
                        std::to_string(inst.block), inst.dtype, inst.op,
                        std::to_string(r.registers), std::to_string(r.static_shared_bytes),
                        std::to_string(inst.dynamic_shared_bytes),
                        std::to_string(r.stack_frame_bytes),
                        std::to_string(r.spill_store_bytes + r.spill_load_bytes),
                        limits ? std::to_string(occ.blocks_per_sm) : "-",
                        limits ? fmt("%.0f%%", occ.fraction * 100) : "-",
                        limits && occ.fraction < 1.0 ? occ.limiter : ""});
      t.trailers.emplace_back();
    }
  }
  t.write(os, markdown);
  for (const auto& e : errors) os << "\n" << e << (e.empty() || e.back() == '\n' ? "" : "\n");
}

std::vector<result_record> resource_records(const std::vector<compile_record>& compiles,
                                            const std::string& arch, const std::string& input_mode,
                                            std::uint64_t seed) {
  const std::optional<sm_limits> limits = find_limits(arch);
  std::vector<result_record> out;
  for (const auto& c : compiles) {
    result_record r;
    r.variant = c.entry->descriptor;
    r.config.input_mode = input_mode;
    r.config.seed = seed;
    r.compile_ms = c.milliseconds;
    if (!c.error.empty()) {
      r.status = outcome::failed;
      r.message = c.error;
      out.push_back(std::move(r));
      continue;
    }
    for (const auto& inst : c.instances) {
      const auto it = c.result.resources.find(inst.name_expression);
      if (it == c.result.resources.end()) continue;
      result_record one = r;
      one.block = inst.block;
      one.config.dtype = inst.dtype;
      one.config.op = inst.op;
      one.status = outcome::skipped;
      one.message = "--resources: compiled for " + arch + ", not run";
      one.resources = it->second;
      if (limits) {
        const auto occ = estimate_occupancy(
            it->second.registers, shared_per_block(it->second, inst), inst.block, *limits);
        one.occupancy = occupancy_info{occ.blocks_per_sm, occ.fraction};
      }
      out.push_back(std::move(one));
    }
  }
  return out;
}

void print_compile_summary(std::ostream& os, const compile_summary& s) {
  auto count = [](std::size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  if (s.files == 0 && s.failed == 0) {
    os << "compile: no kernel file to compile\n";
    return;
  }
  os << "compile: " << count(s.files, "file", "files") << " on "
     << count(s.jobs, "thread", "threads") << ", ";
  if (s.cache_dir.empty())
    os << "cache off";
  else
    os << count(s.hits, "hit", "hits") << ", " << count(s.misses, "miss", "misses");
  if (s.failed) os << ", " << s.failed << " failed";
  os << ", " << milliseconds(s.wall_ms) << " ms wall";
  if (!s.cache_dir.empty()) os << " (cache " << s.cache_dir << ")";
  os << "\n";
}

compile_snapshot snapshot_of(const compile_record& c) {
  compile_snapshot s;
  s.name = c.entry->descriptor.qualified_name();
  s.instances = c.result.lowered_names.size();
  s.cache = c.cache;
  s.milliseconds = c.milliseconds;
  s.registers = register_range(c.result);
  s.error = c.error;
  return s;
}

void print_compile_changes(std::ostream& os, const std::vector<compile_change>& changes,
                           const std::string& arch) {
  if (changes.empty()) return;
  // "12" when nothing changed, "12 -> 14" when it did; "(new)" for a file the last round lacked.
  auto change = [](const std::optional<std::string>& was, const std::string& now) {
    if (!was) return now + " (new)";
    return *was == now ? now : *was + " -> " + now;
  };
  auto status = [](const compile_snapshot& s) {
    return std::string(s.error.empty() ? "ok" : "FAILED");
  };
  os << "compiled for " << arch << "\n";
  const std::size_t nw = name_width(changes, [](const compile_change& c) { return c.now.name; });
  os << col("variant", nw) << col("instances", 10, true) << col("cache", 7, true)
     << col("compile ms", 12, true) << col("regs", 14, true) << "  status\n";
  std::vector<std::string> errors;
  for (const auto& c : changes) {
    const auto& was = c.before;
    os << col(c.now.name, nw) << col(std::to_string(c.now.instances), 10, true)
       << col(to_string(c.now.cache), 7, true) << col(milliseconds(c.now.milliseconds), 12, true)
       << col(change(was ? std::optional<std::string>(was->registers) : std::nullopt,
                     c.now.registers),
              14, true)
       << "  "
       << change(was ? std::optional<std::string>(status(*was)) : std::nullopt, status(c.now))
       << "\n";
    if (!c.now.error.empty()) errors.push_back(c.now.error);
  }
  for (const auto& e : errors) os << "\n" << e << (e.empty() || e.back() == '\n' ? "" : "\n");
}

void print_row_changes(std::ostream& os, const std::vector<row_change>& rows) {
  if (rows.empty()) return;
  const std::size_t nw = name_width(rows, [](const row_change& r) { return r.now.variant.name; });
  std::size_t cw = 10;
  for (const auto& r : rows) cw = std::max(cw, r.now.config.describe().size() + 2);
  os << col("variant", nw) << col("block", 6, true) << "  " << col("config", cw)
     << col("was us", 10, true) << col("now us", 10, true) << col("change", 9, true)
     << "  status\n";
  std::vector<std::string> notes;
  for (const auto& r : rows) {
    const result_record* was = r.before ? &*r.before : nullptr;
    const bool was_timed = was && was->timed();
    const bool now_timed = r.now.timed();
    std::string status = to_string(r.now.status);
    if (!was)
      status += " (new)";
    else if (was->status != r.now.status)
      status = std::string(to_string(was->status)) + " -> " + status;
    os << col(r.now.variant.name, nw) << col(block_text(r.now.block), 6, true) << "  "
       << col(r.now.config.describe(), cw)
       << col(was_timed ? fmt("%.2f", was->timing->median_ms * 1e3) : "-", 10, true)
       << col(now_timed ? fmt("%.2f", r.now.timing->median_ms * 1e3) : "-", 10, true)
       << col(was_timed && now_timed
                  ? fmt("%+.1f%%", (r.now.timing->median_ms / was->timing->median_ms - 1) * 100)
                  : "-",
              9, true)
       << "  " << status << "\n";
    if (!now_timed && !r.now.message.empty())
      notes.push_back(r.now.variant.name + " block " + block_text(r.now.block) + ": " +
                      r.now.message);
  }
  for (const auto& n : notes) os << n << (n.back() == '\n' ? "" : "\n");
}

void print_cache_info(std::ostream& os, const nvrtc::cache_info& info) {
  os << "compile cache: " << info.dir.string() << "\n";
  if (!info.exists) {
    os << "  empty (the folder does not exist yet)\n";
    return;
  }
  os << "  entries:    " << info.entries << " (" << human_bytes(static_cast<double>(info.bytes))
     << " of the " << human_bytes(static_cast<double>(info.max_bytes))
     << " cap; the least recently used go first)";
  if (info.damaged) os << ", " << info.damaged << " damaged (rebuilt when next needed)";
  os << "\n";
  if (info.not_files)
    os << "  not files:  " << info.not_files
       << " folder(s), FIFO(s) or device(s) at an entry's name: skipped unread, replaced when "
          "next stored ('kernlab cache prune' removes them)\n";
  if (info.entries > info.damaged)
    os << "  saves:      " << fmt("%.1f", info.compile_ms / 1e3)
       << " s of NVRTC time when every entry is used once\n";
  if (info.entries)
    os << "  written:    " << local_time(info.oldest) << " .. " << local_time(info.newest) << "\n";
  if (info.temporary_files)
    os << "  temporary:  " << info.temporary_files
       << " file(s) left by an interrupted write ('kernlab cache clear' removes them)\n";
  const auto& c = info.counters;
  const std::uint64_t lookups = c.hits + c.misses;
  os << "  counters:   " << c.runs << " run(s), " << c.hits << " hit(s), " << c.misses
     << " miss(es)";
  if (lookups)
    os << " (" << fmt("%.0f", 100.0 * static_cast<double>(c.hits) / static_cast<double>(lookups))
       << "% hits)";
  os << ", " << c.stores << " store(s), " << c.corrupt << " damaged entry(ies) rebuilt\n";
}

void print_prune_result(std::ostream& os, const nvrtc::prune_result& r, std::uint64_t limit,
                        const std::filesystem::path& dir) {
  os << "removed " << r.removed << " entr" << (r.removed == 1 ? "y" : "ies") << " ("
     << human_bytes(static_cast<double>(r.removed_bytes)) << "), kept " << r.kept << " ("
     << human_bytes(static_cast<double>(r.kept_bytes)) << ", at most "
     << human_bytes(static_cast<double>(limit)) << ") in " << dir.string() << "\n";
}

}  // namespace kl
