// A compile_result as JSON and back: the one encoding that the compile cache's entries and the
// compile child's replies (compile_process.cpp) share. The cubin is a JSON binary, so it is meant
// for CBOR (nlohmann::json::to_cbor), not for text.
#pragma once

#include "nvrtc/compiler.hpp"

#include <nlohmann/json.hpp>

namespace kl::nvrtc {

/// Every field but `ok`, which the cache and the child each say in their own way.
nlohmann::json to_json(const compile_result& r);
/// Throws nlohmann::json's exceptions for a missing or mistyped field; `ok` is left false.
compile_result compile_result_from_json(const nlohmann::json& j);

}  // namespace kl::nvrtc
