#include "watch/watch_session.hpp"

#include "families/family.hpp"

#include "cli/options.hpp"
#include "runner/compile_stage.hpp"

#include <algorithm>
#include <ctime>
#include <set>

namespace kl {
namespace {

std::string clock_time() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

// "a.cu, b.cuh and 3 more"
std::string some_names(const std::vector<std::string>& names) {
  std::string s;
  const std::size_t shown = std::min<std::size_t>(names.size(), 3);
  for (std::size_t i = 0; i < shown; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > shown) s += " and " + std::to_string(names.size() - shown) + " more";
  return s;
}

std::string row_key(const result_record& r) {
  return std::to_string(r.block) + " " + r.config.describe();
}

}  // namespace

watch_session::watch_session(const family_registry& families, workspace_loader load,
                             const watch_workspace& first_workspace, const sweep_result& first)
    : families_(families),
      round_families_(first_workspace.families),
      load_(std::move(load)),
      arch_(first.arch) {
  run_rows_ = first.device.has_value() && !first_workspace.request.compile_only;
  if (run_rows_) {
    CUdevice dev = 0;
    KL_CU(cuDeviceGet(&dev, first.device->ordinal));
    context_ = std::make_unique<cuda::primary_context>(dev);
  }
  remember(first_workspace.request, first);
}

watch_session::~watch_session() = default;

std::string watch_session::family_fingerprint(const std::string& family) const {
  const auto* data = families().find(family);
  if (!data) return "";
  return " family " +
         nvrtc::hash128(data->spec().text + '\0' + data->spec().reference.source).hex();
}

std::string watch_session::fingerprint(const registry_entry& e, const run_request& request,
                                       nvrtc::include_scanner& scanner, bool reference) const {
  if (!e.error.empty()) return "header error " + nvrtc::hash128(e.source + '\0' + e.error).hex();
  const family& f = *families().find(e.descriptor.family);
  const auto req = reference ? make_reference_request(f, request, arch_)
                             : make_compile_request(f, e, request, arch_);
  const std::string fam = family_fingerprint(e.descriptor.family);
  if (req.name_expressions.empty())
    return "nothing to compile " + nvrtc::hash128(e.source).hex() + fam;
  try {
    return nvrtc::make_key(req, scanner).hex() + fam;
  } catch (const nvrtc::scan_error& err) {  // the compile reports it; a new message is a change
    return "scan error " + nvrtc::hash128(err.what()).hex() + fam;
  }
}

void watch_session::remember(const run_request& request, const sweep_result& sweep) {
  nvrtc::include_scanner scanner(request.toolkit_include_dirs);
  for (const compile_record& c : sweep.compiles) {
    variant_state& s = state_[c.entry->descriptor.qualified_name()];
    // The key the sweep compiled with: a save made while it ran then still counts as a change.
    const bool reference =
        std::count(request.references.begin(), request.references.end(), c.entry);
    s.fingerprint = c.key.empty() ? fingerprint(*c.entry, request, scanner, reference)
                                  : c.key + family_fingerprint(c.entry->descriptor.family);
    s.compile = snapshot_of(c);
    s.rows.clear();
  }
  for (const result_record& r : sweep.results)
    if (auto it = state_.find(r.variant.qualified_name()); it != state_.end())
      it->second.rows.push_back(r);
}

std::size_t watch_session::round(const std::vector<std::string>& saved, std::ostream& out,
                                 std::ostream& err) {
  out << "\n-- " << clock_time() << "  saved: " << some_names(saved) << "\n";
  watch_workspace ws;
  try {
    ws = load_();
  } catch (const usage_error& e) {
    err << "kernlab: " << e.what() << " (still watching)\n";
    return 0;
  }

  // This round's families (and its registry, which points into them) live until the next one.
  if (ws.families) round_families_ = ws.families;
  nvrtc::include_scanner scanner(ws.request.toolkit_include_dirs);
  std::vector<const registry_entry*> changed;
  std::set<std::string> present;
  for (const registry_entry* e : ws.request.variants) {
    if (e->descriptor.origin != origin_kind::source) continue;
    const std::string name = e->descriptor.qualified_name();
    present.insert(name);
    const auto it = state_.find(name);
    if (it == state_.end() || it->second.fingerprint != fingerprint(*e, ws.request, scanner))
      changed.push_back(e);
  }
  // The references --compile-only compiles beside the variants: again when theirs changed.
  std::vector<const registry_entry*> changed_references;
  for (const registry_entry* e : ws.request.references) {
    const std::string name = e->descriptor.qualified_name();
    present.insert(name);
    const auto it = state_.find(name);
    if (it == state_.end() || it->second.fingerprint != fingerprint(*e, ws.request, scanner, true))
      changed_references.push_back(e);
  }
  for (auto it = state_.begin(); it != state_.end();) {
    if (present.count(it->first)) {
      ++it;
      continue;
    }
    out << it->first << ": removed (no longer selected, or its file is gone)\n";
    it = state_.erase(it);
  }
  if (changed.empty() && changed_references.empty()) {
    out << "no selected variant changed\n";
    return 0;
  }

  run_request request = ws.request;
  request.variants = changed;
  request.references = changed_references;
  request.compile_only = !run_rows_;
  request.want_keys = true;
  const sweep_result sweep = runner(families(), request).run();

  std::vector<compile_change> compiles;
  for (const compile_record& c : sweep.compiles) {
    compile_change ch;
    if (auto it = state_.find(c.entry->descriptor.qualified_name()); it != state_.end())
      ch.before = it->second.compile;
    ch.now = snapshot_of(c);
    compiles.push_back(std::move(ch));
  }
  print_compile_changes(out, compiles, sweep.arch);
  print_compile_summary(out, sweep.compile_stats);
  for (const auto& w : sweep.warnings) err << "kernlab: warning: " << w << "\n";

  if (run_rows_) {
    std::vector<row_change> rows;
    for (const result_record& r : sweep.results) {
      row_change ch;
      ch.now = r;
      if (auto it = state_.find(r.variant.qualified_name()); it != state_.end())
        for (const auto& b : it->second.rows)
          if (row_key(b) == row_key(r)) ch.before = b;
      rows.push_back(std::move(ch));
    }
    out << "\n";
    print_row_changes(out, rows);
  }
  remember(request, sweep);
  return changed.size();
}

void watch_session::run(directory_watcher& watcher, const std::vector<std::string>& dirs,
                        std::ostream& out, std::ostream& err) {
  for (;;) {
    out << "\nwatching " << some_names(dirs) << " for saved files (Ctrl-C stops)\n" << std::flush;
    std::vector<std::string> saved;
    while (saved.empty()) {
      saved = watcher.wait(std::chrono::milliseconds(-1));
      for (const auto& n : watcher.take_notices()) err << "kernlab: " << n << "\n";
      err << std::flush;
    }
    try {
      round(saved, out, err);
    } catch (const std::exception& e) {
      // A round that fails as a whole (the cache folder vanished, the GPU went away) is shown;
      // the next save tries again.
      err << "kernlab: error: " << e.what() << " (still watching)\n";
    }
    err << std::flush;
  }
}

}  // namespace kl
