#!/usr/bin/env python3
"""Issue 36, goal 2, replayed: evaluations until every size has a point within 1% of its own
optimum (the fastest median of the exhaustive tune), one range tune against one tune per size.
usage: range_vs_independent.py KERNLAB ALL.json SEEDS STRATEGY BUDGET -- TUNE ARGS (with one
--size or --shape list or range; the independent tunes take each of its sizes alone)"""
import json, statistics, subprocess, sys, tempfile, os

kernlab, data, seeds, strategy, budget = sys.argv[1:6]
assert sys.argv[6] == "--"
args = sys.argv[7:]
axis = "--shape" if "--shape" in args else "--size"
i = args.index(axis)
base = args[:i] + args[i + 2:]
d = json.load(open(data))

def key(r):
    c = r["config"]
    return "x".join(map(str, c["shape"])) if c["shape"] else str(c["size"])

opt = {}
for r in d["records"]:
    if r["outcome"] == "passed" and r["variant"].get("tunable_file"):
        opt[key(r)] = min(opt.get(key(r), float("inf")), r["timing"]["median_us"])

def hits(sizes, seed):
    """{size: evaluation (1-based) of the first point within 1% of that size's optimum}"""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        p = subprocess.run([kernlab, "tune", *base, axis, sizes, "--strategy", strategy,
                            "--budget", budget, "--replay", data, "--seed", str(seed),
                            "--json", out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode not in (0, 1):
            sys.exit(p.stdout[-2000:])
        res = json.load(open(out))
    count, first = {}, {}
    for r in res["records"]:
        if not r["variant"].get("tunable_file"):
            continue  # the library's row
        n = key(r)
        count[n] = count.get(n, 0) + 1
        if n not in first and r["outcome"] == "passed" and r["timing"]["median_us"] <= opt[n] * 1.01:
            first[n] = count[n]
    return {n: first.get(n, int(budget) + 1) for n in count}

def order(n):
    return [int(x) for x in n.split("x")]

ratios = []
for seed in range(1, int(seeds) + 1):
    rng = hits(args[i + 1], seed)
    ind = {}
    for n in rng:
        ind.update(hits(n, seed))
    ratio = sum(rng.values()) / sum(ind.values())
    ratios.append(ratio)
    ks = sorted(rng, key=order)
    print(f"seed {seed}: range {sum(rng.values())} ({' '.join(str(rng[n]) for n in ks)})"
          f" / independent {sum(ind.values())} ({' '.join(str(ind[n]) for n in ks)})"
          f" = {ratio:.0%}", flush=True)
q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
print(f"median {statistics.median(ratios):.0%}, quartiles {q[0]:.0%}-{q[2]:.0%}, {len(ratios)} seeds")
