#!/usr/bin/env bash
# Issue 31, fifth probe: the offset follows the command stream? Samples enqueued behind a kernel
# that waits for the host (KL_DIAG_BLOCK), the operation as one graph launch (KL_DIAG_GRAPH).
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
p=$out/probe5; mkdir -p "$p"
k=(./build/kernlab --dtype int32 --cache-dir /tmp/klc)
"${k[@]}" --compile-only > "$p/compile.log" 2>&1
run() {
  local name=$1; shift
  local t0=$(date +%s.%N)
  env "$@" "${k[@]}" --json "$p/$name.json" > "$p/$name.log" 2>&1
  echo "$name rc=$? $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s"
}
for i in 1 2; do
  run base_$i X=1
  run block_$i KL_DIAG_BLOCK=1
  run graph_$i KL_DIAG_GRAPH=1
  run blockgraph_$i KL_DIAG_BLOCK=1 KL_DIAG_GRAPH=1
done
tar -czf "$out/probe5.tgz" -C "$out" probe5 && rm -rf "$p"
