// The entry points of the nvcc_reduce plugin's variants, one translation unit per kernel file
// (reduce5_nvcc.cu, reduce6_nvcc.cu); the plugin table (nvcc_reduce_plugin.cpp) lists them.
#pragma once

#include <kernlab/plugin_api.h>

namespace kernlab::nvcc_reduce {

int reduce5_workspace_size(const kl_launch_args* args, uint64_t* bytes, char* error,
                           size_t capacity);
int reduce5_prepare(const kl_launch_args* args, char* error, size_t capacity);
int reduce5_run(const kl_launch_args* args, char* error, size_t capacity);

int reduce6_workspace_size(const kl_launch_args* args, uint64_t* bytes, char* error,
                           size_t capacity);
int reduce6_prepare(const kl_launch_args* args, char* error, size_t capacity);
int reduce6_run(const kl_launch_args* args, char* error, size_t capacity);

}  // namespace kernlab::nvcc_reduce
