// kernlab --help and each command's own help (`kernlab compare --help`).
#include "cli/option_table.hpp"
#include "cli/options.hpp"

#include "core/errors.hpp"

#include <boost/program_options.hpp>

#include <map>
#include <set>
#include <sstream>
#include <utility>

namespace po = boost::program_options;

namespace kl {

using cli::make_description;

std::string command_help(const std::string& command) {
  static const std::map<std::string, std::pair<cli::mode, const char*>> commands = {
      {"compare",
       {cli::mode::compare,
        "usage: kernlab compare OLD.json NEW.json (or OLD_DIR NEW_DIR: their *.json paired by "
        "name)\n"
        "Pairs the rows of two results files by configuration and says which changed (their "
        "intervals apart)\nand which regressed (changed, slower by more than --threshold %, or "
        "no longer passing).\nExit 0: no regression; 1: a regression; 4: a file that cannot be "
        "read, or no row in common.\n"}},
      {"plot",
       {cli::mode::plot,
        "usage: kernlab plot [--roofline | --timeline] RESULTS.json [-o FILE.svg]\n"
        "Draws a results file as an SVG: the roofline of a sweep, or the timeline of a "
        "--pipeline run.\n"}},
      {"cache",
       {cli::mode::cache,
        "usage: kernlab cache info|clear|prune [--cache-dir DIR] [--max-size SIZE]\n"
        "The compile cache: what it holds, emptying it, or pruning it to a size (oldest "
        "first).\n"}},
      {"tune",
       {cli::mode::tune,
        "usage: kernlab tune --variant FILE [--strategy S] [--budget N|90s] [--size/--shape ...]\n"
        "Searches a tunable kernel file's space (its tune: and require: lines) and ranks the "
        "points\nit measured; docs/tuning.md tells the strategies and the store.\n"}},
      {"check-dispatch",
       {cli::mode::tune,
        "usage: kernlab check-dispatch FILE.h --variant FILE --size SIZES [tune's options]\n"
        "Measures the size selector of a header that kernlab tune --export-header wrote: at each "
        "size\n(those not in the tune, most usefully) the file is tuned, the header's pick first, "
        "and the pick's\nloss against that size's best is printed; docs/tuning.md.\n"}},
      {"new",
       {cli::mode::scaffold,
        "usage: kernlab new family NAME [--kernels-dir DIR]\n"
        "       kernlab new variant FAMILY NAME [--from VARIANT] [--kernels-dir DIR]\n"
        "Writes files to start from, that compile, validate and are timed unchanged: a family "
        "folder\n(family.toml, a reference and a first variant), or a variant copied from one of "
        "the family's.\nThey go into DIR (the first --kernels-dir; default my_kernels); no file "
        "is written over.\n"}}};
  const auto it = commands.find(command);
  if (it == commands.end())
    throw usage_error(
        "unknown command '" + command +
        "' (kernlab tune, kernlab check-dispatch, kernlab compare, kernlab plot, kernlab cache, "
        "kernlab new)");
  // The options that apply to this command, in --help's groups.
  po::options_description own("options of kernlab " + command);
  // Left out: the switches that make another command, and for the commands that read results
  // files only, the folders of kernels and plugins. They are not in the table of which options
  // apply where because a command line may combine them today (the docs' commands run with
  // --compile-only and --kernels-dir added, on a machine without a GPU); the table would refuse
  // that.
  static const std::set<std::string> other_commands = {"list",         "list-names", "plan",
                                                       "compile-only", "resources",  "pipeline",
                                                       "version",      "completion"};
  static const std::set<std::string> kernel_folders = {"kernels-dir", "kernels-dir-only",
                                                       "plugin-dir", "no-plugins"};
  const po::options_description all = make_description();
  for (const auto& option : all.options()) {
    const std::string& key = option->long_name();
    if (other_commands.count(key) || (command != "tune" && command != "check-dispatch" &&
                                      command != "new" && kernel_folders.count(key)))
      continue;
    if (cli::option_applies(key, it->second.first)) own.add(option);
  }
  std::ostringstream os;
  os << it->second.second << "\n" << own;
  return os.str();
}

std::string help_text(const cli_options& o, const std::string& appendix) {
  std::ostringstream os;
  os << "kernlab: compile, validate and time CUDA kernel variants\n\n"
        "usage: kernlab [options]\n"
        "       kernlab tune --variant FILE [--strategy S] [--budget N|90s] [--size/--shape ...]\n"
        "       kernlab cache info|clear|prune [--cache-dir DIR] [--max-size SIZE]\n"
        "       kernlab new family NAME | new variant FAMILY NAME [--kernels-dir DIR]\n"
        "  kernlab --list --variant all              every family, its axes and its variants\n"
        "  kernlab --variant my_idea --block 512\n"
        "  kernlab --variant 'my_idea*' --size 2^28 --dtype int32,float32\n"
        "  kernlab --family FAMILY --shape 4096x1000,4095x17\n"
        "  kernlab --kernels-dir my_kernels --family my_problem\n"
        "  kernlab --compile-only --variant all\n"
        "  kernlab --size 2^28 --json run.json && kernlab plot run.json -o sweep.svg\n"
        "  kernlab compare before.json after.json\n"
        "  kernlab --watch --variant my_idea\n"
        "  kernlab tune --variant my_tunable --strategy bayes --budget 200 --export best.json\n"
        "  kernlab cache info\n\n"
        "exit codes: 0 every run passed, 1 a variant failed or was wrong, 2 usage error,\n"
        "            3 no CUDA driver/device for a run that needs one, 4 a file or tool failed\n"
        "options on the command line win over the config file (--config); an option that does not\n"
        "apply to what the command does is an error\n";
  // The defaults in effect: the config file's, which the option list's "(default ...)", kernlab's
  // own, would hide.
  if (o.config_settings.empty())
    os << "\ndefaults: "
       << (o.config_path.empty() ? "no config file" : o.config_path + " sets none")
       << "; those below are in effect\n";
  else
    os << "\ndefaults in effect, from " << o.config_path
       << " (they replace those below; the command line wins):\n";
  for (const auto& [key, value] : o.config_settings) os << "  --" << key << " " << value << "\n";
  os << make_description() << appendix;
  return os.str();
}

}  // namespace kl
