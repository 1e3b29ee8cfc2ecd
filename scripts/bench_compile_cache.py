#!/usr/bin/env python3
"""The compile-cache benchmarks of the results history's 2026-11-22-compile-cache.md, CPU only.

Every shipped variant at the four block sizes (int32 and float32 sums: 8 instantiations a file),
compiled with --compile-only:
  serial    one compile thread, no cache: the baseline
  cold      the default threads (one per core), an empty cache
  warm      every file a hit: process start to the end of compilation (kernels ready)
  one-edit  a copy of kernels_src with one line of reduce5.cu changed before every run

Each run starts on a quiet machine (at least 97% idle for a second) and is thrown away and run
again if other processes used more CPU time than 5% of its wall time (plus two clock ticks)
while it ran: on a shared 2-core machine one busy neighbour halves the cores, and the point is to
measure kernlab.

usage: scripts/bench_compile_cache.py [--runs N] [--out DIR] [--quiet-limit S]
       (needs a built build/kernlab)
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KL = os.path.join(ROOT, "build", "kernlab")
COMMON = ["--compile-only", "--variant", "all", "--block", "all"]


def cpu_jiffies():
    """(busy, total) jiffies of all CPUs."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    idle = v[3] + v[4]  # idle + iowait
    return sum(v) - idle, sum(v)


QUIET_LIMIT_S = 3600  # --quiet-limit: a neighbour's fuzzer may hold a core for many minutes


def wait_quiet():
    limit_s = QUIET_LIMIT_S
    quiet = 0
    deadline = time.time() + limit_s
    while time.time() < deadline:
        b0, t0 = cpu_jiffies()
        time.sleep(0.5)
        b1, t1 = cpu_jiffies()
        quiet = quiet + 1 if t1 > t0 and (b1 - b0) / (t1 - t0) <= 0.03 else 0
        if quiet >= 2:
            return
    sys.exit("the machine did not become quiet within %d s" % limit_s)


def run_once(cmd, log=None):
    """Wall seconds of one run, and the CPU seconds other processes used meanwhile."""
    wait_quiet()
    b0, _ = cpu_jiffies()
    t0 = time.perf_counter()
    out = open(log, "w") if log else subprocess.DEVNULL
    p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    b1, _ = cpu_jiffies()
    if log:
        out.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit("%s exited with %d" % (" ".join(cmd), code))
    foreign = (b1 - b0) / HZ - (ru.ru_utime + ru.ru_stime)
    return wall, foreign


def disturbed(wall, foreign):
    return foreign > 0.05 * wall + 2.0 / HZ  # /proc/stat counts whole clock ticks


def logged_run(cmd, log, prepare=None):
    """One undisturbed run whose output is kept, for the report."""
    while True:
        if prepare:
            prepare()
        if not disturbed(*run_once(cmd, log)):
            return


def measure(name, cmd, runs, prepare=None):
    times, discarded = [], 0
    while len(times) < runs:
        if prepare:
            prepare()
        wall, foreign = run_once(cmd)
        if disturbed(wall, foreign):
            discarded += 1
            continue
        times.append(wall)
    r = {"name": name, "cmd": cmd, "times": times, "discarded": discarded,
         "mean": statistics.mean(times), "sd": statistics.stdev(times) if len(times) > 1 else 0,
         "min": min(times), "median": statistics.median(times)}
    print("%-10s mean %8.1f ms  sd %6.1f  min %8.1f  median %8.1f  (%d runs, %d discarded)" %
          (name, r["mean"] * 1e3, r["sd"] * 1e3, r["min"] * 1e3, r["median"] * 1e3, runs, discarded),
          flush=True)
    return r


def main():
    global QUIET_LIMIT_S
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--out", default="/tmp/kernlab-bench")
    ap.add_argument("--quiet-limit", type=int, default=QUIET_LIMIT_S,
                    help="seconds to wait for a quiet machine before giving up")
    a = ap.parse_args()
    QUIET_LIMIT_S = a.quiet_limit
    out = a.out
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    with open("/proc/cpuinfo") as f:
        model = re.search(r"model name\s*:\s*(.*)", f.read()).group(1)
    version = subprocess.run([KL, "--version"], capture_output=True, text=True).stdout.strip()
    print("nproc %d, %s, %s" % (os.cpu_count(), model, version), flush=True)

    results = []
    cold_cache = os.path.join(out, "cold-cache")
    clear_cold = lambda: shutil.rmtree(cold_cache, ignore_errors=True)
    # Serial and cold alternate run by run, so a slow patch of the machine hits both alike.
    serial_cmd = [KL] + COMMON + ["--compile-jobs", "1", "--no-cache"]
    cold_cmd = [KL] + COMMON + ["--cache-dir", cold_cache]
    run_once(serial_cmd)  # warm the page cache (libnvrtc is 100 MB)
    serial, cold = [], []
    for _ in range(a.runs):
        serial.append(measure("serial", serial_cmd, 1))
        cold.append(measure("cold", cold_cmd, 1, clear_cold))
    for name, rs in (("serial", serial), ("cold", cold)):
        times = [t for r in rs for t in r["times"]]
        results.append({"name": name, "cmd": rs[0]["cmd"], "times": times,
                        "discarded": sum(r["discarded"] for r in rs),
                        "mean": statistics.mean(times), "sd": statistics.stdev(times),
                        "min": min(times), "median": statistics.median(times)})
    logged_run(cold_cmd, os.path.join(out, "cold-run.txt"), clear_cold)

    warm_cache = os.path.join(out, "warm-cache")
    warm_cmd = [KL] + COMMON + ["--cache-dir", warm_cache]
    run_once(warm_cmd)
    results.append(measure("warm", warm_cmd, a.runs * 3))
    results.append(measure("warm-np", warm_cmd + ["--no-plugins"], a.runs * 3))
    logged_run(warm_cmd, os.path.join(out, "warm-run.txt"))

    kernels = os.path.join(out, "edit", "kernels_src")
    shutil.copytree(os.path.join(ROOT, "kernels_src"), kernels)
    edited = os.path.join(kernels, "reduce", "reduce5.cu")
    original = open(edited).read()

    def edit():  # one line of reduce5.cu, different before every run
        text = original.replace("__syncthreads();", "__syncthreads();  // edit %d" % time.time_ns(), 1)
        open(edited, "w").write(text)

    edit_cmd = [KL] + COMMON + ["--config", "/dev/null", "--kernels-dir", kernels,
                                "--cache-dir", os.path.join(out, "edit-cache")]
    run_once(edit_cmd)
    results.append(measure("one-edit", edit_cmd, a.runs, edit))
    logged_run(edit_cmd, os.path.join(out, "edit-run.txt"), edit)

    s = next(r for r in results if r["name"] == "serial")
    c = next(r for r in results if r["name"] == "cold")
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("| run | mean ms | sd ms | min ms | median ms | runs | discarded |\n")
        f.write("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
        for r in results:
            f.write("| %s | %.1f | %.1f | %.1f | %.1f | %d | %d |\n" % (
                r["name"], r["mean"] * 1e3, r["sd"] * 1e3, r["min"] * 1e3, r["median"] * 1e3,
                len(r["times"]), r["discarded"]))
        f.write("\ncold / serial: %.3f (means), %.3f (medians); per pair: %s\n" %
                (c["mean"] / s["mean"], c["median"] / s["median"],
                 " ".join("%.3f" % (x / y) for x, y in zip(c["times"], s["times"]))))
        f.write("\nevery run, ms:\n")
        for r in results:
            f.write("  %s: %s\n" % (r["name"], " ".join("%.1f" % (t * 1e3) for t in r["times"])))
        f.write("\ncommands:\n")
        for r in results:
            f.write("  %s: %s\n" % (r["name"], " ".join(r["cmd"])))
    print(open(os.path.join(out, "results.md")).read())
    for name in ("cold-run.txt", "warm-run.txt", "edit-run.txt"):
        print("==", name)
        print(open(os.path.join(out, name)).read())


if __name__ == "__main__":
    main()
