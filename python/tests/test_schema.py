"""The results format's JSON Schema (docs/results.schema.json) against every results file the
tests hold, the files kernlab writes on this machine, and version-1 files rewritten by
scripts/results_v1_to_v2.py."""
import copy
import gzip
import importlib.util
import json
import pathlib
import subprocess
import sys

import pytest

jsonschema = pytest.importorskip("jsonschema", reason="no python3-jsonschema (scripts/setup.sh installs it)")

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "results.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
LINE = jsonschema.Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": "#/$defs/line"})


def load(path):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def results_files():
    files = sorted((ROOT / "tests" / "data").rglob("*.json.gz")) + \
        sorted((ROOT / "tests" / "fuzz" / "corpus").glob("results*/*.json"))
    return [f for f in files if load(f).get("format") == "kernlab-results"]


def errors(validator, j):
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in validator.iter_errors(j)]


def converter():
    spec = importlib.util.spec_from_file_location("results_v1_to_v2", ROOT / "scripts" / "results_v1_to_v2.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_schema_is_a_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("path", results_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_results_file_of_the_tests_is_valid(path):
    assert errors(VALIDATOR, load(path)) == []


@pytest.mark.parametrize("name", ["sweep.jsonl.gz", "tune.jsonl.gz"])
def test_every_jsonl_line_is_a_valid_line(name):
    with gzip.open(ROOT / "tests" / "data" / "python" / name, "rt", encoding="utf-8") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    assert lines and all(errors(LINE, line) == [] for line in lines)


def test_the_schema_refuses_what_the_format_does_not_have():
    good = load(ROOT / "tests" / "data" / "python" / "sweep.json.gz")
    for damage in (lambda j: j["records"][0].pop("timing"),
                   lambda j: j["records"][0]["config"].update(size=-1),
                   lambda j: j["records"][0].update(outcome="fine"),
                   lambda j: j["reproducibility"]["timing"].update(extra=1),
                   lambda j: j.update(version=1)):
        bad = copy.deepcopy(good)
        damage(bad)
        assert errors(VALIDATOR, bad), "a damaged file passed"


def written(binary, tmp_path, *args):
    """The --json file (and the --jsonl lines, where the command takes them) kernlab writes."""
    out, lines = tmp_path / "run.json", tmp_path / "run.jsonl"
    jsonl = [] if "--compile-only" in args else ["--jsonl", str(lines)]
    done = subprocess.run([binary, *args, "--json", str(out), *jsonl], capture_output=True, text=True)
    assert out.exists(), done.stdout + done.stderr
    return json.loads(out.read_text()), [json.loads(x) for x in lines.read_text().splitlines()] \
        if lines.exists() else []


def test_what_kernlab_writes_here_is_valid(binary, tmp_path):
    j, _ = written(binary, tmp_path, "--compile-only", "--variant", "reduce5,reduce6")
    assert j["reproducibility"]["sources"] and errors(VALIDATOR, j) == []


@pytest.mark.parametrize("args", [["--variant", "reduce5,cub", "--block", "256", "--size", "1000,2^20+3"],
                                  ["--variant", "matmul.tiled,cublas", "--shape", "65x33x17"],
                                  ["tune", "--variant", "reduce_tunable", "--size", "2^20",
                                   "--strategy", "random", "--budget", "4"]])
def test_gpu_what_a_sweep_and_a_tune_write_is_valid(binary, gpu, tmp_path, args):
    j, lines = written(binary, tmp_path, *args)
    assert j["records"] and errors(VALIDATOR, j) == []
    assert all(errors(LINE, line) == [] for line in lines)


def version_1_of(j):
    """A version-2 file made what the first weeks wrote: fields that came later removed."""
    old = copy.deepcopy(j)
    old["version"] = 1
    for key in ("placement_workers", "min_interval", "launch", "placements", "max_placements"):
        old["reproducibility"]["timing"].pop(key)
    for r in old["records"]:
        for key in ("tunable_file", "point", "named_point", "params", "target"):
            r["variant"].pop(key)
        for key in ("roofline", "gpu", "profile", "resumed"):
            r.pop(key)
        r["config"].pop("shape")
        r["config"]["snr_db"] = 20.0
        if r["timing"]:
            for key in ("ci_low_us", "ci_high_us", "ci_half_width", "stop_rule", "placements",
                        "placement_medians_us", "launch"):
                r["timing"].pop(key)
    return old


def test_a_version_1_file_rewritten_is_valid_and_kernlab_reads_it(binary, tmp_path):
    v2 = load(ROOT / "tests" / "data" / "python" / "tune.json.gz")
    v1 = version_1_of(v2)
    assert errors(VALIDATOR, v1)
    old, new = tmp_path / "v1.json", tmp_path / "v2.json"
    old.write_text(json.dumps(v1))
    refused = subprocess.run([binary, "compare", str(old), str(old)], capture_output=True, text=True)
    assert refused.returncode == 4 and "results_v1_to_v2.py" in refused.stderr
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "results_v1_to_v2.py"), str(old), str(new)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    upgraded = json.loads(new.read_text())
    assert errors(VALIDATOR, upgraded) == []
    # What the old file could say comes back as it was; what it could not, as its absence meant.
    for a, b in zip(upgraded["records"], v2["records"]):
        if not b["variant"]["named_point"]:  # a named point's name does not hold its values
            assert a["variant"]["point"] == b["variant"]["point"]
        assert a["config"]["shape"] == [] and "snr_db" not in a["config"]
    compared = subprocess.run([binary, "compare", str(new), str(new)], capture_output=True, text=True)
    assert compared.returncode == 0, compared.stdout + compared.stderr


def test_the_converter_refuses_what_is_not_version_1():
    with pytest.raises(ValueError, match="not 1"):
        converter().upgrade(load(ROOT / "tests" / "data" / "python" / "sweep.json.gz"))
    with pytest.raises(ValueError, match="not a kernlab results file"):
        converter().upgrade({"format": "kernlab-tuning-table", "version": 1})
