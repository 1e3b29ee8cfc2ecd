#!/usr/bin/env bash
# One call on a 4 x H200 machine (device tool, kind nvidia-h200-x4), 2026-11-28:
#  GPU 0: the GPU label (scripts/gpu_suite.sh) on this tree, the other GPUs hidden;
#  GPU 1: matmul/tunable.cu exhaustive at six cubes 1024^3..2304^3 (issue 36's replay data);
#  GPUs 2,3: first issue 35's MPI throughput pair (scripts/gpu_mpi.sh tune), then
#    GPU 2: matmul/tunable.cu exhaustive at 2560^3..4096^3 (four cubes),
#    GPU 3: scan/lookback_tunable.cu exhaustive at 2^19..2^28 x2, then ncu on the scans vs CUB.
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
O=$out
K=./build/kernlab
nvidia-smi --query-gpu=index,name,uuid,driver_version --format=csv > "$O/device.log" 2>&1
mm() { # GPU NAME SHAPES
  CUDA_VISIBLE_DEVICES=$1 step "matmul_$2" 560 $K tune --variant tunable --family matmul \
    --block 128,256,512 --dtype float32 --strategy exhaustive --budget 4096 --shape "$3" \
    --store "$O/matmul_$2.jsonl" --json "$O/matmul_$2.json"
}
( CUDA_VISIBLE_DEVICES=0 OUT=$O/suite bash scripts/gpu_suite.sh > "$O/suite_call.log" 2>&1 ) &
( mm 1 low 1024x1024x1024,1280x1280x1280,1536x1536x1536,1792x1792x1792,2048x2048x2048,2304x2304x2304 ) &
( CUDA_VISIBLE_DEVICES=2,3 OUT=$O/mpi timeout 200 bash scripts/gpu_mpi.sh tune > "$O/mpi_call.log" 2>&1
  ( mm 2 high 2560x2560x2560,3072x3072x3072,3584x3584x3584,4096x4096x4096 ) &
  ( CUDA_VISIBLE_DEVICES=3 step scan 300 $K tune --variant lookback_tunable --family scan \
      --dtype int32 --strategy exhaustive --budget 4096 --min-time 0.02 --size 2^19:2^28:*2 \
      --store "$O/scan.jsonl" --json "$O/scan.json"
    CUDA_VISIBLE_DEVICES=3 step scan_ncu 150 $K --family scan --dtype int32 --size 2^24,2^28 --profile \
      --json "$O/scan_ncu.json" ) &
  wait ) &
wait
grep -h "^best:\|^time:\|^== " "$O"/matmul_*.log "$O"/scan.log | head -60
tail -n 25 "$O/scan_ncu.log"
cat "$O/mpi/throughput.txt" 2>/dev/null
tail -n 3 "$O/suite/gpu.log" "$O/suite/readme.log" "$O/suite/hostile.log"
grep -h "(Failed)\|(Timeout)\|Not Run\|tests failed" "$O"/suite/*.log
cd "$O" && for f in *.json *.jsonl; do gzip -f "$f"; done
exit 0
