#!/usr/bin/env bash
# Issue 31, second probe: TLB, per-row allocations, host load and the blocking kernel.
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
p=$out/probe2; mkdir -p "$p"
R=dist/noise_repro
for i in 1 2 3; do
  step a_$i 60 $R --buffers 4 --rounds 4 --row-ms 50 --exp read2,read1,read2+warm,read2+block,write1+warm
  grep SUMMARY "$out/a_$i.log"
done
for i in 1 2; do
  step b_$i 60 $R --buffers 1 --rounds 16 --row-ms 50 --exp read2+partials,read2+spread,read2+spread+warm
  grep SUMMARY "$out/b_$i.log"
done
step c 60 $R --buffers 2 --rounds 4 --row-ms 50 --exp read2,read2+load,read2+load+block,read2+block,read2+load+warm+block
grep SUMMARY "$out/c.log"
step c_stride 60 $R --buffers 2 --rounds 4 --row-ms 50 --kernel stride --exp read2,read2+load,read2+load+block
grep SUMMARY "$out/c_stride.log"
mv "$out"/*.log "$p/"
sub=(--variant reduce_complete_unroll,reduce_complete_unroll_warps8,reduce_shfl,reduce_multi_acc --block 128,256 --size 2^24 --dtype int32 --cache-dir /tmp/klc)
for i in 1 2 3; do
  step sub_$i 60 ./build/kernlab "${sub[@]}" --json "$p/sub_$i.json"
  grep -E "^reduce_" "$out/sub_$i.log"
done
mv "$out"/*.log "$p/"
tar -czf "$out/probe2.tgz" -C "$out" probe2 && rm -rf "$p"
