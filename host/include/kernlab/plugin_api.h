/*
 * kernlab plugin ABI: the only interface between kernlab and a precompiled plugin.
 *
 * A plugin is a shared object that exports one C function, `kernlab_plugin`, which returns a
 * pointer to a static `kl_plugin` table. Only C types cross this boundary: kernlab and the
 * plugin may be built by different compilers, against different C++ standard libraries, with
 * different CUDA runtimes. No C++ exception may leave a plugin: wrap every entry in try/catch and
 * return KL_STATUS_ERROR with a message instead.
 *
 * Versioning: kernlab reads `abi_version` first and refuses a plugin whose version it does not
 * load (KERNLAB_PLUGIN_ABI_MIN_VERSION to KERNLAB_PLUGIN_ABI_VERSION) before it reads anything
 * else in the table. Version 2 added `release` at the end of kl_plugin; a version-1 table ends
 * before it, and kernlab never reads the field there.
 *
 * Exporting: define the entry point with KERNLAB_PLUGIN_EXPORT (below), which gives it C linkage
 * and default visibility, so a plugin built with hidden visibility needs nothing else:
 *     KERNLAB_PLUGIN_EXPORT const kl_plugin* kernlab_plugin(void) { return &kPlugin; }
 *
 * What kernlab promises a plugin:
 *   - it calls a variant's functions only with a family, dtype, op and block size that the
 *     variant's descriptor lists, and only from one thread at a time;
 *   - workspace_size, prepare and run are called with the device's context current, so each may
 *     query the device (CUB's size query and the occupancy calculator need it);
 *   - device pointers and the workspace are at least 256-byte aligned (cuMemAlloc's alignment);
 *   - the table and its strings are read only while the library is loaded;
 *   - before a plugin is probed, kernlab loads it in a short-lived child process and reads the
 *     whole table there, so the entry point and the library's constructors may run more than
 *     once, in more than one process: they must not have side effects;
 *   - version 2: `release`, when set, is called once before the library is unloaded (in every
 *     process that loaded it, at the latest when that process ends normally), after the last
 *     call to any other function.
 * What kernlab does with the answers: KL_STATUS_UNSUPPORTED from any function skips that
 * configuration, with the message as the reason (for limits the table cannot express, such as a
 * largest n); KL_STATUS_ERROR fails it, with the message. Either way the sweep goes on.
 *
 * Device memory and streams belong to kernlab. A plugin receives device pointers and a CUDA
 * stream (a `CUstream`, which is the same object as a `cudaStream_t`) on kernlab's current
 * context (the device's primary context, which the CUDA runtime also uses).
 */
#ifndef KERNLAB_PLUGIN_API_H
#define KERNLAB_PLUGIN_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bump on every change to the structures below. */
#define KERNLAB_PLUGIN_ABI_VERSION 2
/** The oldest version this kernlab still loads (version 1: kl_plugin without `release`). */
#define KERNLAB_PLUGIN_ABI_MIN_VERSION 1

/** Marks the entry point: C linkage (in C++) and default visibility. */
#if defined(__GNUC__) || defined(__clang__)
#define KERNLAB_PLUGIN_VISIBLE __attribute__((visibility("default")))
#else
#define KERNLAB_PLUGIN_VISIBLE
#endif
#ifdef __cplusplus
#define KERNLAB_PLUGIN_EXPORT extern "C" KERNLAB_PLUGIN_VISIBLE
#else
#define KERNLAB_PLUGIN_EXPORT KERNLAB_PLUGIN_VISIBLE
#endif

/** reduce: the padded input length is a multiple of this many elements (see kl_launch_args). */
#define KL_REDUCE_INPUT_PADDING 16384u

/** The name of the one exported entry point. */
#define KERNLAB_PLUGIN_ENTRY_NAME "kernlab_plugin"

typedef enum kl_status {
  KL_STATUS_OK = 0,
  KL_STATUS_ERROR = 1,      /**< the call failed; the error buffer says why */
  KL_STATUS_UNSUPPORTED = 2 /**< this dtype/op/size is not offered; the error buffer says why */
} kl_status;

/**
 * One launch of a variant. Which pointers and sizes are used depends on the family:
 *   reduce: inputs[0] = n elements of `dtype`; outputs[0] = 1 element; sizes = {n}.
 *     inputs[0] holds sizes[0] = n elements followed by the operation's identity up to
 *     sizes[1] elements (the padded length, a multiple of KL_REDUCE_INPUT_PADDING), so kernels
 *     that consume whole tiles may read past n without a bounds check.
 *   qam256: inputs[0] = n symbols (float32 I, Q pairs); outputs[0] = 8 n bytes (soft bits);
 *     sizes = {n}; dtype "float32", op "demap". Checked as a demapper, is_baseline or not (the
 *     family's copy baseline is its family.toml's own).
 *   matmul: C = A * B, float32, row-major; inputs = {A (M x K), B (K x N)}; outputs = {C (M x N)};
 *     sizes = {M, N, K}; op is "" (the family has no operations).
 * Element types are named as strings ("int32", "float32"), operations too ("sum", "min", "max"),
 * so that a new family or type never changes the ABI.
 */
typedef struct kl_launch_args {
  const char* family;        /**< "reduce", "matmul" */
  const char* dtype;         /**< "int32" | "float32" */
  const char* op;            /**< reduce: "sum" | "min" | "max" */
  const void* const* inputs; /**< device pointers */
  uint32_t num_inputs;
  void* const* outputs; /**< device pointers */
  uint32_t num_outputs;
  const uint64_t* sizes; /**< family-specific problem sizes */
  uint32_t num_sizes;
  uint32_t block_size; /**< 0 when the variant takes no block size */
  void* workspace;     /**< device memory of workspace_size() bytes, or NULL */
  uint64_t workspace_bytes;
  void* stream; /**< CUstream / cudaStream_t to launch on */
} kl_launch_args;

/**
 * Returns in *bytes the device workspace that `run` needs for these arguments (pointers may be
 * NULL here). kernlab allocates it once, outside the timed region. May be NULL in the table when
 * the variant needs no workspace.
 */
typedef int (*kl_workspace_fn)(const kl_launch_args* args, uint64_t* bytes, char* error,
                               size_t error_capacity);

/**
 * Called once per configuration after the workspace is allocated and before any timed run, with
 * the same arguments `run` will get. Put one-time set-up here (library handles, filling scratch
 * buffers), so that it stays out of the timed region. May be NULL in the table.
 */
typedef int (*kl_prepare_fn)(const kl_launch_args* args, char* error, size_t error_capacity);

/**
 * Runs the whole operation asynchronously on args->stream. On failure writes a NUL-terminated
 * message of at most error_capacity bytes into `error` and returns a non-zero kl_status.
 */
typedef int (*kl_run_fn)(const kl_launch_args* args, char* error, size_t error_capacity);

/** One precompiled variant: plain data plus its two functions. */
typedef struct kl_variant_desc {
  const char* family;          /**< must name a family kernlab knows, e.g. "reduce" */
  const char* name;            /**< short name, unique within the family, e.g. "cub" */
  const char* summary;         /**< one line shown by --list */
  const uint32_t* block_sizes; /**< supported block sizes; NULL when block size does not apply */
  uint32_t num_block_sizes;
  const char* const* dtypes; /**< supported dtypes, e.g. {"int32", "float32"} */
  uint32_t num_dtypes;
  const char* const* ops; /**< supported ops (reduce), e.g. {"sum"} */
  uint32_t num_ops;
  int is_baseline;                /**< non-zero: a vendor-library baseline for its family */
  kl_workspace_fn workspace_size; /**< may be NULL */
  kl_prepare_fn prepare;          /**< may be NULL */
  kl_run_fn run;                  /**< required */
} kl_variant_desc;

/**
 * Frees what the plugin holds (library handles, device memory it allocated itself). Called once,
 * before the library is unloaded, with the device's context current if the process has one. May
 * be NULL. Version 2 and later.
 */
typedef void (*kl_release_fn)(void);

/** What `kernlab_plugin()` returns. `abi_version` must stay the first member forever. */
typedef struct kl_plugin {
  uint32_t abi_version; /**< KERNLAB_PLUGIN_ABI_VERSION the plugin was built against */
  const char* name;     /**< the plugin's name, e.g. "cub" */
  const kl_variant_desc* variants;
  uint32_t num_variants;
  kl_release_fn release; /**< version 2: may be NULL; absent from a version-1 table */
} kl_plugin;

/** The exported entry point's type. */
typedef const kl_plugin* (*kl_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* KERNLAB_PLUGIN_API_H */
