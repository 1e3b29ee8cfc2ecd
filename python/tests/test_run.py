"""kernlab.run and kernlab.tune: keyword arguments to the command line, and the binary's results
or its error."""
import pytest

import kernlab
from kernlab.run import options


def test_keywords_become_options_in_order():
    assert options({"variant": "reduce5", "block": [256, 512], "size": "2^24",
                    "placement_workers": 1, "compile_only": True, "fresh": False,
                    "seed": None}) == ["--variant", "reduce5", "--block", "256,512", "--size",
                                       "2^24", "--placement-workers", "1", "--compile-only"]


def test_run_returns_the_records(binary):
    df = kernlab.run(binary=binary, compile_only=True, variant="reduce5", block=[128, 1024])
    assert df.attrs["returncode"] == 0 and "reduce.reduce5" in df.attrs["output"]
    sources = df.attrs["reproducibility"]["sources"]
    assert [s["variant"] for s in sources if s["error"] == ""][:1] == ["reduce.reduce5"]


def test_an_error_raises_with_kernlabs_message(binary):
    with pytest.raises(kernlab.KernlabError, match="unknown variant 'no_such_variant'") as e:
        kernlab.run(binary=binary, compile_only=True, variant="no_such_variant")
    assert e.value.returncode == 2


def test_tune_of_an_unknown_variant_raises(binary):
    with pytest.raises(kernlab.KernlabError, match="no_such_tunable") as e:
        kernlab.tune("no_such_tunable", binary=binary, size="2^20")
    assert e.value.command[1:4] == ["tune", "--variant", "no_such_tunable"]


def test_no_binary_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("KERNLAB", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(FileNotFoundError, match="kernlab not found"):
        kernlab.find_binary()
