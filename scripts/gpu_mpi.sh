#!/usr/bin/env bash
# Issue 15's MPI step on one machine with two GPUs, in one call: tuning throughput (points measured
# per second) of one tune, same space, budget, seed and settings, with `--devices all` and under
# `mpirun -np 2` (one rank per GPU), with the ratio and whether the best point agrees; then a sweep
# under mpirun with a planted hang, whose other rows must match a clean one-GPU sweep.
# Carry `dist` with build.tgz (scripts/pack_gpu.sh) and mpi/ (scripts/pack_mpi.sh: the machine has
# no OpenMPI). Logs and JSON in $OUT/all.tgz. About 6 and 2 minutes on two H100s; name a part
# (tune, hang) to run only that one: bash scripts/gpu_mpi.sh tune
set -u -o pipefail
parts=${*:-tune hang}
want() { case " $parts " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src; build/ unpacked and reachable
cd "$src" || exit 1
if ! command -v mpirun >/dev/null 2>&1; then
  [ -f dist/mpi/env.sh ] || { echo "gpu_mpi: no mpirun and no dist/mpi (scripts/pack_mpi.sh)" >&2; exit 1; }
  . dist/mpi/env.sh
fi
K=./build/kernlab
# One rank per GPU, unbound: a rank's compile threads and worker process need more than a core.
MPI=(mpirun -np 2 --oversubscribe --bind-to none)
[ "$(id -u)" -eq 0 ] && MPI+=(--allow-run-as-root)
{ nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.max.sm --format=csv
  mpirun --version | head -n 1; ls -la build/libkernlab_mpi.so; } > "$out/device.txt" 2>&1
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
echo "GPUs: $ngpu" | tee -a "$out/device.txt"
# The transport loads and both ranks find a GPU: a one-row sweep under mpirun.
step smoke 300 "${MPI[@]}" $K --variant reduce5 --block 256 --size 2^20 --dtype int32 --no-cache

# 1. Tuning throughput. The compile cache is filled first, so that no timed tune compiles; each
# tune has a store of its own and --fresh, so that every point is measured. Two pairs, --devices
# then mpirun, so that drift of the machine shows as a difference between the pairs.
if want tune; then
# 256 points at 4096^3 (about 11 s a tune on two H100s): 64 at 2048^3 took 2.4 s, too short to
# resolve 5% with a log that prints tenths of a second.
tune_args=(tune --family matmul --variant tunable --strategy random --seed 11 --budget 256
           --shape 4096x4096x4096 --dtype float32 --fresh)
step tune_warm 600 $K "${tune_args[@]}" --devices all --store "$out/store_warm.jsonl"
for i in 1 2; do
  step "tune_devices_$i" 600 $K "${tune_args[@]}" --devices all --store "$out/store_devices_$i.jsonl" \
    --json "$out/tune_devices_$i.json" --export "$out/best_devices_$i.json"
  step "tune_mpi_$i" 600 "${MPI[@]}" $K "${tune_args[@]}" --store "$out/store_mpi_$i.jsonl" \
    --json "$out/tune_mpi_$i.json" --export "$out/best_mpi_$i.json"
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
    try:
        md, sd, rd = rate(f"tune_devices_{i}")
        mm, sm, rm = rate(f"tune_mpi_{i}")
    except Exception as e:
        print(f"pair {i}: could not read the tune logs ({e!r})")
        continue
    print(f"pair {i}: --devices all {md} points in {sd:.1f} s = {rd:.2f}/s; mpirun -np 2 {mm} "
          f"points in {sm:.1f} s = {rm:.2f}/s; ratio {rm / rd:.3f} "
          f"({'WITHIN' if rm / rd >= 0.95 else 'BELOW'} the 5% goal)")
    try:
        bd, td = best(f"best_devices_{i}")
        bm, tm = best(f"best_mpi_{i}")
        print(f"  best with --devices: {bd} {td:.2f} us; under mpirun: {bm} {tm:.2f} us; "
              f"{'AGREE' if bd == bm else 'DIFFER'} (median {100 * (tm - td) / td:+.1f}%)")
    except Exception as e:
        print(f"  best: could not read the exports ({e!r}); see the tune logs")
PY
fi

# 2. A planted hang (a kernel that spins forever) in a sweep under mpirun: the rank that takes it
# loses that row (a timeout, a worker restart); every other row is as in a clean one-GPU sweep.
if want hang; then
hang="$here/scripts/planted"  # reduce/bad_spin.cu
sweep_args=(--family reduce --dtype int32,float32 --size 1000003 --min-time 0.05 --no-cache)
step clean 600 $K --kernels-dir kernels_src "${sweep_args[@]}" --devices 0 --json "$out/clean.json"
step hang 600 "${MPI[@]}" $K --kernels-dir kernels_src --kernels-dir "$hang" "${sweep_args[@]}" \
  --kernel-timeout 3 --json "$out/hang.json"
python3 "$here/scripts/hang_check.py" "$out" 2>&1 | tee "$out/hang.txt"
fi
tar -C "$out" -czf /tmp/mpi_all.tgz . && find "$out" -mindepth 1 -delete && mv /tmp/mpi_all.tgz "$out/all.tgz"
