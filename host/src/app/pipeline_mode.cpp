#include "app/pipeline_mode.hpp"

#include "app/environment.hpp"
#include "app/plan.hpp"
#include "core/errors.hpp"
#include "core/json_text.hpp"
#include "exec/pipeline.hpp"
#include "report/table.hpp"
#include "worker/executor.hpp"

#include <algorithm>
#include <iostream>

namespace kl::app {

int pipeline_mode(const kl::cli_options& opt, const kl::family_registry& families,
                  const kl::run_request& req, int argc, char** argv) {
  if (opt.watch || opt.resources || !opt.sanitize.empty())
    throw kl::usage_error("--pipeline cannot be combined with --watch, --resources or --sanitize");
  if (!opt.csv_path.empty())
    throw kl::usage_error("--csv does not apply to --pipeline (--json records it)");
  std::vector<const kl::registry_entry*> chosen;
  std::string names;
  std::string without;  // selected kernel files of families without a [pipeline]
  for (const auto* e : req.variants) {
    if (e->descriptor.origin != kl::origin_kind::source) continue;
    const kl::family* f = families.find(e->descriptor.family);
    if (f && !f->pipeline_axis().empty()) {
      chosen.push_back(e);
      names += (names.empty() ? "" : ", ") + e->descriptor.qualified_name();
    } else if (without.find(e->descriptor.family) == std::string::npos) {
      without += (without.empty() ? "" : ", ") + e->descriptor.family;
    }
  }
  if (chosen.size() != 1)
    throw kl::usage_error(
        "--pipeline runs one kernel file of a family with a [pipeline] (docs/families.md); name "
        "it with --variant (e.g. --variant qam256.vec2_gridstride); the selection has " +
        (chosen.empty() ? std::string("none") : names) +
        (without.empty() ? "" : " (no [pipeline]: " + without + ")"));
  const kl::variant_descriptor& v = chosen[0]->descriptor;
  if (!opt.blocks_explicit || opt.blocks.size() != 1)
    throw kl::usage_error("--pipeline needs one block size (--block 256)");
  const unsigned block = opt.blocks[0];
  if (!v.supports_block(block))
    throw kl::usage_error("--block " + std::to_string(block) + ": " + v.name + " does not take it");
  const kl::family* fam = families.find(v.family);

  kl::run_request compile = req;
  compile.variants = chosen;
  compile.blocks = {block};
  compile.compile_only = true;
  compile.references.clear();  // with --compile-only: the chosen family's reference alone
  for (const auto* ref : req.references)
    if (ref->descriptor.family == v.family) compile.references.push_back(ref);
  const kl::sweep_result compiled = kl::runner(families, compile).run();
  const kl::compile_record& record = compiled.compiles.at(0);
  if (opt.compile_only) {  // what the pipeline would run, compiled; no GPU needed
    kl::print_compile_table(std::cout, compiled.compiles, compiled.arch);
    const bool failed = std::any_of(compiled.compiles.begin(), compiled.compiles.end(),
                                    [](const kl::compile_record& c) { return !c.error.empty(); });
    return failed || !chosen[0]->error.empty() ? 1 : 0;
  }
  if (!chosen[0]->error.empty() || !record.error.empty()) {
    std::cerr << "kernlab: " << v.qualified_name() << " does not compile:\n"
              << (chosen[0]->error.empty() ? record.error : chosen[0]->error) << "\n";
    return 1;
  }
  const std::unique_ptr<kl::row_executor> executor = kl::make_executor(families, req);
  const kl::cuda::device_info& device = executor->device();
  std::cout << "kernlab " << KERNLAB_VERSION << ": pipeline of " << v.qualified_name() << " block "
            << block << ", seed " << req.seed << ", on " << device.name << " ("
            << (req.in_process ? "in process" : "in the worker process") << ")\n";

  kl::pipeline_options popt;
  popt.streams = opt.streams;
  popt.orders = opt.issue_orders;
  popt.chunks = opt.chunks;
  popt.chunks_per_stream = opt.chunks_per_stream;
  popt.runs = opt.pipeline_runs;
  nlohmann::json reports = nlohmann::json::array();
  int code = 0;
  for (const kl::problem_config& config : kl::configs_for(*fam, compile)) {
    kl::pipeline_job job;
    job.kernel = kl::source_job(*fam, v, block, config, record);
    job.options = popt;
    const nlohmann::json result = executor->run_family_job(v.family, "pipeline", kl::to_json(job));
    const kl::pipeline_report report = kl::pipeline_report_from_json(result);
    kl::print_pipeline(std::cout, report, device, opt.markdown);
    std::cout << std::flush;
    for (const auto& row : report.rows)
      if (!row.valid) code = 1;
    reports.push_back(result);
  }
  if (!opt.json_path.empty()) {
    const kl::run_context ctx = context_of(opt, req, argc, argv);
    nlohmann::json results = kl::results_to_json(compiled, ctx);
    results["pipeline"] = reports;
    write_file(opt.json_path, [&](std::ostream& os) { os << kl::json_text(results, 1) << "\n"; });
  }
  return code;
}

}  // namespace kl::app
