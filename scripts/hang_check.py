#!/usr/bin/env python3
"""The planted-hang check of scripts/gpu_devices.sh and scripts/gpu_mpi.sh.

Reads OUT/clean.json (a one-GPU sweep) and OUT/hang.json (the same rows over several GPUs, with
the planted kernel bad_spin beside them) and prints whether the planted rows timed out, and every
other row has the clean sweep's outcome (and, where the answer is exact, int32, its answer), on
more than one GPU. The last line is "HANG CHECK: PASS" or "HANG CHECK: FAIL".
  python3 scripts/hang_check.py OUT
"""
import json
import sys

out = sys.argv[1]
key = lambda r: (r["variant"]["qualified_name"], r["block"], r["config"]["dtype"])
gpu = lambda r: (r.get("gpu") or {}).get("uuid")  # ordinals repeat across the hosts of mpirun
clean = {key(r): r for r in json.load(open(f"{out}/clean.json"))["records"]}
hang = json.load(open(f"{out}/hang.json"))["records"]
bad = [r for r in hang if r["variant"]["name"] == "bad_spin" and r["outcome"] != "skipped"]
print("planted:", [(r["outcome"], gpu(r)) for r in bad])
ok = all(r["outcome"] == "timeout" for r in bad) and len(bad) == 2
# The same outcome for every row, and the same answer where it is exact (int32: a float sum made
# with atomics may differ in its last bits from run to run, on one GPU too). A baseline row is
# there once per GPU, each compared with the clean run's.
same = differ = 0
gpus, seen = set(), set()
for r in hang:
    if r["variant"]["name"] == "bad_spin":
        continue
    if gpu(r):
        gpus.add(gpu(r))
    seen.add(key(r))
    c = clean.get(key(r))
    exact = r["config"]["dtype"] == "int32"
    if c is None or r["outcome"] != c["outcome"] or (exact and r["got"] != c["got"]):
        differ += 1
        print("DIFFERS:", key(r), r["outcome"], r["got"], "vs", c and (c["outcome"], c["got"]))
    else:
        same += 1
missing = set(clean) - seen
print(f"rows as in the clean one-GPU sweep: {same}, differing: {differ}, missing: {len(missing)}; "
      f"GPUs used: {len(gpus)}")
print("HANG CHECK:", "PASS" if ok and differ == 0 and not missing and len(gpus) > 1 else "FAIL")
