#!/usr/bin/env bash
# Behaviour unchanged across a refactor, on the GPU: the default job with the build before
# (dist/before.tgz, packed like dist/build.tgz) and after, alternating, each pair compared at
# --threshold 1.5; and the two builds' --plan of the default job, which must be identical.
# Everything goes into $OUT/same_rows.tgz with summary.txt.
#   device run (carry dist): bash scripts/gpu_same_rows.sh   # about 110 s
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src; build/ unpacked and reachable
cd "$src" || exit 1
s=$out/same_rows; mkdir -p "$s" /tmp/before
pack() { tar -czf "$out/same_rows.tgz" -C "$out" same_rows && rm -rf "$s"; }
trap pack EXIT
tar xzf dist/before.tgz -C /tmp/before || { echo "no dist/before.tgz" | tee "$s/summary.txt"; exit 1; }
before() { (cd /tmp/before && ln -sfn "$src/kernels_src" kernels_src && ln -sfn "$src/config" config &&
            ./build/kernlab --cache-dir /tmp/klc-before "$@"); }
after() { ./build/kernlab --cache-dir /tmp/klc "$@"; }
before --plan > "$s/plan_before.txt" 2>&1; after --plan > "$s/plan_after.txt" 2>&1
if cmp -s "$s/plan_before.txt" "$s/plan_after.txt"; then echo "plan: identical" ; else echo "plan: DIFFERENT"; fi | tee -a "$s/summary.txt"
for i in 1 2; do
  before --json "$s/before_$i.json" > "$s/before_$i.log" 2>&1; echo "before_$i: exit $?" | tee -a "$s/summary.txt"
  after --json "$s/after_$i.json" > "$s/after_$i.log" 2>&1; echo "after_$i: exit $?" | tee -a "$s/summary.txt"
done
# A build from before results format 2 wrote version 1: rewritten as the after build reads it.
for i in 1 2; do
  if grep -q '^ "version": 1$' "$s/before_$i.json" 2>/dev/null; then
    mv "$s/before_$i.json" "$s/before_$i.v1.json"
    python3 scripts/results_v1_to_v2.py "$s/before_$i.v1.json" "$s/before_$i.json"
    echo "before_$i: version 1, rewritten as 2: exit $?" | tee -a "$s/summary.txt"
  fi
done
for p in "before_1 after_1" "after_1 before_2" "before_2 after_2"; do
  set -- $p
  ./build/kernlab compare --threshold 1.5 "$s/$1.json" "$s/$2.json" > "$s/compare_$1_$2.txt" 2>&1
  echo "compare $1 -> $2: exit $?; $(tail -n 2 "$s/compare_$1_$2.txt" | tr '\n' ' ')" | tee -a "$s/summary.txt"
done
