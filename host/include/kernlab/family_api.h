/*
 * kernlab family plugin ABI: what a family described as data (docs/families.md) cannot say in
 * its family.toml, a shared object says in C: an input generator, or a reference computed on the
 * host. kernlab's variant plugins (plugin_api.h) are kernels to time; a family plugin is never
 * timed, it makes the problem and its answer.
 *
 * The shared object exports one C function, `kernlab_family`, which returns a pointer to a static
 * `kl_family_plugin` table. Only C types cross this boundary, as with plugin_api.h: no C++
 * exception may leave a function; return KL_FAMILY_ERROR with a message instead.
 *
 * A family.toml names the file and the functions:
 *     plugin = "libqam_symbols.so"     # in the family's folder, or a plugin folder
 *     [[buffers]] ... exact = { kind = "plugin", function = "symbols" }
 *     [reference] plugin = "demap"
 * kernlab looks the file up when it reads the description (a missing file is an error that
 * names family.toml's line), and loads it only where problems are made: in the worker process
 * that runs rows (or in kernlab itself with --in-process). A plugin that crashes takes that
 * worker's current row with it, nothing more.
 *
 * Versioning: kernlab reads `abi_version` first and refuses a table of a version it does not
 * load, before it reads anything else.
 *
 * What kernlab promises:
 *   - a generator is called for ranges of elements, possibly from several threads at once (each
 *     with its own range). Element i must depend only on the point, the buffer and i, never on
 *     the range it came in or on the thread: then the inputs are the same whatever the thread
 *     count, and a seed printed with a result reproduces it;
 *   - a reference is called once per problem, from one thread, after every input is generated;
 *   - the table and its strings are read only while the library is loaded.
 */
#ifndef KERNLAB_FAMILY_API_H
#define KERNLAB_FAMILY_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bump on every change to the structures below. */
#define KERNLAB_FAMILY_ABI_VERSION 1

/** The name of the one exported entry point. */
#define KERNLAB_FAMILY_ENTRY_NAME "kernlab_family"

/** Marks the entry point: C linkage (in C++) and default visibility. */
#if defined(__GNUC__) || defined(__clang__)
#define KERNLAB_FAMILY_VISIBLE __attribute__((visibility("default")))
#else
#define KERNLAB_FAMILY_VISIBLE
#endif
#ifdef __cplusplus
#define KERNLAB_FAMILY_EXPORT extern "C" KERNLAB_FAMILY_VISIBLE
#else
#define KERNLAB_FAMILY_EXPORT KERNLAB_FAMILY_VISIBLE
#endif

typedef enum kl_family_status {
  KL_FAMILY_OK = 0,
  KL_FAMILY_ERROR = 1 /**< the call failed; the error buffer says why */
} kl_family_status;

/**
 * The configuration a problem is made for: the family, the element type and operation, the
 * input mode, the seed, and the value of every axis of the family.toml, in [axes] order.
 */
typedef struct kl_family_point {
  const char* family;     /**< the family's name (its folder's) */
  const char* dtype;      /**< "float32", ... (T of the description) */
  const char* op;         /**< "" when the family has no [ops] */
  const char* input_mode; /**< "exact" or "random" */
  uint64_t seed;
  const char* const* axis_names; /**< {"N"}, {"M", "N", "K"}, ... */
  const double* axis_values;
  uint32_t num_axes;
} kl_family_point;

/**
 * Writes elements [first, first + count) of buffer `buffer` (its name in family.toml) into
 * `out`, which has room for `count` elements of `dtype` (the buffer's element type). On failure
 * writes a NUL-terminated message of at most error_capacity bytes into `error` and returns
 * KL_FAMILY_ERROR.
 */
typedef int (*kl_family_generate_fn)(const kl_family_point* point, const char* buffer,
                                     const char* dtype, void* out, uint64_t first, uint64_t count,
                                     char* error, size_t error_capacity);

/** A buffer in host memory: its family.toml name, element type and elements. */
typedef struct kl_family_buffer {
  const char* name;
  const char* dtype;
  void* data; /**< const for the inputs */
  uint64_t count;
} kl_family_buffer;

/**
 * Computes the reference: reads every input buffer (role "in", in family.toml order) and writes
 * every output buffer (role "out", in order), each output element in the buffer's own type.
 * kernlab compares a variant's outputs with these under the family's [compare] rule.
 */
typedef int (*kl_family_reference_fn)(const kl_family_point* point, const kl_family_buffer* inputs,
                                      uint32_t num_inputs, const kl_family_buffer* outputs,
                                      uint32_t num_outputs, char* error, size_t error_capacity);

typedef struct kl_family_generator {
  const char* name; /**< what family.toml's `function` names */
  kl_family_generate_fn generate;
} kl_family_generator;

typedef struct kl_family_reference {
  const char* name; /**< what family.toml's [reference] `plugin` names */
  kl_family_reference_fn compute;
} kl_family_reference;

/** What `kernlab_family()` returns. `abi_version` must stay the first member forever. */
typedef struct kl_family_plugin {
  uint32_t abi_version; /**< KERNLAB_FAMILY_ABI_VERSION the plugin was built against */
  const char* name;
  const kl_family_generator* generators;
  uint32_t num_generators;
  const kl_family_reference* references;
  uint32_t num_references;
} kl_family_plugin;

/** The exported entry point's type. */
typedef const kl_family_plugin* (*kl_family_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* KERNLAB_FAMILY_API_H */
