#!/usr/bin/env bash
# Issue 31, placements spread over worker processes (--placement-workers), first look, with the
# GPU suite: default jobs alternately with 4 workers (the config) and 1 (as before), each pair
# compared at --threshold 1.5; the README's example; a Latin-1 compile error in a real sweep.
#   cmake -S . -B build -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build build -j2 && scripts/pack_gpu.sh
#   device run (carry dist): bash docs/results/2026-11-27-h200-workers/gpu_run1.sh
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
f=$out/r1; mkdir -p "$f"; out=$f
nvidia-smi --query-gpu=name,uuid,driver_version,compute_mode,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$f/device.txt" 2>&1
cat "$f/device.txt"
K=(./build/kernlab --cache-dir /tmp/klc)
step compile 120 "${K[@]}" --compile-only
for i in 1 2; do
  step w4_$i 120 "${K[@]}" --json "$f/w4_$i.json"
  step w1_$i 120 "${K[@]}" --placement-workers 1 --json "$f/w1_$i.json"
done
for w in w4 w1; do
  ./build/kernlab compare --threshold 1.5 "$f/${w}_1.json" "$f/${w}_2.json" > "$f/compare_$w.txt" 2>&1
  echo "compare $w exit $?: $(tail -n 1 "$f/compare_$w.txt")"
done
step readme_example 60 "${K[@]}" --variant reduce5 --block 512
l=/tmp/kl_latin1; mkdir -p $l/reduce
printf '/* kernlab\nfamily: reduce\nentry:  latin<BLOCK, T, OP>\nblocks: 256\ntile:   BLOCK\n*/\n#error "caf\xe9"\ntemplate <unsigned BLOCK, typename T, typename OP>\n__global__ void latin(const T*, T*, unsigned) {}\n' > $l/reduce/latin.cu
step latin1 60 ./build/kernlab --config /dev/null --kernels-dir kernels_src --kernels-dir $l --variant latin,reduce5 --block 256 --size 2^20 --json "$l/run_$(printf '\xe9').json" --csv $l/run.csv --jsonl $l/run.jsonl
python3 -c "import glob; [open(x, encoding='utf-8').read() for x in glob.glob('$l/run*')]; print('latin1: utf-8 ok,', len(glob.glob('$l/run*')), 'files')" | tee "$f/latin1_utf8.txt"
step gpu_tests 330 ctest --test-dir build -L gpu -j2 --output-on-failure --timeout 200
tail -n 4 "$f/gpu_tests.log"
grep -E "\((Failed|Timeout|Subprocess aborted|Exception|SEGFAULT)\)" "$f/gpu_tests.log" | head -20
