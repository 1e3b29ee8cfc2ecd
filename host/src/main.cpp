// kernlab: the command-line entry point. It picks the mode and turns errors into exit codes;
// the work is in host/src/app/ and below.
#include "app/commands.hpp"
#include "app/environment.hpp"
#include "app/scaffold.hpp"
#include "app/sweep.hpp"
#include "app/tune.hpp"
#include "cli/option_table.hpp"
#include "cli/options.hpp"
#include "core/errors.hpp"
#include "core/interrupt.hpp"
#include "core/lifeline.hpp"
#include "core/utf8.hpp"
#include "cuda/driver.hpp"
#include "mpi/world.hpp"
#include "nvrtc/compile_process.hpp"
#include "plugin_host/plugin_loader.hpp"
#include "report/output_file.hpp"
#include "tune/strategy.hpp"

#include <iostream>
#include <memory>
#include <string>

namespace {

// An output written to standard output (`--json -`, `--csv /dev/stdout`, `plot -o -`): stdout
// then carries that data alone, to be piped into jq or pandas, and everything else kernlab
// prints (the banner, the tables, "wrote ...") goes to stderr while the guard lives. The data
// itself is written to the file descriptor (report/output_file.hpp), past std::cout.
class human_lines_to_stderr {
 public:
  explicit human_lines_to_stderr(const kl::cli_options& o) {
    for (const std::string* path : {&o.json_path, &o.csv_path, &o.jsonl_path, &o.t4_path,
                                    &o.export_json, &o.export_header, &o.output_path})
      if (kl::is_standard_output(*path)) {
        std::cout.flush();
        kept_ = std::cout.rdbuf(std::cerr.rdbuf());
        return;
      }
  }
  ~human_lines_to_stderr() {
    if (kept_) std::cout.rdbuf(kept_);
  }
  human_lines_to_stderr(const human_lines_to_stderr&) = delete;
  human_lines_to_stderr& operator=(const human_lines_to_stderr&) = delete;

 private:
  std::streambuf* kept_ = nullptr;
};

int run(int argc, char** argv) {
  const kl::cli_options opt = kl::parse_command_line(argc, argv, kl::app::find_default_paths());
  const human_lines_to_stderr data_alone_on_stdout(opt);
  if (opt.help && !opt.command.empty()) {
    std::cout << kl::command_help(opt.command[0]);
    return 0;
  }
  if (opt.help) {
    std::cout << kl::help_text(
        opt, "\nkernlab tune --strategy (docs/tuning.md):\n" + kl::tune::strategy_help());
    return 0;
  }
  if (!opt.completion.empty()) {
    std::cout << kl::completion_script(opt.completion);
    return 0;
  }
  if (opt.version) {
    std::cout << kl::app::version_line() << "\n";
    return 0;
  }
  if (!opt.command.empty()) {
    switch (kl::cli::find_command(opt.command[0])->runs) {  // the parser knows every word
      case kl::cli::mode::tune: return kl::app::tune_command(opt, argc, argv);
      case kl::cli::mode::scaffold: return kl::app::new_command(opt, argv[0]);
      case kl::cli::mode::cache: return kl::app::cache_command(opt);
      default: return kl::app::results_command(opt);
    }
  }
  return kl::app::sweep_command(opt, argc, argv);
}

}  // namespace

int main(int argc, char** argv) {
  // The child processes kernlab starts from its own binary: `--probe-plugin FILE` loads a plugin
  // before kernlab trusts it, `--worker` runs rows, `--compile-child` runs one file's NVRTC
  // compile so that a compile past --compile-timeout can be killed. Ctrl-C is kernlab's to
  // handle (core/interrupt.hpp), not theirs; and they end when kernlab ends (core/lifeline.hpp).
  if (argc >= 2 &&
      (std::string(argv[1]) == "--probe-plugin" || std::string(argv[1]) == "--worker" ||
       std::string(argv[1]) == "--compile-child")) {
    kl::die_with_parent();
    kl::ignore_interrupts();
  }
  if (argc == 3 && std::string(argv[1]) == "--probe-plugin") return kl::probe_main(argv[2]);
  if (argc >= 2 && std::string(argv[1]) == "--worker") {
    try {
      return kl::app::worker_entry(argc, argv);
    } catch (const std::exception& e) {
      std::cerr << "kernlab worker: " << e.what() << "\n";
      return 1;
    }
  }
  if (argc == 2 && std::string(argv[1]) == "--compile-child")
    return kl::nvrtc::compile_child_main();
  // What kernlab prints is valid UTF-8, whatever bytes a kernel's messages or a file's name hold.
  const kl::utf8_output out(std::cout), err(std::cerr);
  // Under mpirun or srun (docs/many_gpus.md): rank 0 runs the command, the others serve it their
  // GPUs. The world outlives the error messages below; its end stops the other ranks.
  std::unique_ptr<kl::mpi::world> world;
  try {
    world = kl::mpi::world::join(argc, argv, kl::app::mpi_transports());
  } catch (const std::exception& e) {
    if (kl::mpi::detect_launch().rank == 0) std::cerr << "kernlab: error: " << e.what() << "\n";
    return 1;
  }
  if (world && world->rank() != 0) return kl::app::serve_rank(argc, argv, *world);
  const int code = [&] {
    try {
      return run(argc, argv);
    } catch (const kl::usage_error& e) {
      std::cerr << "kernlab: " << e.what() << "\n(kernlab --help lists the options)\n";
      return kl::exit_code::usage;
    } catch (const kl::cuda::no_device_error& e) {
      std::cerr << "kernlab: " << e.what() << "\n"
                << "(--list and --compile-only work without a GPU)\n";
      return kl::exit_code::no_device;
    } catch (const kl::io_error& e) {
      std::cerr << "kernlab: error: " << e.what() << "\n";
      return kl::exit_code::io;
    } catch (const std::exception& e) {
      std::cerr << "kernlab: error: " << e.what() << "\n";
      return 1;
    }
  }();
  if (world) world->set_exit_code(code);  // the launcher's, should the job end in MPI_Abort
  return code;
}
