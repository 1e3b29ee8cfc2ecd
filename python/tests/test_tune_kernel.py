"""kernlab.tune_kernel: Kernel Tuner's tune_kernel. The generated folder is checked with the
binary's --list and --compile-only (no GPU); the whole tune where there is a GPU."""
import json
import subprocess

import numpy as np
import pytest

import kernlab
from conftest import gpu_missing
from kernlab.tune_kernel import (add_metrics, callable_restriction, kernel_header, results_of,
                                 translate_restriction, write_family)

# Kernel Tuner's README example, as it is there.
kernel_string = """
__global__ void vector_add(float *c, float *a, float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i<n) {
        c[i] = a[i] + b[i];
    }
}
"""


def vector_add_arguments(size=10000):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(size).astype(np.float32)
    b = rng.standard_normal(size).astype(np.float32)
    c = np.zeros_like(b)
    n = np.int32(size)
    return [c, a, b, n], [a + b, None, None, None]


TUNE_PARAMS = {"block_size_x": [32, 64, 128, 256, 512, 1024]}


def kernlab_cmd(binary, root, *args):
    p = subprocess.run([binary, "--kernels-dir", str(root), "--no-cache", *args],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def test_vector_add_folder_lists_and_compiles_every_point(binary, tmp_path):
    args, answer = vector_add_arguments()
    write_family(tmp_path / "kt_vector_add", "vector_add", kernel_string, 10000, args,
                 TUNE_PARAMS, answer=answer)
    for f in ("family.toml", "reference.cu", "vector_add.cu", "arg0.npy", "arg1.npy", "arg2.npy"):
        assert (tmp_path / "kt_vector_add" / f).exists()
    assert np.array_equal(np.load(tmp_path / "kt_vector_add" / "arg1.npy"), args[1])
    # The answer is a file of the checked buffer's expected values, of any size.
    assert np.array_equal(np.load(tmp_path / "kt_vector_add" / "answer0.npy"), answer[0])
    assert 'expected = { arg0 = "answer0.npy" }' in \
        (tmp_path / "kt_vector_add" / "family.toml").read_text()
    rc, out = kernlab_cmd(binary, tmp_path, "--list", "--family", "kt_vector_add",
                          "--variant", "vector_add")
    assert rc == 0, out
    for v in TUNE_PARAMS["block_size_x"]:
        assert f"kt_vector_add.vector_add[block_size_x={v}]" in out
    rc, out = kernlab_cmd(binary, tmp_path, "--compile-only", "--family", "kt_vector_add",
                          "--variant", "vector_add", "--block", "all")
    assert rc == 0, out
    assert "kt_vector_add.reference" in out
    for v in TUNE_PARAMS["block_size_x"]:
        line = next(l for l in out.splitlines() if f"[block_size_x={v}]" in l)
        assert line.rstrip().endswith("ok"), line


def test_2d_restrictions_and_grid_div_compile(binary, tmp_path):
    src = """
__global__ void scale2d(float *out, const float *in, int w, int h) {
    int x = blockIdx.x * block_size_x * tile_x + threadIdx.x;
    int y = blockIdx.y * block_size_y + threadIdx.y;
    for (int t = 0; t < tile_x; t++) {
        int xx = x + t * block_size_x;
        if (xx < w && y < h) out[y * w + xx] = 2.0f * in[y * w + xx];
    }
}
"""
    w, h = 300, 200
    inp = np.arange(w * h, dtype=np.float32)
    tp = {"block_size_x": [16, 32, 64], "block_size_y": [1, 2, 4, 8], "tile_x": [1, 2, 4]}
    path = write_family(tmp_path / "kt_scale2d", "scale2d", src, (w, h),
                        [np.zeros_like(inp), inp, np.int32(w), np.int32(h)], tp,
                        restrictions=["block_size_x * block_size_y >= 64",
                                      "tile_x <= 2 or block_size_x == 16"],
                        answer=[2 * inp, None, None, None],
                        grid_div_x=["block_size_x", "tile_x"])
    header = open(path).read()
    assert "require:    BLOCK == block_size_x * block_size_y * 1; " \
           "((block_size_x * block_size_y) >= 64); ((tile_x <= 2) || (block_size_x == 16))" \
           in header
    assert "grid_dims:  ceil_div(PROBLEM_X, (block_size_x) * (tile_x)), " \
           "ceil_div(PROBLEM_Y, (block_size_y))" in header
    assert "block_dims: block_size_x, block_size_y, 1" in header
    rc, out = kernlab_cmd(binary, tmp_path, "--list", "--family", "kt_scale2d", "--variant",
                          "scale2d")
    assert rc == 0, out
    listed = [l for l in out.splitlines() if l.startswith("kt_scale2d.scale2d[")]
    expected = [(x, y, t) for x in tp["block_size_x"] for y in tp["block_size_y"]
                for t in tp["tile_x"] if x * y >= 64 and (t <= 2 or x == 16)]
    assert len(listed) == len(expected), out
    rc, out = kernlab_cmd(binary, tmp_path, "--compile-only", "--family", "kt_scale2d",
                          "--variant", "scale2d", "--block", "all")
    assert rc == 0, out
    assert sum(1 for l in out.splitlines() if l.startswith("kt_scale2d.scale2d[")
               and l.rstrip().endswith("ok")) == len(expected), out


def test_a_restriction_function_becomes_a_condition(binary, tmp_path):
    tp = {"block_size_x": [32, 64, 128, 256]}
    args, _ = vector_add_arguments(1000)
    path = write_family(tmp_path / "kt_vector_add", "vector_add", kernel_string, 1000, args, tp,
                        restrictions=lambda p: p["block_size_x"] in (64, 256))
    assert "(block_size_x == 64) || (block_size_x == 256)" in open(path).read()
    rc, out = kernlab_cmd(binary, tmp_path, "--list", "--family", "kt_vector_add", "--variant",
                          "vector_add")
    assert rc == 0, out
    listed = sorted(l.split()[0] for l in out.splitlines()
                    if l.startswith("kt_vector_add.vector_add["))
    assert listed == ["kt_vector_add.vector_add[block_size_x=256]",
                      "kt_vector_add.vector_add[block_size_x=64]"]
    # the shorter of the two lists: the refused point
    assert callable_restriction(lambda p: p["block_size_x"] != 32, tp) == \
        "!((block_size_x == 32))"


def test_translate_restriction():
    names = ["a", "b"]
    assert translate_restriction("a*b <= 1024", names) == "((a * b) <= 1024)"
    assert translate_restriction("a // 2 % b == 0 and not b > 4", names) == \
        "((((a / 2) % b) == 0) && !((b > 4)))"
    assert translate_restriction("1 < a <= b", names) == "((1 < a) && (a <= b))"
    assert translate_restriction("min(a, b, 8) == a or True", names) == \
        "((min(min(a, b), 8) == a) || 1)"
    for bad, says in [("a / 2 == 1", "true division"), ("a ** 2 < 9", "operator"),
                      ("c > 1", "unknown name 'c'"), ("a > 1.5", "whole number"),
                      ("a in [1, 2]", "comparison"), ("a >", "not a Python expression")]:
        with pytest.raises(ValueError, match=says):
            translate_restriction(bad, names)


def test_default_block_is_256_and_grid_div_empty_is_no_division():
    h = kernel_header("f", "k", (1000, 10), {"items": [1, 2]}, grid_div_x=["items"],
                      grid_div_y=[])
    assert "entry:      k\n" in h
    assert "defines:    items; block_size_x = 256; block_size_y = 1; block_size_z = 1; " \
        "kernel_tuner = 1\n" in h
    assert "blocks:     256\n" in h
    assert "require" not in h
    assert "grid_dims:  ceil_div(PROBLEM_X, (items)), ceil_div(PROBLEM_Y, 1)" in h


def test_block_size_names(binary, tmp_path):
    src = kernel_string.replace("block_size_x", "bx")
    args, answer = vector_add_arguments(1000)
    path = write_family(tmp_path / "kt_vector_add", "vector_add", src, 1000, args,
                        {"bx": [64, 128]}, answer=answer, block_size_names=["bx"])
    assert "defines:    bx; block_size_y = 1; block_size_z = 1; kernel_tuner = 1\n" in \
        open(path).read()
    rc, out = kernlab_cmd(binary, tmp_path, "--compile-only", "--family", "kt_vector_add",
                          "--variant", "vector_add", "--block", "all")
    assert rc == 0, out


@pytest.mark.parametrize("change, error, says", [
    (lambda a: a.__setitem__(3, np.float32(1.5)), ValueError, "float32 is not supported"),
    (lambda a: a.__setitem__(1, a[1].astype(np.complex64)), ValueError, "complex64"),
    (lambda a: a.__setitem__(3, "n"), ValueError, "str is not supported"),
])
def test_unsupported_arguments_are_clear_errors(tmp_path, change, error, says):
    args, _ = vector_add_arguments(100)
    change(args)
    with pytest.raises(error, match=says):
        write_family(tmp_path / "f", "vector_add", kernel_string, 100, args, TUNE_PARAMS)


def test_other_unsupported_inputs_are_clear_errors(tmp_path):
    args, answer = vector_add_arguments(100)
    with pytest.raises(ValueError, match="no `__global__ void nope\\(`"):
        write_family(tmp_path / "f", "nope", kernel_string, 100, args, TUNE_PARAMS)
    with pytest.raises(ValueError, match="vector_add is a template"):
        write_family(tmp_path / "f", "vector_add", "template <int X>\n" + kernel_string.strip(),
                     100, args, TUNE_PARAMS)
    with pytest.raises(ValueError, match="not a whole number"):
        write_family(tmp_path / "f", "vector_add", kernel_string, 100, args,
                     {"block_size_x": [32], "f": [0.5]})
    with pytest.raises(ValueError, match="problem_size"):
        write_family(tmp_path / "f", "vector_add", kernel_string, "n", args, TUNE_PARAMS)
    with pytest.raises(ValueError, match="answer has 2 entries"):
        write_family(tmp_path / "f", "vector_add", kernel_string, 100, args, TUNE_PARAMS,
                     answer=answer[:2])
    with pytest.raises(ValueError, match="strategy 'nope'.*exhaustive, random"):
        kernlab.tune_kernel("vector_add", kernel_string, 100, args, TUNE_PARAMS, strategy="nope")
    with pytest.raises(ValueError, match="kernlab compiles CUDA only"):
        kernlab.tune_kernel("vector_add", kernel_string, 100, args, TUNE_PARAMS, lang="OpenCL")


def test_kernel_source_may_be_a_path(binary, tmp_path):
    cu = tmp_path / "vector_add.cu"
    cu.write_text(kernel_string)
    args, answer = vector_add_arguments(1000)
    path = write_family(tmp_path / "k" / "kt_vector_add", "vector_add", str(cu), 1000, args,
                        TUNE_PARAMS, answer=answer)
    assert open(path).read().endswith("*/\n" + kernel_string)


def test_tunables_are_macros_with_the_points_values(binary, tmp_path):
    """As under Kernel Tuner's #defines: the #ifndef defaults are skipped, an #if on a tunable (or
    on a macro over one) sees the point's value, a __device__ helper may use a tunable, an untuned
    block dimension is its constant, and kernel_tuner is 1. The #error proves the value arrives:
    exactly the points with tile 4 fail."""
    src = """
#ifndef block_size_x
    #define block_size_x 64
#endif
#ifndef tile
    #define tile 1
#endif
#define STEP (block_size_x * tile)
#if STEP > 512 || block_size_y != 1 || kernel_tuner != 1
#error "STEP, block_size_y or kernel_tuner"
#endif
#if tile == 4
#error "tile is 4 here"
#endif
__device__ float twice(float x) { return tile > 0 ? 2.0f * x : 0.0f; }
__global__ void scale(float *out, const float *in, int n) {
    int i = blockIdx.x * STEP + threadIdx.x;
    for (int t = 0; t < tile; t++)
        if (i + t * block_size_x < n) out[i + t * block_size_x] = twice(in[i + t * block_size_x]);
}
"""
    n = 1000
    inp = np.arange(n, dtype=np.float32)
    tp = {"block_size_x": [32, 128], "tile": [1, 4]}
    path = write_family(tmp_path / "kt_scale", "scale", src, n,
                        [np.zeros_like(inp), inp, np.int32(n)], tp,
                        answer=[2 * inp, None, None], grid_div_x=["block_size_x", "tile"])
    text = open(path).read()
    assert "entry:      scale\n" in text
    assert "defines:    block_size_x; tile; block_size_y = 1; block_size_z = 1; kernel_tuner = 1\n" \
        in text
    assert text.endswith(src)  # the source as it is, after the header
    rc, out = kernlab_cmd(binary, tmp_path, "tune", "--compile-only", "--family", "kt_scale",
                          "--variant", "scale")
    assert rc == 1, out
    status = {l.split()[0]: l.split()[-1] for l in out.splitlines()
              if l.startswith("kt_scale.scale[")}
    assert status == {"kt_scale.scale[block_size_x=32;tile=1]": "ok",
                      "kt_scale.scale[block_size_x=32;tile=4]": "FAILED",
                      "kt_scale.scale[block_size_x=128;tile=1]": "ok",
                      "kt_scale.scale[block_size_x=128;tile=4]": "FAILED"}, out
    assert "tile is 4 here" in out and "STEP, block_size_y" not in out, out


def fake_kernlab(tmp_path):
    """A kernlab that exits 3 (no GPU) at once: a call that gets to it passed every check, and its
    KernlabError names the command line."""
    path = tmp_path / "fake-kernlab"
    path.write_text("#!/bin/sh\nexit 3\n")
    path.chmod(0o755)
    return str(path)


def test_kernel_tuner_arguments(tmp_path):
    args, answer = vector_add_arguments(100)
    call = dict(kernel_name="vector_add", kernel_source=kernel_string, problem_size=100,
                arguments=args, tune_params=TUNE_PARAMS, binary=fake_kernlab(tmp_path))
    # iterations is kernlab's --min-samples; Kernel Tuner's defaults (lang=None, platform=0,
    # cmem_args=None, ...) ask for nothing and pass
    with pytest.raises(kernlab.KernlabError) as e:
        kernlab.tune_kernel(**call, iterations=32, lang=None, platform=0, cmem_args=None,
                            verify=None, quiet=True, metrics={"x": "time * 2"})
    assert e.value.returncode == 3
    assert e.value.command[e.value.command.index("--min-samples") + 1] == "32"
    # one kernlab does not take is refused before anything is written
    for name, value in [("cmem_args", {"d_filter": args[1]}), ("verify", lambda a, b: True),
                        ("compiler_options", ["-O3"]), ("platform", 1)]:
        with pytest.raises(ValueError, match=f"{name}=: kernlab.tune_kernel does not take it"):
            kernlab.tune_kernel(**call, workdir=tmp_path / "w", **{name: value})
        assert not (tmp_path / "w").exists()
    with pytest.raises(ValueError, match="metrics\\['x'\\]: a function"):
        kernlab.tune_kernel(**call, metrics={"x": 3})


def test_metrics_are_added_in_order():
    results = [{"block_size_x": 64, "time": 2.0}, {"block_size_x": 128, "time": 4.0}]
    add_metrics(results, {"GFLOPs": lambda p: 8 / p["time"], "twice": "2 * GFLOPs",
                          "per_thread": "time / block_size_x"})
    assert results[0] == {"block_size_x": 64, "time": 2.0, "GFLOPs": 4.0, "twice": 8.0,
                          "per_thread": 2.0 / 64}
    assert results[1]["twice"] == 4.0
    assert add_metrics(results, None) is results


@pytest.mark.parametrize("lang", ["CUDA", "cupy", "Cupy", "nvcuda"])
def test_a_run_without_a_gpu_raises_kernlabs_error(binary, tmp_path, lang):
    """Kernel Tuner's CUDA backends (nvcc, CuPy, NVIDIA's bindings) all compile CUDA source:
    kernlab takes each `lang` and gets as far as needing the GPU."""
    if not gpu_missing():
        pytest.skip("a GPU is here")
    args, answer = vector_add_arguments(1000)
    with pytest.raises(kernlab.KernlabError) as e:
        kernlab.tune_kernel("vector_add", kernel_string, 1000, args, TUNE_PARAMS, answer=answer,
                            binary=binary, workdir=tmp_path, lang=lang)
    assert e.value.returncode == 3
    assert (tmp_path / "kt_vector_add" / "vector_add.cu").exists()  # kept for the user


def test_vector_add_tunes_on_the_gpu(binary, gpu, tmp_path):
    """Kernel Tuner's README script with `import kernlab` for `import kernel_tuner`."""
    size = 10000000
    a = np.random.randn(size).astype(np.float32)
    b = np.random.randn(size).astype(np.float32)
    c = np.zeros_like(b)
    n = np.int32(size)
    args = [c, a, b, n]
    tune_params = dict()
    tune_params["block_size_x"] = [32 * i for i in range(1, 33)]
    # problem_size a numpy int, as in Kernel Tuner's examples that then json.dump the results
    results, env = kernlab.tune_kernel("vector_add", kernel_string, n, args, tune_params,
                                       binary=binary, cache_dir=str(tmp_path / "cache"))
    assert sorted(r["block_size_x"] for r in results) == tune_params["block_size_x"]
    for r in results:
        assert r["time"] > 0 and r["times"] and r["ci_low_ms"] <= r["time"] <= r["ci_high_ms"]
    assert env["device_name"] and env["problem_size"] == size and env["command"]
    assert json.loads(json.dumps([results, env]))[1]["problem_size"] == size

    # with an answer of millions of elements (Kernel Tuner's vector_add_cupy.py checks 10^7; the
    # answer is a .npy file of [reference] expected), and a wrong kernel fails its points
    size = 3000017
    args, answer = vector_add_arguments(size)
    results, _ = kernlab.tune_kernel("vector_add", kernel_string, size, args,
                                     {"block_size_x": [64, 256]}, answer=answer, binary=binary,
                                     strategy="random_sample", cache_dir=str(tmp_path / "cache"),
                                     iterations=20,
                                     metrics={"GB/s": lambda p: 12 * size / 1e6 / p["time"]})
    assert sorted(r["block_size_x"] for r in results) == [64, 256]
    assert all(r["GB/s"] == 12 * size / 1e6 / r["time"] for r in results)
    wrong = kernel_string.replace("a[i] + b[i]", "a[i] - b[i]")
    # every point wrong: kernlab exits 1, and no point is in the results
    results, _ = kernlab.tune_kernel("vector_add", wrong, size, args,
                                     {"block_size_x": [64, 256]}, answer=answer, binary=binary,
                                     cache_dir=str(tmp_path / "cache"))
    assert results == []


def test_kernel_tuners_util_helpers():
    """kernlab.util: what Kernel Tuner's examples import from kernel_tuner.util, on results of
    Kernel Tuner's shape."""
    from kernlab import util
    results = [{"block_size_x": 64, "time": 1.5}, {"block_size_x": 128, "time": 0.75},
               {"block_size_x": 256, "time": float("nan")}, {"block_size_x": 512}]
    assert util.get_best_config(results, "time") == {"block_size_x": 128, "time": 0.75}
    assert util.get_best_config(results, "time", True) == {"block_size_x": 64, "time": 1.5}
    with pytest.raises(ValueError, match="no results"):
        util.get_best_config([], "time")
    assert util.get_config_string({"block_size_x": 128, "time": 0.74999, "n": 3},
                                  units={"time": "ms"}) == "block_size_x=128, time=0.750ms, n=3"
    assert util.get_config_string({"a": 1, "b": 2}, keys=["b"]) == "b=2"


def test_a_division_in_grid_div_is_taken_where_it_is_exact():
    """Kernel Tuner's spmv divides the grid by `block_size_x/threads_per_row`: true division in
    Python, whole at every point of its space, so it is taken as kernlab's `//`. Where some point
    would make a fraction it is refused, as in a restriction."""
    tp = {"block_size_x": [32, 64, 96], "threads_per_row": [1, 32]}
    h = kernel_header("f", "k", 1000, tp, grid_div_x=["block_size_x/threads_per_row"])
    # kernlab's `/` is integer division
    assert "grid_dims:  ceil_div(PROBLEM_X, ((block_size_x / threads_per_row)))" in h
    with pytest.raises(ValueError, match="true division"):
        kernel_header("f", "k", 1000, {"block_size_x": [32, 48], "t": [1, 32]},
                      grid_div_x=["block_size_x/t"])


def test_a_declaration_before_the_kernel_is_not_a_second_kernel(binary, tmp_path):
    """Kernel Tuner's zeromeanfilter.cu declares its kernels in an extern "C" block before
    defining them: only the definition counts, and extern "C" kernels are named as they are."""
    src = ('extern "C" {\n    __global__ void scale(float *out, const float *in, int n);\n}\n'
           + 'extern "C" __global__ void scale(float *out, const float *in, int n) {\n'
           + "    int i = blockIdx.x * block_size_x + threadIdx.x;\n"
           + "    if (i < n) out[i] = 2.0f * in[i];\n}\n")
    n = 100
    inp = np.arange(n, dtype=np.float32)
    write_family(tmp_path / "kt_scale", "scale", src, n, [np.zeros_like(inp), inp, np.int32(n)],
                 {"block_size_x": [32, 64]}, answer=[2 * inp, None, None])
    rc, out = kernlab_cmd(binary, tmp_path, "tune", "--compile-only", "--family", "kt_scale",
                          "--variant", "scale")
    assert rc == 0, out
    with pytest.raises(ValueError, match="more than once"):
        write_family(tmp_path / "f", "scale", src + src[src.index("extern \"C\" __global__"):],
                     n, [np.zeros_like(inp), inp, np.int32(n)], {"block_size_x": [32]})


def test_an_empty_array_is_one_unchecked_element(binary, tmp_path):
    """Kernel Tuner takes an empty array (its spmv example makes one under numpy 2, where
    int32 * int overflows to nnz = 0); kernlab's buffer gets one zero element, not checked."""
    args, answer = vector_add_arguments(100)
    args[1] = np.zeros(0, np.float32)
    answer[1] = np.zeros(0, np.float32)
    write_family(tmp_path / "kt_vector_add", "vector_add", kernel_string, 100, args, TUNE_PARAMS,
                 answer=answer)
    assert np.array_equal(np.load(tmp_path / "kt_vector_add" / "arg1.npy"), np.zeros(1))
    toml = (tmp_path / "kt_vector_add" / "family.toml").read_text()
    assert 'name = "arg1"\nrole = "in"\ntype = "float32"\ncount = "1"' in toml
    rc, out = kernlab_cmd(binary, tmp_path, "--compile-only", "--family", "kt_vector_add",
                          "--variant", "vector_add", "--block", "all")
    assert rc == 0, out


def test_the_results_are_json_with_numpy_problem_sizes():
    """Kernel Tuner's expdist example json.dump()s what tune_kernel returned; its problem size
    is a tuple of numpy.int32."""
    import pandas as pd
    size = np.int32(2000)
    results, env = results_of(pd.DataFrame(), {"block_size_x": [32]}, (size, size))
    assert env["problem_size"] == (2000, 2000)
    assert json.loads(json.dumps([results, env]))[1]["problem_size"] == [2000, 2000]


# Kernel Tuner's examples/cuda-c++/vector_add.py: a template kernel named with its arguments.
template_string = """
template<typename T>
__global__ void vector_add(T *c, T *a, T *b, int n) {
    auto i = blockIdx.x * block_size_x + threadIdx.x;
    if (i<n) {
        c[i] = a[i] + b[i];
    }
}
"""


def test_a_template_kernel_named_with_its_arguments_compiles(binary, tmp_path):
    args, answer = vector_add_arguments(1000)
    folder = tmp_path / "kt_vector_add_float"
    path = write_family(folder, "vector_add<float>", template_string, 1000, args, TUNE_PARAMS,
                        answer=answer)
    assert path.endswith("vector_add.cu")
    assert "entry:      vector_add<float>" in (folder / "vector_add.cu").read_text()
    rc, out = kernlab_cmd(binary, tmp_path, "--compile-only", "--family", "kt_vector_add_float",
                          "--variant", "vector_add", "--block", "all")
    assert rc == 0, out
    for v in TUNE_PARAMS["block_size_x"]:
        line = next(l for l in out.splitlines() if f"[block_size_x={v}]" in l)
        assert line.rstrip().endswith("ok"), line
    with pytest.raises(ValueError, match="vector_add is a template: name it with its template "
                                         "arguments, e.g. vector_add<float>"):
        write_family(tmp_path / "f", "vector_add", template_string, 1000, args, TUNE_PARAMS)
    with pytest.raises(ValueError, match="vector_add is not a template"):
        write_family(tmp_path / "f", "vector_add<float>", kernel_string, 1000, args, TUNE_PARAMS)
    with pytest.raises(ValueError, match="kernel_name 'vector add'"):
        write_family(tmp_path / "f", "vector add", kernel_string, 1000, args, TUNE_PARAMS)


class FakeCupyArray:
    """What kernlab.tune_kernel uses of a CuPy array: `__cuda_array_interface__` and `get()`."""
    def __init__(self, host):
        self.host = host
        self.__cuda_array_interface__ = {"shape": host.shape, "typestr": host.dtype.str}

    def get(self):
        return self.host.copy()


def test_gpu_arrays_are_copied_to_the_host_as_kernel_tuners_cupy_examples_pass_them(tmp_path):
    args, answer = vector_add_arguments(100)
    gpu_args = [FakeCupyArray(a) if isinstance(a, np.ndarray) else a for a in args]
    gpu_answer = [FakeCupyArray(answer[0])] + answer[1:]
    folder = tmp_path / "kt_vector_add"
    write_family(folder, "vector_add", kernel_string, 100, gpu_args, TUNE_PARAMS,
                 answer=gpu_answer)
    assert np.array_equal(np.load(folder / "arg1.npy"), args[1])
    assert np.array_equal(np.load(folder / "answer0.npy"), answer[0])
