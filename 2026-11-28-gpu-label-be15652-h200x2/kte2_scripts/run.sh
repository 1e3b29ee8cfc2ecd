#!/usr/bin/env bash
# Kernel Tuner's vector_add_cupy.py, vector_add_nvcuda.py (examples/cuda: 10^7-element answers)
# and examples/cuda-c++/vector_add.py (a template kernel), each with its import line changed to
# kernlab's. Run from the repository root after scripts/gpu_prelude.sh.
set -u
. scripts/gpu_prelude.sh
export KERNLAB=$src/build/kernlab PYTHONPATH=$src/python${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
cd dist/kte2
for e in vector_add_cupy vector_add_nvcuda vector_add_cpp; do
  mkdir -p "/tmp/kte2/$e" && cp "$e.py" "/tmp/kte2/$e/"
  (cd "/tmp/kte2/$e" && step "kt_$e" 150 python3 "$e.py")
  cp "/tmp/kte2/$e/vector_add.json" "$out/$e.json" 2>/dev/null
  tail -n 6 "$out/kt_$e.log"
done
