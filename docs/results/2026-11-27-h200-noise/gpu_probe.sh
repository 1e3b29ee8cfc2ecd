#!/usr/bin/env bash
# Issue 31, first probe: which of the hypotheses moves a row between runs. One device call:
#   scripts/pack_gpu.sh && cp /tmp/noise_repro dist/ ; device run: bash bench/noise/gpu_probe.sh
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
p=$out/probe; mkdir -p "$p"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,power.limit --format=csv > "$p/device.txt" 2>&1
cat "$p/device.txt"
R=dist/noise_repro
# 1. the standalone reproduction: three processes, every flush, 4 buffers x 5 rounds, 50 ms rows
for i in 1 2 3; do
  step repro_tiles_$i 100 $R --n 16777216 --buffers 4 --rounds 5 --row-ms 50 --exp read2,write1,none,batch,read4
  grep SUMMARY "$out/repro_tiles_$i.log"
done
step repro_stride 60 $R --n 16777216 --buffers 4 --rounds 5 --row-ms 50 --kernel stride --exp read2,batch,none
grep SUMMARY "$out/repro_stride.log"
step repro_2e26 60 $R --n 67108864 --buffers 4 --rounds 4 --row-ms 50 --exp read2,batch,none
grep SUMMARY "$out/repro_2e26.log"
mv "$out"/repro_*.log "$p/"
# 2. kernlab: the four worst rows, five processes, every sample kept
sub=(--variant reduce_complete_unroll,reduce_shfl --block 128,256 --size 2^24 --dtype int32 --samples --cache-dir /tmp/klc)
for i in 1 2 3 4 5; do
  step sub_$i 60 ./build/kernlab "${sub[@]}" --json "$p/sub_$i.json"
  grep -E "^(reduce_complete_unroll|reduce_shfl) " "$out/sub_$i.log"
done
mv "$out"/sub_*.log "$p/"
# 3. the default job: a cold compile cache, then two warm runs, every sample kept
rm -rf /tmp/kld
for i in 1 2 3; do
  step default_$i 120 ./build/kernlab --samples --cache-dir /tmp/kld --json "$p/default_$i.json"
done
mv "$out"/default_*.log "$p/"
for a in 1 2; do for b in $((a+1)) 3; do
  [ $b -le 3 ] && ./build/kernlab compare "$p/default_$a.json" "$p/default_$b.json" > "$p/compare_$a$b.txt" 2>&1; tail -n 3 "$p/compare_$a$b.txt"
done; done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> "$p/device.txt" 2>&1
tar -czf "$out/probe.tgz" -C "$out" probe && rm -rf "$p"
ls -la "$out"
