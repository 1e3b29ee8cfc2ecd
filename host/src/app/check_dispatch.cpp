#include "app/check_dispatch.hpp"

#include "cli/options.hpp"
#include "core/file_read.hpp"
#include "core/file_write.hpp"
#include "process/command.hpp"
#include "report/selector_export.hpp"
#include "report/text_table.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>

namespace kl::app {
namespace {

namespace fs = std::filesystem;

// The first lines of a compiler's output, for an error message.
std::string head_of(const std::string& path, int lines) {
  std::ifstream in(path);
  std::string out, line;
  for (int i = 0; i < lines && std::getline(in, line); ++i) out += "\n  " + line;
  return out;
}

// A folder only this user may enter for the program (core/file_write.hpp), removed with it: the
// program is run, so it must not be a path another user could have put something at.
struct scratch_dir {
  fs::path path = make_private_folder("kernlab-check-dispatch-");
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

dispatch_picks::dispatch_picks(const std::string& header, const tune::tuning_space& space,
                               const std::string& model,
                               const std::vector<std::vector<std::uint64_t>>& sizes)
    : header_(header), space_(&space) {
  const std::string text = read_regular_file_or_throw(header, std::uint64_t{16} << 20);
  // kernlab tune --export-header writes `constexpr const ID_config& ID_select(long long n, ...)`
  // after `struct ID_config { long long AXIS; ... int PARAM; ... };`, ID from the file's family
  // and name; a header of several files has one of each per file.
  const std::string id = c_identifier(space.family + "_" + space.name);
  function_ = id + "_select";
  static const std::regex select_re(R"(constexpr const \w+_config& (\w+_select)\(([^)]*)\))");
  std::string found, args;
  bool mine = false;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), select_re);
       it != std::sregex_iterator() && !mine; ++it) {
    mine = (*it)[1] == function_;
    if (mine) args = (*it)[2];
    found += (found.empty() ? "" : ", ") + (*it)[1].str();
  }
  if (!mine)
    throw usage_error(header + ": no " + function_ + " in it (" +
                      (found.empty() ? "kernlab tune --export-header writes one for a tune over "
                                       "sizes alone"
                                     : "it has " + found) +
                      ")");
  // A header of a tune over several GPU models selects by the model first: this GPU's.
  const bool by_model = args.rfind("const char* model", 0) == 0;
  const auto axes = static_cast<std::size_t>(std::count(args.begin(), args.end(), ',') +
                                             (args.empty() || by_model ? 0 : 1));
  const std::string model_arg = by_model ? c_string(model) + ", " : "";
  std::vector<std::string> params;
  static const std::regex field_re(R"(\n  int (\w+);)");
  const auto body = text.find("struct " + id + "_config {");
  const auto end = text.find("};", body);
  if (body == std::string::npos || end == std::string::npos)
    throw usage_error(header + ": no struct " + id + "_config in it");
  const std::string fields = text.substr(body, end - body);
  for (auto it = std::sregex_iterator(fields.begin(), fields.end(), field_re);
       it != std::sregex_iterator(); ++it)
    params.push_back((*it)[1]);
  for (const auto& s : sizes)
    if (s.size() != axes)
      throw usage_error(header + ": " + function_ + " takes " + std::to_string(axes) +
                        " size(s); the sizes to check have " + std::to_string(s.size()));

  // A program that prints the pick at every size, one line each: the parameters' values.
  const scratch_dir dir;
  std::ostringstream cpp;
  // The header's text as read, beside the program: its path may hold what an #include cannot.
  std::ofstream((dir.path / "dispatch.h").string()) << text;
  cpp << "#include \"dispatch.h\"\n#include <cstdio>\nint main() {\n";
  for (const auto& s : sizes) {
    cpp << "  {\n    const auto& c = " << function_ << "(" << model_arg;
    for (std::size_t i = 0; i < s.size(); ++i) cpp << (i ? ", " : "") << s[i] << "LL";
    cpp << ");\n    std::printf(\"";
    for (std::size_t i = 0; i < params.size(); ++i) cpp << (i ? " " : "") << "%d";
    cpp << "\\n\"";
    for (const auto& p : params) cpp << ", c." << p;
    cpp << ");\n  }\n";
  }
  cpp << "}\n";
  std::ofstream((dir.path / "check.cpp").string()) << cpp.str();
  const char* cxx = std::getenv("CXX");
  const std::string compiler = cxx && *cxx ? cxx : "c++";
  const std::string log = (dir.path / "compile.log").string();
  const auto built =
      worker::run_to_file({compiler, "-std=c++17", "-o", (dir.path / "check").string(),
                           (dir.path / "check.cpp").string()},
                          log, 120);
  if (!built.ok)
    throw usage_error(header + ": a program calling " + function_ + " did not compile with " +
                      compiler + " (" + built.how + "):" + head_of(log, 8));
  const std::string out = (dir.path / "picks.txt").string();
  const auto ran = worker::run_to_file({(dir.path / "check").string()}, out, 60);
  if (!ran.ok) throw usage_error(header + ": the program calling " + function_ + " " + ran.how);
  std::ifstream in(out);
  for (const auto& s : sizes) {
    auto& row = picks_[s];
    row.clear();
    for (const auto& p : params) {
      std::int64_t v = 0;
      if (!(in >> v)) throw usage_error(header + ": " + function_ + " printed too little");
      row.emplace_back(p, v);
    }
  }
}

std::size_t dispatch_picks::point_at(const std::vector<std::uint64_t>& sizes) const {
  const tune::tuning_space& space = *space_;
  const auto& want = picks_.at(sizes);
  for (std::size_t p = 0; p < space.candidates.size(); ++p) {
    const auto& have = space.candidates[p].values;
    const bool same = std::all_of(want.begin(), want.end(), [&](const auto& w) {
      return std::any_of(have.begin(), have.end(), [&](const auto& h) { return h == w; });
    });
    if (same && have.size() == want.size()) return p;
  }
  std::string values;
  for (const auto& [name, v] : want)
    values += (values.empty() ? "" : " ") + name + "=" + std::to_string(v);
  throw usage_error(header_ + ": " + function_ + " picks " + values + ", which is no point of " +
                    space.file + " (the file changed since the header was written?)");
}

void print_dispatch_check(std::ostream& os, const dispatch_picks& picks,
                          const std::vector<tune::tune_outcome>& tunes,
                          const std::vector<std::size_t>& picked) {
  text_table tab;
  tab.header = {"problem", "the header's pick", "median us", "its best", "median us", "loss"};
  tab.right = {false, false, true, false, true, true};
  std::vector<double> losses;
  std::size_t raced = 0;
  for (std::size_t k = 0; k < tunes.size() && k < picked.size(); ++k) {
    const tune::tune_outcome& t = tunes[k];
    if (t.space != &picks.space()) continue;
    const tune::evaluation* best = t.best();
    const tune::evaluation* pick = nullptr;
    for (const auto& e : t.evaluations)
      if (e.point == picked[k] && (!pick || (e.record.timed() && !e.raced()))) pick = &e;
    std::vector<std::string> row = {t.config.describe(),
                                    tune::describe(t.space->candidates[picked[k]])};
    // A raced pick (a replay of a raced tune; on the GPU the pick comes first, before any bound)
    // has a rough figure: its loss is shown and counted, marked as such.
    const bool timed = pick && pick->record.timed();
    if (!timed || !best) {
      // Why there is no loss: the pick's own outcome (a failure, a skip: a replay's file without
      // the point), or no best at this size.
      const std::string why =
          !pick    ? "the pick was not evaluated"
          : !timed ? "the pick: " + std::string(to_string(pick->record.status)) + " " +
                         pick->record.message.substr(0, pick->record.message.find('\n'))
                   : "no point passed";
      row.insert(row.end(), {timed ? fmt("%.2f", pick->record.timing->median_ms * 1e3) : "-",
                             best ? tune::describe(t.space->candidates[best->point]) : "-",
                             best ? fmt("%.2f", best->record.timing->median_ms * 1e3) : "-", "-"});
      tab.rows.push_back(row);
      tab.trailers.push_back(why);
      continue;
    }
    const double a = pick->record.timing->median_ms, b = best->record.timing->median_ms;
    losses.push_back(a / b - 1);
    raced += pick->raced() ? 1 : 0;
    row.insert(row.end(), {fmt("%.2f", a * 1e3), tune::describe(t.space->candidates[best->point]),
                           fmt("%.2f", b * 1e3), fmt("%+.2f", (a / b - 1) * 100) + "%"});
    tab.rows.push_back(row);
    tab.trailers.push_back(pick->raced() ? "(raced)" : "");
  }
  os << "\n== dispatch check: " << picks.function() << " of " << picks.header() << "\n";
  tab.write(os, false);
  if (losses.empty()) return;
  std::sort(losses.begin(), losses.end());
  const std::size_t n = losses.size();
  const double median = n % 2 ? losses[n / 2] : (losses[n / 2 - 1] + losses[n / 2]) / 2;
  os << "the header's picks against each size's best: median " << fmt("%+.2f", median * 100)
     << "%, worst " << fmt("%+.2f", losses.back() * 100) << "% (" << n
     << (n == 1 ? " size)\n" : " sizes)\n");
  if (raced > 0)
    os << "(raced): " << raced << " of the picks were raced out in the tune replayed: their time "
       << "is rough, and slower than that size's best by the race's margin at least\n";
}

}  // namespace kl::app
