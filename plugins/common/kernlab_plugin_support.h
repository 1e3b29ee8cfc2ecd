// Helpers shared by kernlab's own plugins. Not part of the ABI (that is kernlab/plugin_api.h
// alone): a third-party plugin needs none of this, see plugins/example/.
//
// Everything here is header-only and noexcept-friendly, so that each entry point can be written
// as `return guarded(...)` and no C++ exception ever reaches kernlab.
#pragma once

#include <kernlab/plugin_api.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>

namespace kernlab::plugin {

/// Writes a printf-style, NUL-terminated message into the caller's error buffer, truncated to
/// `capacity` bytes. Safe with a NULL buffer or a zero capacity.
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
inline void
set_error(char* error, size_t capacity, const char* format, ...) {
  if (error == nullptr || capacity == 0) return;
  va_list args;
  va_start(args, format);
  std::vsnprintf(error, capacity, format, args);
  va_end(args);
}

/// Runs `body` (which returns a kl_status) and turns any exception that escapes it into
/// KL_STATUS_ERROR with the exception's text: the C boundary must never see one.
template <typename Body>
int guarded(const char* where, char* error, size_t capacity, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    set_error(error, capacity, "%s: unexpected exception: %s", where, e.what());
  } catch (...) {
    set_error(error, capacity, "%s: unexpected non-standard exception", where);
  }
  return KL_STATUS_ERROR;
}

/// strcmp that treats NULL as matching nothing.
inline bool equals(const char* a, const char* b) {
  return a != nullptr && b != nullptr && std::strcmp(a, b) == 0;
}

/// For messages: a string or "(null)".
inline const char* or_null(const char* s) { return s != nullptr ? s : "(null)"; }

enum class dtype { int32, float32 };
enum class reduce_op { sum, min, max };

inline const char* to_string(dtype t) { return t == dtype::int32 ? "int32" : "float32"; }
inline const char* to_string(reduce_op op) {
  return op == reduce_op::sum ? "sum" : op == reduce_op::min ? "min" : "max";
}
inline size_t size_of(dtype) { return 4; }  // both types the family has are 4 bytes

/// The reduce arguments every reduce variant needs, parsed from kl_launch_args.
struct reduce_config {
  dtype type = dtype::int32;
  reduce_op op = reduce_op::sum;
  uint64_t n = 0;             ///< sizes[0]: valid elements
  uint64_t padded_n = 0;      ///< sizes[1]: elements readable in inputs[0] (identity after n)
  bool has_padded_n = false;  ///< whether sizes[1] was given (else padded_n = n)
  const void* in = nullptr;
  void* out = nullptr;
};

/// Parses and checks the reduce family's arguments. With `need_buffers` (prepare, run) the input
/// and output pointers must be set; workspace_size may be called with NULL pointers. Returns
/// KL_STATUS_UNSUPPORTED for a family/dtype/op this code does not know.
inline int parse_reduce(const kl_launch_args* args, bool need_buffers, reduce_config* config,
                        char* error, size_t capacity) {
  if (args == nullptr) {
    set_error(error, capacity, "launch arguments are NULL");
    return KL_STATUS_ERROR;
  }
  if (!equals(args->family, "reduce")) {
    set_error(error, capacity, "family '%s' is not offered (only 'reduce')", or_null(args->family));
    return KL_STATUS_UNSUPPORTED;
  }
  if (equals(args->dtype, "int32")) {
    config->type = dtype::int32;
  } else if (equals(args->dtype, "float32")) {
    config->type = dtype::float32;
  } else {
    set_error(error, capacity, "dtype '%s' is not offered", or_null(args->dtype));
    return KL_STATUS_UNSUPPORTED;
  }
  if (equals(args->op, "sum")) {
    config->op = reduce_op::sum;
  } else if (equals(args->op, "min")) {
    config->op = reduce_op::min;
  } else if (equals(args->op, "max")) {
    config->op = reduce_op::max;
  } else {
    set_error(error, capacity, "op '%s' is not offered", or_null(args->op));
    return KL_STATUS_UNSUPPORTED;
  }
  if (args->sizes == nullptr || args->num_sizes < 1) {
    set_error(error, capacity, "reduce needs sizes[0] = n (got %u sizes)", args->num_sizes);
    return KL_STATUS_ERROR;
  }
  config->n = args->sizes[0];
  config->has_padded_n = args->num_sizes >= 2;
  config->padded_n = config->has_padded_n ? args->sizes[1] : config->n;
  config->in = args->inputs != nullptr && args->num_inputs >= 1 ? args->inputs[0] : nullptr;
  config->out = args->outputs != nullptr && args->num_outputs >= 1 ? args->outputs[0] : nullptr;
  if (need_buffers && (config->in == nullptr || config->out == nullptr)) {
    set_error(error, capacity, "reduce needs inputs[0] and outputs[0] (got %u inputs, %u outputs)",
              args->num_inputs, args->num_outputs);
    return KL_STATUS_ERROR;
  }
  return KL_STATUS_OK;
}

}  // namespace kernlab::plugin
