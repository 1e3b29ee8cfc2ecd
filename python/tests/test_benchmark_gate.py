"""The test that kernlab_add_benchmark() registers (cmake/kernlab_benchmark.sh): it skips without
a GPU, passes when nothing changed, and fails when a row regressed beyond the threshold."""
import json
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
GATE = ROOT / "cmake" / "kernlab_benchmark.sh"
ARGS = ["--variant", "reduce5", "--block", "256", "--size", "2^20", "--dtype", "int32"]


def gate(binary, baseline, threshold, out):
    return subprocess.run(["sh", str(GATE), binary, str(baseline), str(threshold), str(out), *ARGS],
                          capture_output=True, text=True)


def test_the_gate_skips_without_a_gpu_saying_so(binary, tmp_path):
    from conftest import gpu_missing
    if not gpu_missing():
        return  # the GPU test below runs it for real
    done = gate(binary, ROOT / "tests" / "fuzz" / "corpus" / "results" / "passed_with_matmul.json", 3,
                tmp_path / "new.json")
    assert done.returncode == 0 and "kernlab_add_benchmark: skipped: no CUDA driver/device" in done.stdout


def test_gpu_the_gate_passes_unchanged_and_fails_a_planted_regression(binary, gpu, tmp_path):
    baseline = tmp_path / "baseline.json"
    made = subprocess.run([binary, *ARGS, "--json", str(baseline)], capture_output=True, text=True)
    assert made.returncode == 0, made.stdout + made.stderr
    same = gate(binary, baseline, 50, tmp_path / "same.json")
    assert same.returncode == 0, same.stdout + same.stderr
    # A baseline twice as fast as the code: every row of the new run is a regression.
    fast = json.loads(baseline.read_text())
    for r in fast["records"]:
        if r["timing"]:
            for key in ("median_us", "min_us", "max_us", "mean_us", "ci_low_us", "ci_high_us"):
                r["timing"][key] /= 2
    faster = tmp_path / "faster.json"
    faster.write_text(json.dumps(fast))
    regressed = gate(binary, faster, 3, tmp_path / "regressed.json")
    assert regressed.returncode == 1, regressed.stdout + regressed.stderr
    assert "regressed against" in regressed.stderr
