// kernlab --help and each command's own help (`kernlab compare --help`).
#include "cli/option_table.hpp"
#include "cli/options.hpp"

#include "core/errors.hpp"

#include <boost/program_options.hpp>

#include <set>
#include <sstream>

namespace po = boost::program_options;

namespace kl {

using cli::make_description;

std::string command_help(const std::string& command) {
  const cli::command_word* word = cli::find_command(command);
  if (!word) throw usage_error("unknown command '" + command + "' (" + cli::command_list() + ")");
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
    if (cli::option_applies(key, word->runs)) own.add(option);
  }
  std::ostringstream os;
  os << word->usage << "\n" << own;
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
