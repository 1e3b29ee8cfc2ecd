import os
import pathlib
import sys

import pytest

# The package from this checkout, not an installed one.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def binary():
    path = os.environ.get("KERNLAB")
    if not path:
        pytest.skip("KERNLAB is not set: ctest sets it to the kernlab it built")
    return path


@pytest.fixture
def fixtures():
    return ROOT / "tests" / "data"
