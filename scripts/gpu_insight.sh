#!/usr/bin/env bash
# Issue "Insight" on the GPU machine, in one call after the test suite: the profile table, the
# energy figures, the rooflines of every family and a pipeline's timeline, a CI-style compare
# (two clean runs, then a planted 5% regression), the outputs (JSON lines, samples, T4). Logs and
# files go to $OUT (packed as all.tgz). Built here and carried as build/ (scripts/pack_gpu.sh):
#   bash scripts/gpu_insight.sh
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src, step; build/ unpacked and reachable
cd "$src" || exit 1
k=./build/kernlab

# Nsight Compute beside each row: reduce's ladder and CUB, qam256 with its copy row.
step profile 300 $k --profile --variant reduce0,reduce1,reduce2,reduce3,reduce4,reduce5,reduce6,reduce_single_pass,reduce.cub --block 256 \
  --size 2^24 --dtype int32 --json "$out/profile.json"
step profile 120 $k --profile --variant qam256.branch_free,qam256.d2d_copy --block 256 --size 2^20
cp ~/.cache/kernlab/profiles/*.ncu-rep "$out/" 2>/dev/null

# Energy: a sweep of the reduce ladder, and a tune that minimises joules per operation.
step energy 300 $k --variant reduce0,reduce3,reduce5,reduce6,reduce_single_pass,reduce_shfl,reduce.cub --block 256,512 \
  --size 2^24 --dtype int32 --energy --json "$out/energy.json"
step energy_tune 300 $k tune --variant reduce_tunable --objective energy --budget 16 --strategy random \
  --size 2^24 --dtype int32 --store "$out/store.jsonl" --export "$out/tune_energy.json"

# Every family's run for the rooflines; the default job twice for compare.
step default_1 200 $k --json "$out/default_1.json" --jsonl "$out/default_1.jsonl" --samples
step default_2 200 $k --json "$out/default_2.json"
step matmul 300 $k --family matmul --size 1024,4096 --json "$out/matmul.json"
step families 300 sh -c "$k --family qam256 --size 2^26 --json $out/qam256.json && \
  $k --family scan --json $out/scan.json && $k --family softmax --json $out/softmax.json && \
  $k --family transpose --json $out/transpose.json"
for f in default_1 matmul qam256 scan softmax transpose; do
  [ -f "$out/$f.json" ] && step plots 60 $k plot --roofline "$out/$f.json" -o "$out/roofline_$f.svg"
done
step pipeline 200 $k --pipeline --variant qam256.vec2_stream --block 256 --size 2^27 \
  --json "$out/pipeline.json"
step plots 60 $k plot --timeline "$out/pipeline.json" -o "$out/timeline.svg"

# compare for CI: the two clean runs, then the second with reduce5 (block 256, int32) made 5% slower.
step compare 60 $k compare "$out/default_1.json" "$out/default_2.json"
python3 - "$out/default_2.json" "$out/default_2_planted.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for r in j["records"]:
    if r["variant"]["name"] == "reduce5" and r["block"] == 256 and r["config"]["dtype"] == "int32":
        for key in ("median_us", "min_us", "max_us", "mean_us", "ci_low_us", "ci_high_us"):
            r["timing"][key] *= 1.05
json.dump(j, open(sys.argv[2], "w"))
PY
step compare 60 $k compare "$out/default_1.json" "$out/default_2_planted.json"

# Outputs: a tune in the T4 format, with every sample.
step t4 300 $k tune --variant reduce_tunable --budget 12 --strategy random --size 2^22 --dtype int32 \
  --samples --fresh --store "$out/store_t4.jsonl" --t4 "$out/t4.json" --jsonl "$out/tune.jsonl"

cd "$out" && tar czf all.tgz --exclude=all.tgz ./*
