#!/bin/sh
# The test kernlab_add_benchmark() registers (KernlabBenchmark.cmake):
#   kernlab_benchmark.sh KERNLAB BASELINE THRESHOLD OUT.json [kernlab arguments...]
# Measures into OUT.json, then compares BASELINE -> OUT.json at THRESHOLD percent. Exit 0: no
# regression (or no GPU: skipped, saying so); otherwise the failing command's exit code. Plain
# sh, so that a GPU runner needs no CMake to run the test.
kernlab=$1 baseline=$2 threshold=$3 out=$4
shift 4
rm -f "$out"
"$kernlab" "$@" --json "$out" > "$out.log" 2>&1
rc=$?
cat "$out.log"
if [ "$rc" -ne 0 ]; then
  if grep -q "no CUDA driver/device" "$out.log"; then
    echo "kernlab_add_benchmark: skipped: no CUDA driver/device here"
    exit 0
  fi
  echo "kernlab_add_benchmark: the measurement failed (exit code $rc): $kernlab $* --json $out" >&2
  exit "$rc"
fi
"$kernlab" compare --threshold "$threshold" "$baseline" "$out"
rc=$?
if [ "$rc" -ne 0 ]; then
  echo "kernlab_add_benchmark: $out regressed against $baseline beyond $threshold% (compare's exit code $rc)" >&2
fi
exit "$rc"
