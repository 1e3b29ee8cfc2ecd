#!/usr/bin/env bash
# One-off: C staged through shared memory for coalesced stores when N % 4 != 0 (STC=1) against
# the shipped element-wise stores (STC=0); then the whole space with STC=1 at the awkward shape.
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
cp -r dist/kx /tmp/kx
v=""
for pt in 'BM=128;BN=128;BK=16;WM=64;WN=64;TM=8;STAGES=2;ASYNC=0;VEC=4' 'BM=128;BN=128;BK=16;WM=32;WN=64;TM=16;STAGES=2;ASYNC=0;VEC=4' 'BM=256;BN=64;BK=16;WM=32;WN=64;TM=16;STAGES=2;ASYNC=1;VEC=4'; do
  v="$v,tunx[$pt;STC=0],tunx[$pt;STC=1]"
done
step stc 200 ./build/kernlab --family matmul --kernels-dir /tmp/kx --variant "cublas$v" --block 128,256 --shape 4096x4096x1024,4096x4097x1024,4095x4097x1023 --json "$out/stc.json"
grep "passed\|failed\|^==" "$out/stc.log" | cut -c1-150
step tune 300 ./build/kernlab tune --kernels-dir /tmp/kx --variant tuny --family matmul --block 128,256,512 --strategy exhaustive --shape 4095x4097x1023 --store "$out/store.jsonl" --json "$out/tune.json"
grep -A8 "^rank" "$out/tune.log"; grep "^best:\|^time:" "$out/tune.log"
cd "$out" && tar czf probe3.tgz *.log *.json *.jsonl && rm -f *.json *.jsonl
