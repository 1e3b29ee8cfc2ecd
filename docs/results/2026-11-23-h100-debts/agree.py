import json, sys, statistics
def load(p):
    d=json.load(open(p)); out={}
    for r in d["records"]:
        t=r.get("timing")
        if not t or r["outcome"]!="passed": continue
        c=r["config"]
        k=(r["variant"]["family"]+"."+r["variant"]["name"], r["block"], c["dtype"], c["op"], c["size"])
        out[k]=t
    return out
a=load(sys.argv[1]); b=load(sys.argv[2])
ks=[k for k in a if k in b]
diffs=sorted(abs(b[k]["median_us"]/a[k]["median_us"]-1)*100 for k in ks)
n=len(diffs)
print(f"{n} rows in both; |median difference| : median {statistics.median(diffs):.2f}%, p90 {diffs[int(0.9*n)]:.2f}%, max {diffs[-1]:.2f}%")
for th in (0.5,1,2,3):
    print(f"  within {th}%: {sum(d<=th for d in diffs)} of {n}")
for f,lab in ((a,sys.argv[1]),(b,sys.argv[2])):
    ci=[t.get("ci_half_width",0)*100 for t in f.values()]
    to=sum(t["timed_out"] for t in f.values())
    print(f"{lab}: {len(f)} passed timed rows, {to} timed out, ci95 half-width max {max(ci):.2f}%, samples median {statistics.median(t['samples'] for t in f.values())}")
