#include "exec/family_jobs.hpp"

#include "exec/qam256_pipeline.hpp"

#include <map>
#include <stdexcept>
#include <utility>

namespace kl {
namespace {

using job = nlohmann::json (*)(const nlohmann::json& args, const cuda::device_info& device);

nlohmann::json qam256_pipeline(const nlohmann::json& args, const cuda::device_info& device) {
  return to_json(run_pipeline(pipeline_job_from_json(args), device));
}

// (family, job) -> the job. A new one is a line here.
const std::map<std::pair<std::string, std::string>, job>& jobs() {
  static const std::map<std::pair<std::string, std::string>, job> table = {
      {{"qam256", "pipeline"}, &qam256_pipeline}};
  return table;
}

}  // namespace

nlohmann::json run_family_job(const family_registry& families, const std::string& family,
                              const std::string& name, const nlohmann::json& args,
                              const cuda::device_info& device) {
  if (!families.find(family)) throw std::invalid_argument("unknown family '" + family + "'");
  const auto it = jobs().find({family, name});
  if (it == jobs().end())
    throw std::invalid_argument("family " + family + " has no job '" + name + "'");
  return it->second(args, device);
}

}  // namespace kl
