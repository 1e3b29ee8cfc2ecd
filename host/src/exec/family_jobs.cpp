#include "exec/family_jobs.hpp"

#include "exec/pipeline.hpp"

#include <stdexcept>

namespace kl {

nlohmann::json run_family_job(const family_registry& families, const std::string& family,
                              const std::string& name, const nlohmann::json& args,
                              const cuda::device_info& device) {
  const auto* f = families.find(family);
  if (!f) throw std::invalid_argument("unknown family '" + family + "'");
  if (name != "pipeline")
    throw std::invalid_argument("family " + family + " has no job '" + name + "'");
  return to_json(run_pipeline(*f, pipeline_job_from_json(args), device));
}

}  // namespace kl
