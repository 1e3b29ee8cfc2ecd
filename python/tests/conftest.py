import ctypes
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


def gpu_missing():
    """Why there is no GPU to run on ("" when there is one): the driver is loaded and asked for
    its devices, as kernlab does."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        return f"no CUDA driver/device: {e}"
    count = ctypes.c_int(0)
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value < 1:
        return "no CUDA driver/device: the driver found no GPU"
    return ""


@pytest.fixture
def gpu():
    why = gpu_missing()
    if why:
        pytest.skip(why)
