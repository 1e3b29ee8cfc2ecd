#!/usr/bin/env bash
# The checks of issues 17 and 18 on the GPU machine, in one call after the test suite
# (scripts/gpu_run.sh has the suite and the benchmarks). Logs go to $OUT. Built here, carried as
# build/ (see scripts/gpu_run.sh):
#   1. the default job twice, back to back: wall time, rows that stopped at the time-out, and a
#      CI-style compare of the two runs (exit code = regressions beyond threshold and noise);
#   2. the README's single-configuration example;
#   3. --sanitize on a planted out-of-bounds kernel: the verdict line and no `best:` line.
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src; build/ unpacked and reachable
cd "$src" || exit 1

timed() {  # timed LOG COMMAND...: the command's output and its wall time into LOG
  local log=$1 t0 t1 rc; shift
  echo "=== $*" >> "$log"
  t0=$(date +%s.%N)
  timeout 300 "$@" >> "$log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  echo "=== exit $rc after $(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s" | tee -a "$log"
}
# Rows that stopped at the time-out, from a --json file.
timeouts() {
  python3 - "$1" <<'PY'
import json, sys
r = [x for x in json.load(open(sys.argv[1]))["records"] if x.get("timing")]
print(f"{sys.argv[1]}: {len(r)} timed rows, {sum(x['timing']['timed_out'] for x in r)} stopped at the time-out")
PY
}
for i in 1 2; do
  timed "$out/default_job.log" ./build/kernlab --json "$out/default_job_$i.json"
  timeouts "$out/default_job_$i.json" | tee -a "$out/default_job.log"
done
timed "$out/default_job.log" ./build/kernlab compare "$out/default_job_1.json" "$out/default_job_2.json"
timed "$out/readme_example.log" ./build/kernlab --variant reduce5 --block 512

kdir=$(mktemp -d)
mkdir -p "$kdir/reduce"
cat > "$kdir/reduce/bad_oob.cu" <<'CU'
/* kernlab
family: reduce
entry:  bad_oob<BLOCK, T, OP>
blocks: 256
tile:   BLOCK
bounds: checked
*/
template <unsigned BLOCK, typename T, typename OP>
__global__ void bad_oob(const T* in, T* out, unsigned n) {
  const unsigned i = blockIdx.x * BLOCK + threadIdx.x;
  out[i + 4096] = i < n ? in[i] : T(0);  // every thread writes, most of them past the output
}
CU
timed "$out/sanitize.log" ./build/kernlab --sanitize memcheck --kernels-dir "$kdir" --no-plugins \
  --variant bad_oob --block 256 --size 100000 --dtype int32
grep -c "best:" "$out/sanitize.log" | sed 's/^/best lines under --sanitize: /' | tee -a "$out/sanitize.log"
