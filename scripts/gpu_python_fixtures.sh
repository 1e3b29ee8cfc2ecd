#!/usr/bin/env bash
# Writes every kind of results file kernlab makes, small, on the GPU machine: a sweep's --json,
# --csv and --jsonl, and a tune's --json, --csv, --jsonl, --t4, --export and tuning store. They
# become tests/data/python/ (gzipped), which python/tests/test_read.py reads and cross-checks.
#   device run (carry dist): bash scripts/gpu_python_fixtures.sh   # about 30 s
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src; build/ unpacked and reachable
cd "$src" || exit 1
f=$out/pyfix; mkdir -p "$f"
K=(./build/kernlab --cache-dir /tmp/klc)
"${K[@]}" --variant reduce5,cub --block 256,512 --size 2^20,1000003 --dtype int32,float32 \
  --json "$f/sweep.json" --csv "$f/sweep.csv" --jsonl "$f/sweep.jsonl" > "$f/sweep.log" 2>&1
echo "sweep: exit $?" | tee -a "$f/summary.txt"
"${K[@]}" tune --variant reduce_tunable --size 2^20 --dtype int32 --strategy random --budget 12 \
  --seed 7 --json "$f/tune.json" --csv "$f/tune.csv" --jsonl "$f/tune.jsonl" --t4 "$f/tune.t4" \
  --export "$f/tune.best.json" --store "$f/store.jsonl" > "$f/tune.log" 2>&1
echo "tune: exit $?" | tee -a "$f/summary.txt"
tar -czf "$out/pyfix.tgz" -C "$out" pyfix && rm -rf "$f"
