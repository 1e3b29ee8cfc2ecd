#!/usr/bin/env bash
# Kernel Tuner's spmv, zeromeanfilter and expdist examples: kernlab (import changed) on each,
# Kernel Tuner 1.5 (lang="cupy") on spmv and zeromeanfilter. Run from the repository root.
set -u
. scripts/gpu_prelude.sh
export KERNLAB=$src/build/kernlab PYTHONPATH=$src/python${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
cd dist/kte
for e in spmv zeromeanfilter expdist; do step kl_$e 200 python3 drive.py kl $e; done
if [ -d ../peers/wheels ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site ../peers/wheels/*.whl
  for e in spmv zeromeanfilter; do PYTHONPATH=/tmp/site:$PYTHONPATH step kt_$e 150 python3 drive.py kt $e; done
fi
grep -h "DRIVE\|Error\|error" "$out"/k*.log | cut -c1-400
