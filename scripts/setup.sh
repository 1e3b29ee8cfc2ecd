#!/usr/bin/env bash
# Everything kernlab needs on Debian 12+ or Ubuntu 24.04+, then the build. Safe to run again: it
# installs only what is missing and rebuilds only what changed.
#   scripts/setup.sh            -> build/ (kernlab, plugins, tests)
# Needs the CUDA toolkit (12 or newer; nvcc, NVRTC, CCCL) in /usr/local/cuda or on PATH. A GPU
# and its driver are needed to run kernels, not to build or to run the tests that need none.
set -euo pipefail
cd "$(dirname "$0")/.."

# clang-14 and libclang-rt-14-dev (libFuzzer, ASan, UBSan): ctest's short fuzz runs (tests/fuzz).
# clang-format-14: ctest's format check (scripts/check_format.sh).
# libeigen3-dev: the linear algebra of `kernlab tune`'s model-based strategy (header-only).
# python3-pandas, python3-pytest: the Python package in python/ (kernlab.read) and its tests;
# python3-jsonschema: the test that checks results files against docs/results.schema.json.
# zsh: the test that loads `kernlab --completion zsh`.
# libopenmpi-dev, openmpi-bin: the MPI transport (libkernlab_mpi.so, loaded only under mpirun or
# srun; kernlab itself never links libmpi) and ctest's mpirun tests (docs/many_gpus.md).
packages=(build-essential cmake libboost-dev libboost-program-options-dev
          nlohmann-json3-dev libgtest-dev libxxhash-dev libtomlplusplus-dev clang-14 libclang-rt-14-dev
          clang-format-14 libeigen3-dev libopenmpi-dev openmpi-bin python3-pandas python3-pytest
          python3-jsonschema zsh)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The build needs CMake 3.24 or newer; Ubuntu 22.04's packaged 3.22 is not enough.
scripts/check_cmake.sh 3.24

if ! command -v nvcc >/dev/null 2>&1; then
  if [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH=/usr/local/cuda/bin:$PATH
  else
    echo "setup: the CUDA toolkit (nvcc) was not found in /usr/local/cuda or on PATH;" >&2
    echo "       install it from NVIDIA's packages first (kernlab needs NVRTC and CCCL from it)" >&2
    exit 1
  fi
fi

# Plugins are compiled ahead of time: for this machine's GPU when there is one, else for sm_90.
arch=90
if cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1); then
  [ -n "$cap" ] && arch=${cap/./}
fi
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" >/dev/null
fi
cmake --build build -j"$(nproc)"
