// Reading kernlab's command line and its config file into one boost::program_options
// variables_map: the command line wins, and the config file's relative paths are its folder's.
#pragma once

#include <boost/program_options.hpp>

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kl::cli {

// The command line and the config file, read into one variables_map; `given` is what the command
// line itself names.
struct read_options {
  boost::program_options::variables_map vm;
  std::set<std::string> given;  // the options named on the command line itself
  // What the config file sets, each key with its value as --help shows it, in the file's order.
  std::vector<std::pair<std::string, std::string>> config_settings;
};

/// Stores the command line's options and positional words ("command") in r.vm.
void read_command_line(int argc, const char* const argv[],
                       const boost::program_options::options_description& desc, read_options& r);

/// Stores the config file's options that the command line does not override in r.vm: the file
/// --config names, else default_config when it exists. Returns the file read, or "" for none.
std::string read_config_file(const std::string& default_config,
                             const boost::program_options::options_description& desc,
                             read_options& r);

}  // namespace kl::cli
