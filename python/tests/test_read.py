"""kernlab.read on every kind of results file: files GPU runs wrote (frozen in tests/data), files
the binary writes here without a GPU, and files that are not results at all."""
import gzip
import json
import subprocess

import pytest

import kernlab
from kernlab.read import CSV_COLUMNS


def results_fixtures(fixtures):
    return sorted((fixtures / "results").rglob("*.json.gz"))


def test_a_tunes_export_file(fixtures):
    df = kernlab.read(fixtures / "results" / "2026-11-23-h100-tune" / "matmul_space.best.json.gz")
    assert df.attrs["kind"] == "export" and len(df) == 1
    assert df.BLOCK.iloc[0] == 128 and df.median_us.iloc[0] > 0


def test_every_results_fixture_reads_with_the_csv_columns(fixtures):
    files = [f for f in results_fixtures(fixtures) if ".best." not in f.name]
    assert len(files) >= 8
    for path in files:
        with gzip.open(path, "rt") as f:
            j = json.load(f)
        df = kernlab.read(path)
        assert len(df) == len(j["records"]), path
        assert list(df.columns[: len(CSV_COLUMNS)]) == CSV_COLUMNS, path
        passed = df[df.outcome == "passed"]
        assert (passed.median_us > 0).all(), path
        assert df.attrs["kind"] == "results"
        assert df.attrs["reproducibility"]["seed"] == j["reproducibility"]["seed"]
        # The record's own numbers, not recomputed ones.
        for i in (0, len(df) - 1) if len(df) else ():
            t = j["records"][i]["timing"]
            if t:
                assert df.median_us.iloc[i] == t["median_us"]
                assert df.ci_high_us.iloc[i] == t.get("ci_high_us")


def test_a_tunes_points_have_their_tunables_as_columns(fixtures):
    path = fixtures / "results" / "2026-11-23-h100-tune" / "matmul_space_block512.json.gz"
    df = kernlab.read(path)
    with gzip.open(path, "rt") as f:
        j = json.load(f)
    # A file from before records had `point`, rewritten as version 2 (the values from the name).
    first = next(r for r in j["records"] if "[" in r["variant"]["qualified_name"])
    row = df[df.qualified_name == first["variant"]["qualified_name"]].iloc[0]
    assert (row.BM, row.BN, row.VEC) == (64, 256, 1) or "BM=" not in first["variant"]["name"]
    assert f"BM={row.BM};BN={row.BN};" in first["variant"]["qualified_name"]
    assert "tuning" in df.attrs


def compile_only(binary, tmp_path, *outputs):
    args = [binary, "--compile-only", "--variant", "reduce5", "--block", "256,512"]
    for kind in outputs:
        args += [f"--{kind}", str(tmp_path / f"c.{kind}")]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert p.returncode == 0, p.stdout


def test_files_written_here_without_a_gpu(binary, tmp_path):
    # --compile-only records the compiles in the reproducibility block, and no rows.
    compile_only(binary, tmp_path, "json", "csv")
    a = kernlab.read(tmp_path / "c.json")
    b = kernlab.read(tmp_path / "c.csv")
    assert a.attrs["kind"] == "results" and b.attrs["kind"] == "csv"
    assert len(a) == len(b) == 0
    assert list(a.columns) == list(b.columns) == CSV_COLUMNS
    sources = a.attrs["reproducibility"]["sources"]
    assert any(s["variant"] == "reduce.reduce5" and s["error"] == "" for s in sources)


def test_resources_records(binary, tmp_path):
    # --resources writes a record per instantiation: the registers, shared memory and spills.
    args = [binary, "--resources", "--variant", "reduce5", "--block", "256,512", "--dtype", "int32",
            "--json", str(tmp_path / "r.json"), "--csv", str(tmp_path / "r.csv")]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert p.returncode == 0, p.stdout
    a = kernlab.read(tmp_path / "r.json")
    b = kernlab.read(tmp_path / "r.csv")
    five = a[a.variant == "reduce5"]
    assert sorted(five.block) == [256, 512] and (five.outcome == "skipped").all()
    assert (five.registers > 0).all() and (five.smem_bytes >= 0).all()
    assert (five.spill_store_bytes == 0).all() and (five.occupancy > 0).all()
    assert list(b.registers) == list(a.registers) and len(b) == len(a)


def test_jsonl_and_store_lines(tmp_path, fixtures):
    path = results_fixtures(fixtures)[0]
    with gzip.open(path, "rt") as f:
        records = json.load(f)["records"][:3]
    jsonl = tmp_path / "run.jsonl"
    jsonl.write_text("".join(json.dumps(dict(r, run={"seed": 7})) + "\n" for r in records)
                     + '{"variant": {"na')  # a last line cut short by a kill
    df = kernlab.read(jsonl)
    assert df.attrs["kind"] == "jsonl" and len(df) == 3 and df.attrs["lines_left_out"] == 1
    assert list(df.run_seed) == [7, 7, 7]
    store = tmp_path / "tuning.jsonl"
    store.write_text("".join(json.dumps({"key": f"k{i}", "provenance": {"device": "X"},
                                         "record": r}) + "\n" for i, r in enumerate(records)))
    df = kernlab.read(store)
    assert df.attrs["kind"] == "store" and list(df.key) == ["k0", "k1", "k2"]
    assert list(df.provenance_device) == ["X"] * 3


def test_t4(tmp_path):
    t4 = {"schema_version": "1.0.0", "metadata": {"timeunit": "milliseconds"},
          "results": [{"configuration": {"VEC": 4, "BLOCK": 256}, "objectives": ["time"],
                       "times": {"compilation_time": 12.0, "runtimes": [0.5], "validation": 1.0},
                       "invalidity": "correct", "correctness": 1,
                       "measurements": [{"name": "time", "value": 0.5, "unit": "ms"},
                                        {"name": "variant", "value": "reduce.t[VEC=4]",
                                         "unit": ""}]},
                      {"configuration": {"VEC": 8, "BLOCK": 256}, "objectives": ["time"],
                       "times": {"compilation_time": 0, "runtimes": [], "validation": 0},
                       "invalidity": "compile", "correctness": 1,
                       "measurements": [{"name": "error", "value": "x.cu:3: error",
                                         "unit": ""}]}]}
    path = tmp_path / "t.t4"
    path.write_text(json.dumps(t4))
    df = kernlab.read(path)
    assert df.attrs["kind"] == "t4" and list(df.VEC) == [4, 8]
    assert df.time.iloc[0] == 0.5 and df.invalidity.iloc[1] == "compile"


@pytest.mark.parametrize("text, why", [
    ("", "empty"),
    ('{"format": "kernlab-results", "version": 3, "records": []}', "version 3"),
    ('{"format": "kernlab-results", "version": 1, "records": []}', "results_v1_to_v2.py"),
    ('{"a": 1}', "not a kernlab results"),
    ("x,y,z\n1,2,3\n", "neither JSON nor kernlab's --csv"),
])
def test_what_is_not_a_results_file_is_an_error_naming_it(tmp_path, text, why):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=why) as e:
        kernlab.read(path)
    assert str(path) in str(e.value)
