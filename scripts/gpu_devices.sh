#!/usr/bin/env bash
# Issue 15's first step on a machine with two GPUs or more, in one call: the GPU tests of
# --devices; tuning throughput (points measured per second) of one tune, same space, budget, seed
# and settings, on GPU 0 alone and on every GPU, with the ratio and whether the best point agrees;
# a sweep with a planted hang spread over every GPU, whose other rows must match a clean one-GPU
# sweep. Carry `dist` with build.tgz (scripts/pack_gpu.sh). Logs and JSON in $OUT/all.tgz.
# The three parts take about 2, 5 and 2 minutes on two H100s; name some (tests, tune, hang) to run
# only those, e.g. in separate calls under a per-call time limit: bash scripts/gpu_devices.sh tune
set -u -o pipefail
parts=${*:-tests tune hang}
want() { case " $parts " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src; build/ unpacked and reachable
cd "$src" || exit 1
K=./build/kernlab
nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.max.sm --format=csv > "$out/device.txt" 2>&1
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
echo "GPUs: $ngpu" | tee -a "$out/device.txt"

# 1. The GPU tests of --devices (they skip with fewer than two GPUs), and the isolation tests.
if want tests; then
  step gputests 400 ctest --test-dir build -L gpu -R 'GpuDevices|Isolation' --output-on-failure
fi

# 2. Tuning throughput. The compile cache is filled first, so that neither timed tune compiles;
# each tune has a store of its own and --fresh, so that every point is measured. Two pairs, one
# GPU then all, so that drift of the machine shows as a difference between the pairs.
if want tune; then
tune_args=(tune --family matmul --variant tunable --strategy random --seed 7 --budget 64
           --shape 2048x2048x2048 --dtype float32 --fresh)
step tune_warm 600 $K "${tune_args[@]}" --devices all --store "$out/store_warm.jsonl"
for i in 1 2; do
  for d in 0 all; do
    step "tune_${d}_$i" 600 $K "${tune_args[@]}" --devices $d --store "$out/store_${d}_$i.jsonl" \
      --json "$out/tune_${d}_$i.json" --export "$out/best_${d}_$i.json"
  done
done
python3 - "$out" <<'PY' 2>&1 | tee "$out/throughput.txt"
import json, re, sys
out = sys.argv[1]
def rate(name):
    text = open(f"{out}/{name}.log").read()
    measured = int(re.findall(r"(\d+) measured in this run", text)[-1])
    searching = float(re.findall(r"([\d.]+) s searching", text)[-1])
    return measured, searching, measured / searching
def best(name):  # the --export file (kernlab-tuning-table): the best point and its median
    e = json.load(open(f"{out}/{name}.json"))["tunes"][0]
    return json.dumps(e["best"]["values"], sort_keys=True), e["best"]["timing"]["median_us"]
for i in (1, 2):
    m0, s0, r0 = rate(f"tune_0_{i}")
    ma, sa, ra = rate(f"tune_all_{i}")
    print(f"pair {i}: 1 GPU {m0} points in {s0:.1f} s = {r0:.2f}/s; all GPUs {ma} points in "
          f"{sa:.1f} s = {ra:.2f}/s; ratio {ra / r0:.2f}x")
    try:
        b0, t0 = best(f"best_0_{i}")
        ba, ta = best(f"best_all_{i}")
        print(f"  best on 1 GPU: {b0} {t0:.2f} us; on all: {ba} {ta:.2f} us; "
              f"{'AGREE' if b0 == ba else 'DIFFER'} (median {100 * (ta - t0) / t0:+.1f}%)")
    except Exception as e:  # the export's layout: say so, the logs still hold the tables
        print(f"  best: could not read the exports ({e!r}); see the tune logs")
PY
fi

# 3. A planted hang (a kernel that spins forever) in a sweep over every GPU: the GPU that takes it
# loses that row (a timeout, a worker restart); every other row is as in a clean one-GPU sweep.
if want hang; then
hang="$here/scripts/planted"  # reduce/bad_spin.cu
sweep_args=(--family reduce --dtype int32,float32 --size 1000003 --min-time 0.05 --no-cache)
step clean 600 $K --kernels-dir kernels_src "${sweep_args[@]}" --devices 0 --json "$out/clean.json"
step hang 600 $K --kernels-dir kernels_src --kernels-dir "$hang" "${sweep_args[@]}" \
  --devices all --kernel-timeout 3 --json "$out/hang.json"
python3 "$here/scripts/hang_check.py" "$out" 2>&1 | tee "$out/hang.txt"
fi
tar -C "$out" -czf /tmp/devices_all.tgz . && find "$out" -mindepth 1 -delete && mv /tmp/devices_all.tgz "$out/all.tgz"
