// `kernlab tune --compile-only` and `tune --resources`: every point of the spaces compiled at every
// block it takes, as a sweep's --compile-only compiles its variants, and nothing run (no GPU
// needed). Apart from tune.cpp, whose phases are the search's.
#include "app/environment.hpp"
#include "app/plan.hpp"
#include "app/tune.hpp"
#include "core/errors.hpp"
#include "core/interrupt.hpp"
#include "report/exports.hpp"
#include "report/results_writer.hpp"
#include "report/table.hpp"
#include "runner/runner.hpp"

#include <csignal>
#include <iostream>
#include <utility>

namespace kl::app {

int compile_tune_points(const cli_options& opt, const family_registry& families, run_request req,
                        std::vector<const registry_entry*> sources, int argc, char** argv) {
  for (const auto& [given, option] :
       {std::pair{opt.export_json, "--export"}, std::pair{opt.export_header, "--export-header"},
        std::pair{opt.t4_path, "--t4"}, std::pair{opt.jsonl_path, "--jsonl"},
        std::pair{opt.replay_path, "--replay"}})
    if (!given.empty())
      throw usage_error(std::string(option) + ": tune " +
                        (opt.resources ? "--resources" : "--compile-only") +
                        " measures no point, so there is nothing to write");
  req.variants = std::move(sources);
  runner compiles(families, req);
  install_interrupt_handler();
  const sweep_result sweep = compiles.run();
  if (sweep.interrupted) {
    std::cout << "interrupted (" << (interrupt_signal() == SIGTERM ? "SIGTERM" : "Ctrl-C")
              << ") while compiling; nothing written (the files compiled so far are in the "
                 "compile cache)\n";
    return 128 + interrupt_signal();
  }
  if (!opt.json_path.empty() || !opt.csv_path.empty()) {
    results_writer outputs({opt.json_path, opt.csv_path, ""},
                           [&] { return context_of(opt, req, argc, argv); });
    sweep_result written = sweep;
    if (opt.resources)
      written.results = resource_records(sweep.compiles, sweep.arch, req.input_mode, req.seed);
    outputs.finish(written);
  }
  if (opt.resources) {
    print_resources(std::cout, sweep.compiles, sweep.arch, opt.markdown);
  } else {
    print_compile_table(std::cout, sweep.compiles, sweep.arch);
    print_compile_summary(std::cout, sweep.compile_stats);
  }
  if (!sweep.no_device_reason.empty())
    std::cout << "(no GPU here: " << sweep.no_device_reason << "; compiled for " << sweep.arch
              << ")\n";
  for (const auto& c : sweep.compiles)
    if (!c.error.empty()) return 1;
  return 0;
}

}  // namespace kl::app
