// Measurements of a family's own that are not rows (the "pipeline" of a family with a
// [pipeline]), run where rows run: in the worker process, or in process, with the device's
// context current. They sit here, above
// the families, because they run rows' kernels (exec/row.hpp) the way a row does.
#pragma once

#include "cuda/device.hpp"
#include "families/family.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace kl {

/// Runs `family`'s job `name` with its JSON `args`; the result is the job's JSON. Throws
/// std::invalid_argument for a family or a job that does not exist.
nlohmann::json run_family_job(const family_registry& families, const std::string& family,
                              const std::string& name, const nlohmann::json& args,
                              const cuda::device_info& device);

}  // namespace kl
