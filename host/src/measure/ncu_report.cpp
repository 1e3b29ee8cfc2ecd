#include "measure/ncu_report.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>

namespace kl {

const char* const ncu_metrics =
    "gpu__time_duration.sum,"
    "dram__throughput.avg.pct_of_peak_sustained_elapsed,"
    "sm__warps_active.avg.pct_of_peak_sustained_active,"
    "lts__t_sector_hit_rate.pct,"
    "sm__throughput.avg.pct_of_peak_sustained_elapsed,"
    "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio";

std::string profile_range_name(std::size_t row) { return "kl/row" + std::to_string(row); }

namespace {

const std::string stall_prefix = "smsp__average_warps_issue_stalled_";
const std::string stall_suffix = "_per_issue_active.ratio";

// One CSV record (RFC 4180: fields in double quotes, a quote inside one doubled). `line` holds
// whole lines; returns false while a quoted field is still open at its end (a line break inside
// a field: the caller appends the next line and tries again).
bool split_csv(const std::string& line, std::vector<std::string>& fields) {
  fields.clear();
  std::string field;
  bool quoted = false, was_quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"' && !was_quoted && field.empty()) {
      quoted = was_quoted = true;
    } else if (c == ',') {
      fields.push_back(field);
      field.clear();
      was_quoted = false;
    } else if (c != '\r') {
      field += c;
    }
  }
  if (quoted) return false;
  fields.push_back(field);
  return true;
}

// A value of the page: "61.55", "2,048" (thousands separators), "" or "n/a" (none).
std::optional<double> number(const std::string& text) {
  std::string s;
  for (char c : text)
    if (c != ',' && c != ' ') s += c;
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE) return std::nullopt;  // "n/a", "no data"
  return v;
}

// How many nanoseconds one unit of a duration column is: the CSV of a profiling run says "ns",
// an import "us" (or, in older versions, "nsecond", "usecond", ...).
double nanoseconds_per(const std::string& unit) {
  if (unit == "ns" || unit == "nsecond") return 1;
  if (unit == "us" || unit == "usecond") return 1e3;
  if (unit == "ms" || unit == "msecond") return 1e6;
  if (unit == "s" || unit == "second") return 1e9;
  throw std::runtime_error("ncu's raw page: gpu__time_duration.sum is in '" + unit +
                           "', which is not a unit of time kernlab knows");
}

// "kl/row12" where `text` at `from` is "kl/row12" followed by `end` ('/' in a renamed kernel's
// name, "kl/row12/reduce5<256u, int>(...)"; ':' in ncu's NVTX stack); "" for anything else.
std::string row_range_at(const std::string& text, std::size_t from, char end) {
  const std::string prefix = "kl/row";
  if (text.compare(from, prefix.size(), prefix) != 0) return "";
  std::size_t at = from + prefix.size();
  while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) ++at;
  if (at == from + prefix.size() || at >= text.size() || text[at] != end) return "";
  return text.substr(from, at - from);
}

// The row's range in the NVTX stack ncu recorded for a kernel (its "thread Domain:Push/Pop_Range"
// column: `"<default domain>:kl/row12:none:..."  "CCCL:cub::DeviceScan::InclusiveSum:..."`),
// whatever ranges a library pushed inside the row's; "" when the stack holds none.
std::string range_in_stack(const std::string& stack) {
  const std::string key = "<default domain>:";
  for (auto at = stack.find(key); at != std::string::npos; at = stack.find(key, at + 1))
    if (std::string range = row_range_at(stack, at + key.size(), ':'); !range.empty()) return range;
  return "";
}

}  // namespace

std::vector<ncu_kernel> parse_ncu_raw_csv(std::istream& in) {
  std::string line;
  std::vector<std::string> header;
  while (std::getline(in, line))
    if (line.rfind("\"ID\",", 0) == 0) {
      if (!split_csv(line, header))
        throw std::runtime_error("ncu's raw page: a broken header line");
      break;
    }
  if (header.empty())
    throw std::runtime_error("ncu printed no raw page (no line starts with \"ID\")");
  std::map<std::string, std::size_t> column;
  std::optional<std::size_t> stack_column;  // the NVTX push/pop ranges around each kernel
  for (std::size_t i = 0; i < header.size(); ++i) {
    column.emplace(header[i], i);
    if (header[i].rfind("thread Domain:Push/Pop_Range", 0) == 0) stack_column = i;
  }
  for (const char* needed : {"ID", "Kernel Name"})
    if (!column.count(needed))
      throw std::runtime_error(std::string("ncu's raw page has no \"") + needed + "\" column");

  std::vector<std::string> units;
  std::vector<ncu_kernel> out;
  std::string record;
  std::size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    record = record.empty() ? line : record + "\n" + line;
    std::vector<std::string> fields;
    if (!split_csv(record, fields)) continue;  // a line break inside a quoted field
    record.clear();
    if (fields.size() == 1 && fields[0].empty()) continue;  // a blank line
    if (fields.size() != header.size()) {
      // ncu's own lines after the page (==PROF==, ==WARNING==) end it; anything else is damage.
      if (line.rfind("==", 0) == 0) break;
      throw std::runtime_error("ncu's raw page: line " + std::to_string(line_no) +
                               " after the header has " + std::to_string(fields.size()) +
                               " fields, the header " + std::to_string(header.size()));
    }
    if (units.empty()) {  // the line after the header: each column's unit
      units = fields;
      continue;
    }
    auto value = [&](const std::string& name) -> std::optional<double> {
      const auto it = column.find(name);
      return it == column.end() ? std::nullopt : number(fields[it->second]);
    };
    ncu_kernel k;
    k.id = fields[column.at("ID")];
    k.name = fields[column.at("Kernel Name")];
    // ncu renames a kernel after its innermost range: under a library's own range (CUB pushes one
    // per device algorithm) the name no longer starts with the row's, but the stack still has it.
    k.range = row_range_at(k.name, 0, '/');
    if (k.range.empty() && stack_column) k.range = range_in_stack(fields[*stack_column]);
    if (const auto it = column.find("gpu__time_duration.sum"); it != column.end())
      if (const auto t = number(fields[it->second]))
        k.duration_ns = *t * nanoseconds_per(units[it->second]);
    k.dram_pct = value("dram__throughput.avg.pct_of_peak_sustained_elapsed");
    k.occupancy_pct = value("sm__warps_active.avg.pct_of_peak_sustained_active");
    k.l2_hit_pct = value("lts__t_sector_hit_rate.pct");
    k.sm_pct = value("sm__throughput.avg.pct_of_peak_sustained_elapsed");
    for (std::size_t i = 0; i < header.size(); ++i) {
      const std::string& h = header[i];
      if (h.size() <= stall_prefix.size() + stall_suffix.size() || h.rfind(stall_prefix, 0) != 0 ||
          h.compare(h.size() - stall_suffix.size(), stall_suffix.size(), stall_suffix) != 0)
        continue;
      const std::string reason =
          h.substr(stall_prefix.size(), h.size() - stall_prefix.size() - stall_suffix.size());
      if (reason == "selected") continue;  // the cycle a warp issues: not a stall
      if (const auto v = number(fields[i])) k.stalls.push_back({reason, *v});
    }
    out.push_back(std::move(k));
  }
  if (!record.empty()) throw std::runtime_error("ncu's raw page ends inside a quoted field");
  return out;
}

profile_summary summarize_kernels(const std::vector<const ncu_kernel*>& kernels) {
  profile_summary s;
  s.kernels = static_cast<int>(kernels.size());
  double total_ns = 0;
  for (const auto* k : kernels) total_ns += k->duration_ns.value_or(0);
  s.duration_us = total_ns / 1e3;
  // Each kernel's weight: its duration; without any duration, every kernel counts the same.
  auto weight = [&](const ncu_kernel* k) { return total_ns > 0 ? k->duration_ns.value_or(0) : 1; };
  auto average = [&](std::optional<double> ncu_kernel::*metric) -> std::optional<double> {
    double sum = 0, weights = 0;
    bool any = false;
    for (const auto* k : kernels)
      if (const auto& v = k->*metric) {
        sum += *v * weight(k);
        weights += weight(k);
        any = true;
      }
    if (!any) return std::nullopt;
    return weights > 0 ? sum / weights : 0;
  };
  s.dram_pct = average(&ncu_kernel::dram_pct);
  s.occupancy_pct = average(&ncu_kernel::occupancy_pct);
  s.l2_hit_pct = average(&ncu_kernel::l2_hit_pct);
  s.sm_pct = average(&ncu_kernel::sm_pct);

  std::vector<std::string> order;  // the reasons, first seen first: ties keep the page's order
  std::map<std::string, std::pair<double, double>> stalls;  // reason -> (weighted sum, weights)
  for (const auto* k : kernels)
    for (const auto& r : k->stalls) {
      auto [it, fresh] = stalls.emplace(r.name, std::make_pair(0.0, 0.0));
      if (fresh) order.push_back(r.name);
      it->second.first += r.cycles * weight(k);
      it->second.second += weight(k);
    }
  std::vector<stall_reason> all;
  for (const auto& name : order) {
    const auto& [sum, weights] = stalls.at(name);
    const double v = weights > 0 ? sum / weights : 0;
    if (v > 0) all.push_back({name, v});
  }
  std::stable_sort(all.begin(), all.end(), [](const stall_reason& a, const stall_reason& b) {
    return a.cycles > b.cycles;
  });
  if (all.size() > 2) all.resize(2);
  s.top_stalls = all;
  return s;
}

std::map<std::string, std::vector<const ncu_kernel*>> kernels_by_range(
    const std::vector<ncu_kernel>& kernels) {
  std::map<std::string, std::vector<const ncu_kernel*>> out;
  for (const auto& k : kernels)
    if (!k.range.empty()) out[k.range].push_back(&k);
  return out;
}

}  // namespace kl
