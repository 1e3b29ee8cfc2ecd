# drive.py {kl|kt} EXAMPLE: runs Kernel Tuner's example script (kl: k_EXAMPLE.py, the import
# changed to kernlab; kt: kt_EXAMPLE.py, unchanged, Kernel Tuner with lang="cupy") and prints, per
# tune_kernel call, the points returned, the best point and the call's wall time.
import json, runpy, sys, time
side, ex = sys.argv[1], sys.argv[2]
if side == "kl":
    import kernlab as mod
else:
    import kernel_tuner as mod
orig = mod.tune_kernel
summary = []
def patched(name, *a, **k):
    if side == "kt":
        k["lang"] = "cupy"
    t0 = time.time()
    res = orig(name, *a, **k)
    wall = time.time() - t0
    rows = [r for r in res[0] if isinstance(r.get("time"), float)]
    best = min(rows, key=lambda r: r["time"]) if rows else None
    keys = [p for p in a[3].keys()] if len(a) > 3 else []
    summary.append({"kernel": name, "points": len(rows), "wall_s": round(wall, 2),
                    "best_ms": best and best["time"], "best": best and {p: best[p] for p in keys}})
    print("DRIVE", side, ex, json.dumps(summary[-1]), flush=True)
    return res
mod.tune_kernel = patched
runpy.run_path(f"{side if side == 'kt' else 'k'}_{ex}.py", run_name="__main__")
print("DRIVE-SUMMARY", side, ex, json.dumps(summary))
