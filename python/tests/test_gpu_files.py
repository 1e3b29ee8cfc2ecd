"""kernlab.read on every kind of file a real GPU run writes (scripts/gpu_python_fixtures.sh on an
H200, frozen in tests/data/python): the same rows and numbers whichever file they come from."""
import pytest

import kernlab


@pytest.fixture
def data(fixtures):
    return fixtures / "python"


def key(df):
    return list(zip(df.variant, df.block, df.dtype, df["size"]))


def test_a_sweeps_json_csv_and_jsonl_hold_the_same_rows(data):
    j = kernlab.read(data / "sweep.json.gz")
    c = kernlab.read(data / "sweep.csv.gz")
    lines = kernlab.read(data / "sweep.jsonl.gz")
    assert (j.attrs["kind"], c.attrs["kind"], lines.attrs["kind"]) == ("results", "csv", "jsonl")
    assert len(j) == 16 and (j.outcome == "passed").all()
    assert key(j) == key(c)
    assert sorted(key(j)) == sorted(key(lines))
    assert list(c.median_us) == pytest.approx(list(j.median_us), rel=1e-9)
    assert list(c.ci_high_us) == pytest.approx(list(j.ci_high_us), rel=1e-9)
    assert set(j.variant) == {"reduce5", "cub"} and set(j["size"]) == {1 << 20, 1000003}
    assert j.attrs["reproducibility"]["device"]["name"] == "NVIDIA H200"
    assert (lines.run_seed == 12345).all()


def test_a_tunes_files_agree_on_its_points(data):
    j = kernlab.read(data / "tune.json.gz")
    t4 = kernlab.read(data / "tune.t4.gz")
    store = kernlab.read(data / "store.jsonl.gz")
    lines = kernlab.read(data / "tune.jsonl.gz")
    c = kernlab.read(data / "tune.csv.gz")
    export = kernlab.read(data / "tune.best.json.gz")
    points = j[j.qualified_name.str.startswith("reduce.reduce_tunable[")]
    assert len(points) == len(t4) == len(store) == 12
    assert len(lines) == len(j) == len(c) == 13  # and the library's row, cub
    tunables = ["VEC", "UNROLL", "ACC", "HINT"]
    assert str(points.VEC.dtype) == "Int64"
    as_json = sorted(tuple(int(v) for v in r) + (b,) for r, b in
                     zip(points[tunables].itertuples(index=False), points.block))
    as_t4 = sorted(tuple(int(v) for v in r) for r in
                   t4[tunables + ["BLOCK"]].itertuples(index=False))
    assert as_json == as_t4
    assert (t4.invalidity == "correct").all()
    # T4's time is kernlab's median, in ms (a point's name leaves its block out).
    by_point = dict(zip(zip(points.qualified_name, points.block), points.median_us))
    for name, block, ms in zip(t4.variant, t4.BLOCK, t4.time):
        assert ms * 1000 == pytest.approx(by_point[(name, block)], rel=1e-9)
    # The export's best point is one of the points, with its median.
    best = export.iloc[0]
    row = points[(points.VEC == best.VEC) & (points.UNROLL == best.UNROLL) &
                 (points.ACC == best.ACC) & (points.HINT == best.HINT) &
                 (points.block == best.BLOCK)]
    assert len(row) == 1 and row.median_us.iloc[0] == pytest.approx(best.median_us)
    assert best.median_us == points.median_us.min()
    assert "tuning" in j.attrs and store.key.str.len().min() > 0
