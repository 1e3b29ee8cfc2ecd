"""kernlab.tune_kernel: Kernel Tuner's tune_kernel. The generated folder is checked with the
binary's --list and --compile-only (no GPU); the whole tune where there is a GPU."""
import subprocess

import numpy as np
import pytest

import kernlab
from conftest import gpu_missing
from kernlab.tune_kernel import (add_metrics, callable_restriction, check_preprocessor,
                                 kernel_header, translate_restriction, write_family)

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
    assert "entry:      k<256, 1, 1, items>" in h
    assert "blocks:     256\n" in h
    assert "require" not in h
    assert "grid_dims:  ceil_div(PROBLEM_X, (items)), ceil_div(PROBLEM_Y, 1)" in h


def test_block_size_names(binary, tmp_path):
    src = kernel_string.replace("block_size_x", "bx")
    args, answer = vector_add_arguments(1000)
    path = write_family(tmp_path / "kt_vector_add", "vector_add", src, 1000, args,
                        {"bx": [64, 128]}, answer=answer, block_size_names=["bx"])
    assert "entry:      vector_add<bx, 1, 1>" in open(path).read()
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
    with pytest.raises(ValueError, match="extern \"C\""):
        write_family(tmp_path / "f", "vector_add", 'extern "C" ' + kernel_string.strip(), 100,
                     args, TUNE_PARAMS)
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
    big = np.zeros(kernlab.tune_kernel.__globals__["MAX_ANSWER_ELEMENTS"] + 1, np.float32)
    with pytest.raises(NotImplementedError, match="answer=None"):
        write_family(tmp_path / "f", "vector_add", kernel_string, big.size,
                     [big, big, big, np.int32(big.size)], TUNE_PARAMS,
                     answer=[big, None, None, None])


def test_kernel_source_may_be_a_path(binary, tmp_path):
    cu = tmp_path / "vector_add.cu"
    cu.write_text(kernel_string)
    args, answer = vector_add_arguments(1000)
    path = write_family(tmp_path / "k" / "kt_vector_add", "vector_add", str(cu), 1000, args,
                        TUNE_PARAMS, answer=answer)
    assert open(path).read().endswith(
        "template <int block_size_x, int block_size_y, int block_size_z>\n"
        + kernel_string.lstrip("\n"))


def test_preprocessor_defaults_compile_and_an_if_on_a_tunable_is_refused(binary, tmp_path):
    """Kernel Tuner's kernels default their tunables with #ifndef (spmv.cu, pnpoly.cu): skipped,
    as under Kernel Tuner's #defines. An #if on a tunable would see 0 for every point: refused."""
    src = """
#ifndef block_size_x
    #define block_size_x 64
#endif
#ifndef tile
    #define tile 1
#endif
#define STEP (block_size_x * tile)
#ifdef tile
__global__ void scale(float *out, const float *in, int n) {
    int i = blockIdx.x * STEP + threadIdx.x;
    for (int t = 0; t < tile; t++)
        if (i + t * block_size_x < n) out[i + t * block_size_x] = 2.0f * in[i + t * block_size_x];
}
#endif
"""
    n = 1000
    inp = np.arange(n, dtype=np.float32)
    tp = {"block_size_x": [32, 128], "tile": [1, 4]}
    path = write_family(tmp_path / "kt_scale", "scale", src, n,
                        [np.zeros_like(inp), inp, np.int32(n)], tp,
                        answer=[2 * inp, None, None], grid_div_x=["block_size_x", "tile"])
    assert "#define block_size_x block_size_x\n" in open(path).read()
    rc, out = kernlab_cmd(binary, tmp_path, "--compile-only", "--family", "kt_scale",
                          "--variant", "scale", "--block", "all")
    assert rc == 0, out
    assert sum(1 for l in out.splitlines() if l.startswith("kt_scale.scale[")
               and l.rstrip().endswith("ok")) == 4, out

    names = ["block_size_x", "block_size_y", "block_size_z", "tile"]
    check_preprocessor(src + "#if defined(tile) && OTHER > 1\n#endif\n", names)
    for bad, says in [("#if tile == 2\n", "line 1: `#if tile == 2` uses tile"),
                      ("\n#ifdef X\n#elif block_size_y > 1\n#endif\n", "line 3: .*block_size_y"),
                      ("#define RO (1 + \\\n  tile)\n#define USE RO\n#if USE /* a comment */\n",
                       "line 4: .*USE \\(a macro over the tunables\\)")]:
        with pytest.raises(ValueError, match=says):
            check_preprocessor(bad, names)
    with pytest.raises(ValueError, match="`#if STEP > 64` uses STEP"):
        write_family(tmp_path / "f", "scale", src + "#if STEP > 64\n#endif\n", n,
                     [np.zeros_like(inp), inp, np.int32(n)], tp)


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


def test_a_run_without_a_gpu_raises_kernlabs_error(binary, tmp_path):
    if not gpu_missing():
        pytest.skip("a GPU is here")
    args, answer = vector_add_arguments(1000)
    with pytest.raises(kernlab.KernlabError) as e:
        kernlab.tune_kernel("vector_add", kernel_string, 1000, args, TUNE_PARAMS, answer=answer,
                            binary=binary, workdir=tmp_path)
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
    results, env = kernlab.tune_kernel("vector_add", kernel_string, size, args, tune_params,
                                       binary=binary, cache_dir=str(tmp_path / "cache"))
    assert sorted(r["block_size_x"] for r in results) == tune_params["block_size_x"]
    for r in results:
        assert r["time"] > 0 and r["times"] and r["ci_low_ms"] <= r["time"] <= r["ci_high_ms"]
    assert env["device_name"] and env["problem_size"] == size and env["command"]

    # with an answer (a smaller problem: the answer goes into the reference's source), and a
    # wrong kernel fails its points
    small = 100000
    args, answer = vector_add_arguments(small)
    results, _ = kernlab.tune_kernel("vector_add", kernel_string, small, args,
                                     {"block_size_x": [64, 256]}, answer=answer, binary=binary,
                                     strategy="random_sample", cache_dir=str(tmp_path / "cache"),
                                     iterations=20,
                                     metrics={"GB/s": lambda p: 12 * small / 1e6 / p["time"]})
    assert sorted(r["block_size_x"] for r in results) == [64, 256]
    assert all(r["GB/s"] == 12 * small / 1e6 / r["time"] for r in results)
    wrong = kernel_string.replace("a[i] + b[i]", "a[i] - b[i]")
    # every point wrong: kernlab exits 1, and no point is in the results
    results, _ = kernlab.tune_kernel("vector_add", wrong, small, args,
                                     {"block_size_x": [64, 256]}, answer=answer, binary=binary,
                                     cache_dir=str(tmp_path / "cache"))
    assert results == []
