#!/usr/bin/env bash
# The stop's final tree on one GPU, in one call: the GPU test suite (ctest -L gpu), the README's
# example and the default job twice (timed, compared), a Latin-1 compile error in a real sweep,
# then issue 31's next question: do rows timed in separate processes (one placement each) agree
# better than placements inside one process? Everything lands in final.tgz.
#   cmake -S . -B build -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build build -j2 && scripts/pack_gpu.sh
#   device run (carry dist): bash docs/results/2026-11-27-h200-stop30/gpu_final.sh
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
f=$out/final; mkdir -p "$f"; out=$f   # step() writes its logs under $out
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$f/device.txt" 2>&1
cat "$f/device.txt"
pack() { tar -czf "$OUT/final.tgz" -C "$OUT" final; }
trap pack EXIT
step gpu_tests 300 ctest --test-dir build -L gpu -j2 --output-on-failure --timeout 200
tail -n 4 "$f/gpu_tests.log"
grep -E "\((Failed|Timeout|Subprocess aborted|Exception|SEGFAULT)\)" "$f/gpu_tests.log" | head -20
K=(./build/kernlab --cache-dir /tmp/klc)
step readme_example 60 "${K[@]}" --variant reduce5 --block 512
for i in 1 2; do step default_$i 90 "${K[@]}" --json "$f/default_$i.json"; done
./build/kernlab compare --threshold 1.5 "$f/default_1.json" "$f/default_2.json" > "$f/compare.txt" 2>&1
echo "compare exit $?"; tail -n 2 "$f/compare.txt"
# A Latin-1 byte in a compile error, a real sweep: every output written, and valid UTF-8.
l=/tmp/kl_latin1; mkdir -p $l/reduce
printf '/* kernlab\nfamily: reduce\nentry:  latin<BLOCK, T, OP>\nblocks: 256\ntile:   BLOCK\n*/\n#error "caf\xe9"\ntemplate <unsigned BLOCK, typename T, typename OP>\n__global__ void latin(const T*, T*, unsigned) {}\n' > $l/reduce/latin.cu
step latin1 60 ./build/kernlab --config /dev/null --kernels-dir kernels_src --kernels-dir $l --variant latin,reduce5 --block 256 --size 2^20 --json "$l/run_$(printf '\xe9').json" --csv $l/run.csv --jsonl $l/run.jsonl
python3 -c "import glob; [open(x, encoding='utf-8').read() for x in glob.glob('$l/run*')]; print('latin1: utf-8 ok,', len(glob.glob('$l/run*')), 'files')"
# Issue 31: the int32 half of the default job, one placement per process, eight processes.
for i in 1 2 3 4 5 6 7 8; do
  step proc_$i 40 "${K[@]}" --dtype int32 --placements 1 --max-placements 1 --json "$f/proc_$i.json"
done
tail -n 14 "$f/readme_example.log"
