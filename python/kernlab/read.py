"""kernlab.read: one DataFrame from any results file kernlab writes.

Every kind of file comes out with the same column names for the same things, the names of the
`--csv` columns (docs/results_format.md): `family`, `variant`, `block`, `dtype`, `op`, `size`,
`outcome`, `median_us`, `ci_low_us`, `ci_high_us`, `gbps`, ... A record of a tunable point also
has one column per tunable (its name, e.g. `VEC`), and `qualified_name` names the variant whole.
What is not per row (the device, the command, the timing options) is in `df.attrs`.
"""
import csv
import gzip
import io
import json
import os

import pandas as pd

# The --csv file's columns, in its order (host/src/report/csv.cpp): a DataFrame read from any
# other kind of file has these first, then what only that kind has.
CSV_COLUMNS = (
    "family,variant,origin,block,dtype,op,size,input,seed,outcome,median_us,min_us,max_us,"
    "mean_us,noise,samples,timed_out,flush,gbps,percent_of_peak,baseline,x_baseline,registers,"
    "occupancy,compile_ms,load_ms,validate_ms,expected,got,message,real_axes,blocks_per_sm,shape,"
    "tflops,percent_of_fp32_peak,ci_low_us,ci_high_us,ci_half_width,stop_rule,uj_per_op,watts,"
    "energy_method,energy_error,profile_kernels,profile_dram_pct,profile_occupancy_pct,"
    "profile_l2_hit_pct,profile_sm_pct,profile_stall1,profile_stall1_cycles,profile_stall2,"
    "profile_stall2_cycles,gpu_ordinal,gpu_uuid,gpu_name,placements,placement_spread,launch"
).split(",")

# kernlab reads a results file of at most 256 MiB (docs/guarantees.md); so does this.
MAX_BYTES = 256 << 20


def _text(path):
    """The file's text; a .gz file is unpacked."""
    size = os.path.getsize(path)
    if size > MAX_BYTES:
        raise ValueError(f"{path}: {size} bytes, more than the {MAX_BYTES >> 20} MiB kernlab reads")
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ValueError(f"{path}: more than the {MAX_BYTES >> 20} MiB kernlab reads")
    return data.decode("utf-8")


def _shape_text(shape):
    return "x".join(str(d) for d in shape) if shape else ""


def _real_axes_text(config):
    axes = config.get("real_axes") or []
    return " ".join(f"{name}={value:g}" for name, value in axes)


def flatten_record(r):
    """One results record (a dict, as --json writes it) as one flat row."""
    v, c = r.get("variant") or {}, r.get("config") or {}
    t = r.get("timing") or {}
    res, occ = r.get("resources") or {}, r.get("occupancy") or {}
    e, p, g = r.get("energy") or {}, r.get("profile") or {}, r.get("gpu") or {}
    stalls = p.get("stalls") or []
    row = {
        "family": v.get("family"), "variant": v.get("name"), "origin": v.get("origin"),
        "block": r.get("block"), "dtype": c.get("dtype"), "op": c.get("op"),
        "size": c.get("size"), "input": c.get("input"), "seed": c.get("seed"),
        "outcome": r.get("outcome"),
        "median_us": t.get("median_us"), "min_us": t.get("min_us"), "max_us": t.get("max_us"),
        "mean_us": t.get("mean_us"), "noise": t.get("noise"), "samples": t.get("samples"),
        "timed_out": t.get("timed_out"), "flush": t.get("flush"),
        "gbps": r.get("gbps"), "percent_of_peak": r.get("percent_of_peak"),
        "baseline": r.get("baseline"), "x_baseline": r.get("x_baseline"),
        "registers": res.get("registers"), "occupancy": occ.get("fraction"),
        "compile_ms": r.get("compile_ms"), "load_ms": r.get("load_ms"),
        "validate_ms": r.get("validate_ms"), "expected": r.get("expected"), "got": r.get("got"),
        "message": r.get("message"), "real_axes": _real_axes_text(c),
        "blocks_per_sm": occ.get("blocks_per_sm"), "shape": _shape_text(c.get("shape")),
        "tflops": r.get("tflops"), "percent_of_fp32_peak": r.get("percent_of_fp32_peak"),
        "ci_low_us": t.get("ci_low_us"), "ci_high_us": t.get("ci_high_us"),
        "ci_half_width": t.get("ci_half_width"), "stop_rule": t.get("stop_rule"),
        "uj_per_op": e["joules_per_op"] * 1e6 if "joules_per_op" in e else None,
        "watts": e.get("watts"), "energy_method": e.get("method"), "energy_error": e.get("error"),
        "profile_kernels": p.get("kernels"), "profile_dram_pct": p.get("dram_pct"),
        "profile_occupancy_pct": p.get("occupancy_pct"), "profile_l2_hit_pct": p.get("l2_hit_pct"),
        "profile_sm_pct": p.get("sm_pct"),
        "profile_stall1": stalls[0]["reason"] if len(stalls) > 0 else None,
        "profile_stall1_cycles": stalls[0]["cycles"] if len(stalls) > 0 else None,
        "profile_stall2": stalls[1]["reason"] if len(stalls) > 1 else None,
        "profile_stall2_cycles": stalls[1]["cycles"] if len(stalls) > 1 else None,
        "gpu_ordinal": g.get("ordinal"), "gpu_uuid": g.get("uuid"), "gpu_name": g.get("name"),
        "placements": t.get("placements"), "placement_spread": t.get("placement_spread"),
        "launch": t.get("launch"),
        # Beyond the CSV's columns.
        "qualified_name": v.get("qualified_name"), "bytes": r.get("bytes"),
        "flops": r.get("flops"), "roofline": r.get("roofline"),
        "device_name": (r.get("device") or {}).get("name"), "resumed": r.get("resumed", False),
        # The compiler's report (every record of `--resources --json`; the CSV has registers).
        "smem_bytes": res.get("static_shared_bytes"), "stack_bytes": res.get("stack_frame_bytes"),
        "spill_store_bytes": res.get("spill_store_bytes"),
        "spill_load_bytes": res.get("spill_load_bytes"),
    }
    point = v.get("point") or []
    for name, value in point:
        row.setdefault(name, value)  # a tunable point's values, a column each
    row["__point__"] = [name for name, _ in point]
    for name, value in c.get("real_axes") or []:
        row.setdefault(name, value)
    return row


def _frame(rows, attrs):
    tunables = {name for r in rows for name in r.pop("__point__", [])}
    df = pd.DataFrame(rows) if rows else pd.DataFrame(columns=CSV_COLUMNS)
    if rows:
        first = [c for c in CSV_COLUMNS if c in df.columns]
        df = df[first + [c for c in df.columns if c not in first]]
        # A tunable's column is empty in the rows of other variants: whole numbers stay whole.
        for col in tunables & set(df.columns):
            values = df[col].dropna()
            if len(values) and all(float(v).is_integer() for v in values
                                   if isinstance(v, (int, float))) and \
                    all(isinstance(v, (int, float)) for v in values):
                df[col] = df[col].astype("Int64")
    df.attrs.update(attrs)
    return df


def _read_results(j, path):
    """A --json file of a sweep or a tune."""
    version = j.get("version")
    if version == 1:
        raise ValueError(f"{path}: results format version 1, from before kernlab 0.1; "
                         "scripts/results_v1_to_v2.py rewrites it as version 2, which this reader knows")
    if version != 2:
        raise ValueError(f"{path}: results format version {version!r}; this reader knows 2")
    attrs = {"kind": "results", "path": str(path), "reproducibility": j.get("reproducibility"),
             "complete": j.get("complete", True)}
    if "tuning" in j:
        attrs["tuning"] = j["tuning"]
    return _frame([flatten_record(r) for r in j.get("records", [])], attrs)


def _read_t4(j, path):
    """A --t4 file: T4's autotuning results format (schema 1.0.0), a row per evaluated point."""
    rows = []
    for res in j.get("results", []):
        row = dict(res.get("configuration") or {})
        times = res.get("times") or {}
        row["compile_ms"] = times.get("compilation_time")
        row["validate_ms"] = times.get("validation")
        row["runtimes_ms"] = times.get("runtimes")
        row["invalidity"] = res.get("invalidity")
        row["correctness"] = res.get("correctness")
        for m in res.get("measurements") or []:
            row[m["name"]] = m["value"]
        rows.append(row)
    df = pd.DataFrame(rows)
    df.attrs.update({"kind": "t4", "path": str(path), "metadata": j.get("metadata"),
                     "schema_version": j.get("schema_version")})
    return df


def _read_lines(text, path):
    """--jsonl (a record a line, each with its `run`) or a tuning store (`key`, `provenance`,
    `record` a line). A line cut short by a kill (the last one) is left out, as kernlab does."""
    rows, kinds, cut = [], set(), 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            j = json.loads(line)
        except json.JSONDecodeError:
            cut += 1
            continue
        if "record" in j and "key" in j:
            kinds.add("store")
            row = flatten_record(j["record"])
            row["key"] = j["key"]
            prov = j.get("provenance") or {}
            for k, v in prov.items():
                if not isinstance(v, (dict, list)):
                    row["provenance_" + k] = v
        else:
            kinds.add("jsonl")
            row = flatten_record(j)
            run = j.get("run") or {}
            for k in ("date", "kernlab_version", "kernlab_commit", "nvrtc_version", "seed"):
                if k in run:
                    row["run_" + k] = run[k]
        rows.append(row)
    if len(kinds) > 1:
        raise ValueError(f"{path}: mixes results records and tuning-store lines")
    return _frame(rows, {"kind": kinds.pop() if kinds else "jsonl", "path": str(path),
                         "lines_left_out": cut})


def _read_export(j, path):
    """A tune's --export file (the tuning table): a row per tune, its best point's values as
    columns."""
    rows = []
    for t in j.get("tunes", []):
        best, c = t.get("best") or {}, t.get("config") or {}
        timing = best.get("timing") or {}
        row = {"variant": t.get("variant"), "file": t.get("file"), "dtype": c.get("dtype"),
               "op": c.get("op"), "size": c.get("size"), "shape": _shape_text(c.get("shape")),
               "real_axes": _real_axes_text(c), "best_variant": best.get("variant"),
               "median_us": timing.get("median_us"), "ci_low_us": timing.get("ci_low_us"),
               "ci_high_us": timing.get("ci_high_us"), "gbps": best.get("gbps"),
               "tflops": best.get("tflops"), "fraction_of_peak": best.get("fraction_of_peak"),
               "baseline": (t.get("baseline") or {}).get("variant"),
               "x_baseline": (t.get("baseline") or {}).get("speedup"),
               "strategy": t.get("strategy"), "evaluated": t.get("evaluated"),
               "failed": t.get("failed"), "seconds": t.get("seconds")}
        for name, value in (best.get("values") or {}).items():
            row.setdefault(name, value)
        rows.append(row)
    df = pd.DataFrame(rows)
    df.attrs.update({"kind": "export", "path": str(path), "provenance": j.get("provenance")})
    return df


def read(path):
    """A DataFrame of the results file at `path`: a `--json` file (a sweep's or a tune's), a
    `--jsonl` file, a `--csv` file, a `--t4` file, a tune's `--export` file or a tuning store
    (`tuning.jsonl`); `.gz` files too. Raises ValueError naming the file when it is none of those."""
    text = _text(path)
    stripped = text.lstrip()
    if not stripped:
        raise ValueError(f"{path}: empty")
    if stripped[0] == "{":
        try:
            j = json.loads(text)
        except json.JSONDecodeError:
            return _read_lines(text, path)  # one JSON object a line
        if j.get("format") == "kernlab-results":
            return _read_results(j, path)
        if "schema_version" in j and "results" in j:
            return _read_t4(j, path)
        if j.get("format") == "kernlab-tuning-table":
            return _read_export(j, path)
        if "record" in j or "run" in j:
            return _read_lines(text, path)  # a store or a --jsonl file of one line
        raise ValueError(f"{path}: a JSON object, but not a kernlab results, T4 or store file")
    header = next(csv.reader(io.StringIO(stripped.splitlines()[0])))
    if header[: len(CSV_COLUMNS)] != CSV_COLUMNS[: len(header)] or len(header) < 10:
        raise ValueError(f"{path}: neither JSON nor kernlab's --csv (its first line is not the "
                         "header kernlab writes)")
    df = pd.read_csv(io.StringIO(text), keep_default_na=False, na_values=[""])
    for col in ("family", "variant", "origin", "dtype", "op", "input", "outcome", "message",
                "expected", "got", "real_axes", "shape", "baseline"):
        if col in df.columns:
            df[col] = df[col].fillna("").astype(str)
    df.attrs.update({"kind": "csv", "path": str(path)})
    return df
