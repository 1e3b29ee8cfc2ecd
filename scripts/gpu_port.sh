#!/usr/bin/env bash
# Issue 13's before/after check on the GPU machine: the families ported onto the data engine
# against the build before the port, on one GPU in one call. Carry `dist` holding build.tgz
# (scripts/pack_gpu.sh) and before.tgz (kl/: the pre-port kernlab, its plugins, kernels_src and
# config). Runs alternate, before then after, twice, so drift of the machine shows as a
# difference between the two pairs. Then the GPU tests of the ported families. Logs in $OUT.
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src; build/ unpacked and reachable
cd "$src" || exit 1
mkdir -p before && tar xzf dist/before.tgz -C before || exit 1
B=./before/kl/kernlab
A=./build/kernlab
KB=./before/kl/kernels_src
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$out/device.txt" 2>&1
for i in 1 2; do
  step reduce 200 $B --kernels-dir $KB --json "$out/reduce_before_$i.json"
  step reduce 200 ./build/kernlab --json "$out/reduce_after_$i.json"
done
for i in 1 2; do
  step matmul 300 $B --kernels-dir $KB --family matmul --json "$out/matmul_before_$i.json"
  step matmul 300 $A --family matmul --json "$out/matmul_after_$i.json"
done
for f in reduce matmul; do
  for i in 1 2; do
    step compare 30 $A compare "$out/${f}_before_$i.json" "$out/${f}_after_$i.json" --threshold 1
  done
  step compare 30 $A compare "$out/${f}_before_1.json" "$out/${f}_before_2.json" --threshold 1
done
step random 200 $A --input random --op sum,min,max --size 1000003 --variant reduce5,reduce6,reduce_single_pass,cub --json "$out/reduce_random.json"
step random 120 $A --family matmul --input random --shape 4095x4097x1023 --json "$out/matmul_random.json"
step gputests 330 ctest --test-dir build -L gpu -R 'Matmul|Reduce|Plugins|DataFamily|Isolation' -j3 --output-on-failure
# The device tool returns a few files: everything in one archive.
tar -C "$out" -czf /tmp/port_all.tgz . && find "$out" -mindepth 1 -delete && mv /tmp/port_all.tgz "$out/all.tgz"
