#!/usr/bin/env bash
# Packs build/ for the GPU machine as dist/build.tgz, without what only the build needs (objects,
# static libraries, dependency files, the fuzz and SDK test builds): about 8 MB against the
# device tool's 64 MiB limit on what it carries. Then, with the device tool, carry `dist` and run
# e.g. `bash scripts/gpu_check.sh`: the scripts/gpu_*.sh unpack it (scripts/gpu_prelude.sh).
#   cmake -S . -B build -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build build -j2 && scripts/pack_gpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p dist
tar -czf dist/build.tgz --exclude='build/fuzz' --exclude='build/tests/plugin_sdk' \
  --exclude='build/CMakeFiles/3.*' --exclude='build/Testing' --exclude='build/tests/cache_home' \
  --exclude='build/tests/package_deb' --exclude='build/tests/benchmark_gate' --exclude='build/_CPack_Packages' \
  --exclude='*.o' --exclude='*.a' --exclude='*.d' build
echo "pack_gpu: dist/build.tgz, $(du -h dist/build.tgz | cut -f1)"
# pytest and what it imports, from Debian's python3-pytest (pure Python), for GPU machines whose
# interpreter has none: scripts/gpu_prelude.sh puts it on PYTHONPATH there.
py=/usr/lib/python3/dist-packages
if [ -d "$py/pytest" ]; then
  tar -czf dist/pylib.tgz --exclude=__pycache__ -C "$py" pytest _pytest pluggy iniconfig packaging attr attrs py.py
  echo "pack_gpu: dist/pylib.tgz, $(du -h dist/pylib.tgz | cut -f1)"
fi
