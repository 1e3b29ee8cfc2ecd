#!/usr/bin/env python3
"""Issue 36, goal 2, replayed: evaluations until every size has a point within 1% of its own
optimum (the fastest median of the exhaustive tune), one range tune against one tune per size.
usage: range_vs_independent.py KERNLAB ALL.json SIZES(e.g. 2^19:2^28:*2) SEEDS STRATEGY [BUDGET]"""
import json, statistics, subprocess, sys, tempfile, os

kernlab, data, sizes, seeds, strategy = sys.argv[1:6]
budget = sys.argv[6] if len(sys.argv) > 6 else "100"
d = json.load(open(data))
opt = {}
for r in d["records"]:
    if r["outcome"] == "passed" and r["variant"].get("tunable_file"):
        n = r["config"]["size"]
        opt[n] = min(opt.get(n, float("inf")), r["timing"]["median_us"])

def hits(args, seed):
    """{size: evaluation (1-based) of the first point within 1% of that size's optimum}"""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        p = subprocess.run([kernlab, "tune", "--variant", "reduce_tunable", "--dtype", "int32",
                            *args, "--strategy", strategy, "--budget", budget, "--replay", data,
                            "--seed", str(seed), "--json", out],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode not in (0, 1):
            sys.exit(p.stdout[-2000:])
        res = json.load(open(out))
    count, first = {}, {}
    for r in res["records"]:
        if not r["variant"].get("tunable_file"):
            continue  # the library's row
        n = r["config"]["size"]
        count[n] = count.get(n, 0) + 1
        if n not in first and r["outcome"] == "passed" and \
                r["timing"]["median_us"] <= opt[n] * 1.01:
            first[n] = count[n]
    return {n: first.get(n, int(budget) + 1) for n in count}

ratios = []
for seed in range(1, int(seeds) + 1):
    rng = hits(["--size", sizes], seed)
    ind = {}
    for n in rng:
        ind.update(hits(["--size", str(n)], seed))
    ratio = sum(rng.values()) / sum(ind.values())
    ratios.append(ratio)
    print(f"seed {seed}: range {sum(rng.values())} ({' '.join(str(rng[n]) for n in sorted(rng))})"
          f" / independent {sum(ind.values())} ({' '.join(str(ind[n]) for n in sorted(ind))})"
          f" = {ratio:.0%}", flush=True)
q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
print(f"median {statistics.median(ratios):.0%}, quartiles {q[0]:.0%}-{q[2]:.0%}, {len(ratios)} seeds")
