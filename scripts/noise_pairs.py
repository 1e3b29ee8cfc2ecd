#!/usr/bin/env python3
"""Issue 31's figures for runs of the same rows: for each consecutive pair of results files,
how far each row above 10 us moved (median, p90, max, rows over 1%), and how often the second
run's median fell inside the first run's interval and the reverse. A lone "--" starts another
series (runs of other code): pairs are taken within a series, the totals over all of them.
  python3 scripts/noise_pairs.py a.json b.json [c.json ...] [-- x.json y.json ...]"""
import json, sys

def rows(path):
    out = {}
    try:
        open(path).close()
    except OSError as e:
        print(f"{path}: {e.strerror}; left out")
        return out
    for r in json.load(open(path))["records"]:
        t = r.get("timing")
        if r.get("outcome") != "passed" or not t:
            continue
        c = r["config"]
        key = (r["variant"]["qualified_name"], r["block"], c["dtype"], c["op"], c["size"],
               tuple(c.get("shape") or []))
        out[key] = (t["median_us"], t["ci_low_us"], t["ci_high_us"], t.get("placement_spread", 0))
    return out

def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")

files = sys.argv[1:]
runs = [rows(f) if f != "--" else None for f in files]
allcov = [0, 0]
for i in range(len(runs) - 1):
    a, b = runs[i], runs[i + 1]
    if a is None or b is None:
        continue
    keys = [k for k in a if k in b and a[k][0] > 10]
    d = [abs(b[k][0] / a[k][0] - 1) * 100 for k in keys]
    cov = sum(1 for k in keys if a[k][1] <= b[k][0] <= a[k][2]) + \
          sum(1 for k in keys if b[k][1] <= a[k][0] <= b[k][2])
    allcov[0] += cov; allcov[1] += 2 * len(keys)
    shift = sum((b[k][0] / a[k][0] - 1) * 100 for k in keys) / max(1, len(keys))
    if not keys:
        print(f"{files[i]} -> {files[i+1]}: no rows in common")
        continue
    worst = max(keys, key=lambda k: abs(b[k][0] / a[k][0] - 1))
    print(f"{files[i]} -> {files[i+1]}: {len(keys)} rows > 10 us; diff median {pct(d, .5):.2f}% "
          f"p90 {pct(d, .9):.2f}% max {max(d):.2f}% ({worst[0]} b{worst[1]} {worst[2]}); "
          f">1%: {sum(x > 1 for x in d)}; mean shift {shift:+.2f}%; "
          f"inside the other's interval {cov}/{2 * len(keys)}")
if allcov[1]:
    print(f"all pairs: inside the other's interval {allcov[0]}/{allcov[1]} = "
          f"{100 * allcov[0] / allcov[1]:.1f}%")
sp = [v[3] * 100 for r in runs if r for v in r.values() if v[0] > 10]
print(f"placement spread: median {pct(sp, .5):.2f}% p90 {pct(sp, .9):.2f}%")
