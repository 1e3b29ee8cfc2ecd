#!/usr/bin/env python3
"""Rewrites a results file of format version 1 (the files kernlab wrote before its first
release, 2026-11-22 to 2026-11-27) as version 2, which kernlab reads from then on.

Version 1 grew field by field, and a reader had to guess what an absent field meant. Version 2
has every field in every record (docs/results_format.md, docs/results.schema.json). This script
fills each field a version-1 file may lack with the value its absence meant, so that no reader
carries those guesses any longer:

    python3 scripts/results_v1_to_v2.py OLD.json NEW.json     (either may end in .gz)

A file that is already version 2 is refused; so is anything that is not a results file.
"""
import copy
import gzip
import json
import re
import sys

TIMING_OPTIONS = {  # reproducibility.timing: what an absent field meant in version 1
    "stop_rule": "stdrel", "max_ci": 0.005, "keep_samples": False, "launch": "stream",
    "placements": 1, "max_placements": 1, "placement_workers": 1, "min_interval": 0.0,
    "energy": False, "energy_time_s": 0.5,
}
FP32_LANES = {"6.0": 64, "6.1": 128, "6.2": 128, "7.0": 64, "7.2": 64, "7.5": 64, "8.0": 64,
              "8.6": 128, "8.7": 128, "8.9": 128, "9.0": 128}  # as cuda/device.cpp knows them
DESCRIPTOR = {"target": "", "params": [], "block_dims": [], "grid_dims": []}


def point_of_name(name):
    """A tunable point's file and values from its name, "file[NAME=v;NAME=v]"."""
    m = re.fullmatch(r"(.+)\[(.*)\]", name)
    if not m:
        return "", []
    values = [kv.split("=", 1) for kv in m.group(2).split(";") if "=" in kv]
    try:
        return m.group(1), [[k, int(v)] for k, v in values]
    except ValueError:
        return "", []


def upgrade_config(c):
    c.setdefault("input", "exact")
    c.setdefault("shape", [])
    snr = c.pop("snr_db", None)  # qam256's SNR before real-valued axes; 20 in every other family
    if snr is not None and c.get("op") == "demap" and "real_axes" not in c:
        c["real_axes"] = [["SNR_DB", snr]]


def upgrade_timing(t, median_only):
    t.setdefault("stop_rule", "stdrel")
    t.setdefault("ci_low_us", 0.0)
    t.setdefault("ci_high_us", 0.0)
    t.setdefault("ci_half_width", 0.0)
    t.setdefault("launch", "stream")
    t.setdefault("placements", 1)
    t.setdefault("placement_spread", 0.0)
    t.setdefault("note", "")
    t.setdefault("placement_medians_us", [t["median_us"]] if median_only else [])


def upgrade_record(r):
    v = r["variant"]
    for key, value in DESCRIPTOR.items():
        v.setdefault(key, copy.deepcopy(value))
    if "tunable_file" not in v:
        v["tunable_file"], v["point"] = point_of_name(v["name"])
        v["named_point"] = False
    upgrade_config(r["config"])
    # Before records had one: a row that counts FLOPs was measured against the FP32 peak.
    if "roofline" not in r:
        moved = r.get("bytes", 0) > 0 or r.get("flops", 0) > 0  # "": it never reached its problem
        r["roofline"] = ("compute" if r.get("flops", 0) > 0 else "bandwidth") if moved else ""
    for key, value in (("sanitizer", ""), ("sanitizer_findings", False), ("resumed", False),
                       ("profile", None), ("gpu", None), ("device", None)):
        r.setdefault(key, value)
    if r.get("timing"):
        upgrade_timing(r["timing"], True)


def upgrade_pipeline(p):
    p.setdefault("family", p["variant"].split(".")[0])
    upgrade_config(p["config"])
    if "bytes_each_way" in p:
        p["bytes_in"] = p["bytes_out"] = p.pop("bytes_each_way")
    for row in p["rows"]:
        if "chunk_symbols" in row:
            row["chunk_units"] = row.pop("chunk_symbols")
        row.setdefault("timeline", [])


def upgrade_device(device):
    if not isinstance(device, dict):
        return
    if "peak_fp32_tflops" not in device:
        # The product every later file records: SMs x FP32 lanes x 2 x the SM clock.
        lanes = device.get("fp32_lanes_per_sm", FP32_LANES.get(device.get("compute_capability"), 0))
        device["fp32_lanes_per_sm"] = lanes
        device["peak_fp32_tflops"] = device["sm_count"] * lanes * 2 * device["max_sm_clock_mhz"] / 1e6
    for key in ("peak_tensor16_tflops", "peak_tf32_tflops", "peak_fp64_tensor_tflops"):
        device.setdefault(key, 0.0)


def upgrade(j):
    if not isinstance(j, dict) or j.get("format") != "kernlab-results":
        raise ValueError("not a kernlab results file (no \"format\": \"kernlab-results\")")
    if j.get("version") != 1:
        raise ValueError(f"results format version {j.get('version')!r}, not 1")
    j["version"] = 2
    j.setdefault("complete", True)
    repro = j.setdefault("reproducibility", {})
    timing = repro.setdefault("timing", {})
    for key, value in TIMING_OPTIONS.items():
        timing.setdefault(key, value)
    device = repro.get("device")
    for one in [device, *repro.get("devices", [])]:
        upgrade_device(one)
    repro.setdefault("kernlab_commit", "unknown")  # before builds recorded their commit
    repro.setdefault("launch_floor_us", None)
    repro.setdefault("sources", [])
    for r in j.get("records", []):
        upgrade_record(r)
        if isinstance(r["device"], dict) and isinstance(device, dict):
            for key in ("peak_fp32_tflops", "peak_tensor16_tflops", "peak_tf32_tflops",
                        "peak_fp64_tensor_tflops"):
                r["device"].setdefault(key, device[key])
    for p in j.get("pipeline", []):
        upgrade_pipeline(p)
    return j


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    source, target = argv[1], argv[2]
    opener = gzip.open if source.endswith(".gz") else open
    with opener(source, "rt", encoding="utf-8") as f:
        j = json.load(f)
    try:
        upgrade(j)
    except (ValueError, KeyError, TypeError) as e:
        sys.exit(f"{source}: {e}")
    text = json.dumps(j, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if target.endswith(".gz"):
        with open(target, "wb") as f:
            f.write(gzip.compress(text.encode("utf-8"), 9, mtime=0))
    else:
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main(sys.argv)
