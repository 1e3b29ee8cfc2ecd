#!/usr/bin/env python3
"""Tests of kt_tune.py that need no GPU:  python3 bench/kernel_tuner/test_kt_tune.py

- the expression language: C's semantics on tricky cases, and the Python translation equal to
  them on random expressions (also with negative values);
- with a C++ compiler: the evaluator against kernlab's own (host/src/spec/expression.cpp);
- tunable values, and the fixtures' spaces (KERNLAB=build/kernlab: against kernlab --list);
- with numpy: the exact inputs against values printed by kernlab's generator;
- with kernel_tuner and numpy: its Searchspace, and a whole tuning of the fixture through
  tune_kernel with a simulated GPU backend (each launch computes the part of C its grid and
  block cover, so a wrong kernel name, block or grid shows as a wrong result).
"""

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import kt_tune as kt  # noqa: E402

FIXTURES = HERE / "fixture" / "matmul"
PY_BUILTINS = {"__builtins__": {"min": min, "max": max, "int": int, "abs": abs}}


def have(module):
    try:
        __import__(module)
        return True
    except Exception:  # noqa: BLE001
        return False


def c_value(text, env):
    return kt.c_eval(kt.parse_expr(text, list(env)), env, text)


def py_value(text, env, signs=None):
    tree = kt.parse_expr(text, list(env))
    return int(eval(kt.to_python(tree, {v: v for v in env}, signs), PY_BUILTINS, dict(env)))


def random_expr(rng, names, depth):
    if depth <= 0 or rng.random() < 0.25:
        return rng.choice([str(rng.randint(0, 9)), rng.choice(names)])
    r = rng.random()
    sub = lambda: random_expr(rng, names, depth - 1)  # noqa: E731
    if r < 0.35:
        op = rng.choice(["+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||"])
        return f"{sub()} {op} {sub()}" if rng.random() < 0.5 else f"({sub()}){op}({sub()})"
    if r < 0.45:
        return f"!{sub()}"
    if r < 0.55:
        return f"-{sub()}"
    if r < 0.7:
        return f"{sub()} ? {sub()} : {sub()}"
    if r < 0.85:
        return f"{rng.choice(['min', 'max', 'ceil_div'])}({sub()}, {sub()})"
    if r < 0.9:
        return f"sqrt({sub()})"
    return f"({sub()})"


class Expressions(unittest.TestCase):
    CASES = {
        "7 / 2": 3, "-7 / 2": -3, "7 / -2": -3, "-7 % 2": -1, "7 % -2": 1, "ceil_div(7, 2)": 4,
        "ceil_div(-7, 2)": -3, "ceil_div(8, 2)": 4, "!1 + 1": 1, "!0 == 0": 0, "2 && 3": 1,
        "0 || 5": 1, "1 || 0 && 0": 1, "(1 || 0) && 0": 0, "1 ? 2 : 0 ? 3 : 4": 2, "0 ? 2 : 0 ? 3 : 4": 4,
        "0 ? 1 / 0 : 5": 5, "1 || 1 / 0": 1, "0 && 1 / 0": 0, "sqrt(17)": 4, "sqrt(16)": 4,
        "min(3, -2)": -2, "max(A, 64)": 64, "-2 * -3": 6, "--3": 3, "10 - 2 - 3": 5, "2 * 3 % 4": 2,
        "100 / 10 / 5": 2, "A * B <= 4096": 1, "(A < B) + (B < A)": 1, "A != B ? A : B": 32,
        "B / A * A": 128, "A - B / 3": -10, "-(A - B) / 7": 13,
    }

    def test_c_semantics_and_translation(self):
        env = {"A": 32, "B": 128}
        for text, want in self.CASES.items():
            with self.subTest(text=text):
                self.assertEqual(c_value(text, env), want)
                self.assertEqual(py_value(text, env), want)  # no sign known: exact forms
        for text in ("A * B <= 4096", "B / A * A", "ceil_div(B, 3)", "B % 5 + A / 3"):
            # where both operands are known never negative, / and % become // and % as they are
            self.assertEqual(py_value(text, env, {"A": True, "B": True}), c_value(text, env))
            self.assertNotIn("abs", kt.to_python(kt.parse_expr(text, env), {"A": "A", "B": "B"}, {"A": True, "B": True}))

    def test_errors(self):
        env = {"A": 1}
        for text in ("1 < 2 == 1", "A = 1", "1 ? 5 : FOO", "1 / 0", "ceil_div(1, 0)", "sqrt(-1)", "min(1)",
                     "(1", "1 +", "1 & 1", "99999999999999", "A | 1"):
            with self.subTest(text=text), self.assertRaises(kt.ExprError):
                c_value(text, env)

    def test_random_translation(self):
        rng = random.Random(11)
        names = ["A", "B", "C"]
        agreed = 0
        for i in range(4000):
            text = random_expr(rng, names, 4)
            negative = i % 2 == 0
            env = {n: rng.randint(-6 if negative else 0, 9) for n in names}
            try:
                want = c_value(text, env)
            except kt.ExprError:
                continue
            signs = {n: not negative for n in names}
            with self.subTest(text=text, env=env):
                self.assertEqual(py_value(text, env, signs), want)
            agreed += 1
        self.assertGreater(agreed, 3000)

    @unittest.skipUnless(shutil.which("g++") and (kt.REPO / "host/src/spec/expression.cpp").is_file(),
                         "needs g++ and kernlab's sources")
    def test_against_kernlab_evaluator(self):
        harness = r'''
#include "spec/expression.hpp"
#include <iostream>
#include <map>
#include <string>
int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    const auto bar = line.rfind('|');
    std::map<std::string, std::int64_t> vars;
    std::string rest = line.substr(bar + 1);
    for (std::size_t p = 0; p < rest.size();) {
      auto c = rest.find(',', p);
      if (c == std::string::npos) c = rest.size();
      const std::string item = rest.substr(p, c - p);
      vars[item.substr(0, item.find('='))] = std::stoll(item.substr(item.find('=') + 1));
      p = c + 1;
    }
    try { std::cout << kl::evaluate(line.substr(0, bar), vars) << "\n"; }
    catch (const std::exception&) { std::cout << "error\n"; }
  }
}
'''
        with tempfile.TemporaryDirectory() as d:
            src, exe = Path(d) / "h.cpp", Path(d) / "h"
            src.write_text(harness)
            subprocess.run(["g++", "-std=c++17", "-O1", f"-I{kt.REPO / 'host/src'}", str(src),
                            str(kt.REPO / "host/src/spec/expression.cpp"), "-o", str(exe)], check=True)
            rng = random.Random(5)
            cases = []
            for i in range(3000):
                env = {n: rng.randint(-6 if i % 2 else 0, 9) for n in "ABC"}
                cases.append((random_expr(rng, list("ABC"), 4), env))
            lines = "".join(f"{t}|{','.join(f'{k}={v}' for k, v in e.items())}\n" for t, e in cases)
            out = subprocess.run([str(exe)], input=lines, capture_output=True, text=True, check=True).stdout.split()
        self.assertEqual(len(out), len(cases))
        for (text, env), theirs in zip(cases, out):
            try:
                mine = str(c_value(text, env))
            except kt.ExprError:
                mine = "error"
            self.assertEqual(mine, theirs, f"{text} at {env}")


class Values(unittest.TestCase):
    def test_lists_and_ranges(self):
        self.assertEqual(kt.tunable_values("1, 2, 4"), [1, 2, 4])
        self.assertEqual(kt.tunable_values("1 2  4"), [1, 2, 4])
        self.assertEqual(kt.tunable_values("1..8"), list(range(1, 9)))
        self.assertEqual(kt.tunable_values("32..1024 pow2"), [32, 64, 128, 256, 512, 1024])
        self.assertEqual(kt.tunable_values("3..100 pow2"), [4, 8, 16, 32, 64])
        self.assertEqual(kt.tunable_values("4..64 step 4"), list(range(4, 65, 4)))
        self.assertEqual(kt.tunable_values("4..66 step 4"), list(range(4, 65, 4)))
        for bad in ("1..", "8..1", "1..8 step 0", "1, 1", "1..8 pow2 x", "5..7 pow2", "1..5000", "x"):
            with self.subTest(bad=bad), self.assertRaises(kt.HeaderError):
                kt.tunable_values(bad)


class Spaces(unittest.TestCase):
    def load(self, name, shape=(4096, 4096, 4096)):
        h = kt.read_header(FIXTURES / f"{name}.cu")
        space = kt.build_space(h, shape)
        return h, space, kt.kt_problem(h, space)

    def test_fixtures(self):
        for name, configs, simple in (("ktfix", 80, False), ("ktrow", 39, True)):
            h, space, p = self.load(name)
            self.assertEqual(len(space["configs"]), configs)
            self.assertEqual(kt.check_translation(h, space, p), [])
            self.assertEqual(p["block_size_names"] is None, simple)
            for c in space["configs"]:
                self.assertEqual(kt.kt_name_for(p["kernel_name"], kt.kt_values(c, p)), c["name_expression"])
        h, space, p = self.load("ktfix")
        self.assertEqual(p["kernel_name"], "ktfix<block_size_x, BM, BN, BK, TM, TN, COLS>")
        c = space["configs"][0]
        self.assertEqual((c["kl_name"], c["block_size"], c["block"], c["grid"]),
                         ("ktfix[BM=32;BN=32;BK=8;TM=1;TN=4]", 256, [8, 32, 1], [128, 128, 1]))
        h, space, p = self.load("ktrow", (1000, 999, 37))
        self.assertEqual(space["configs"][0]["grid"], [8, 1000, 1])

    @unittest.skipUnless(os.environ.get("KERNLAB"), "set KERNLAB=path/to/kernlab to compare with its --list")
    def test_against_kernlab_list(self):
        for name in ("ktfix", "ktrow"):
            h, space, _ = self.load(name)
            rows, _ = kt.kernlab_list(os.environ["KERNLAB"], FIXTURES / f"{name}.cu", name)
            self.assertTrue(rows)
            self.assertEqual(kt.compare_kernlab_list(space, rows), [])

    def test_named_points_keep_kernlabs_names(self):
        # ktfix with two of its points named (points: over two lines, values in any order):
        # their configurations carry kernlab's name for them, the others file[...] as before.
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "matmul" / "ktnamed.cu"
            path.parent.mkdir()
            text = (FIXTURES / "ktfix.cu").read_text()
            text = text.replace("*/", 'points:     first(TN=4, TM=1, BK=8, BN=32, BM=32) "the first"\n'
                                      "points:     big(BM=128, BN=128, BK=8, TM=8, TN=8)\n*/", 1)
            path.write_text(text)
            h = kt.read_header(path)
            self.assertEqual([n for n, _ in h["points"]], ["first", "big"])
            space = kt.build_space(h, (4096, 4096, 4096))
            names = {c["kl_name"] for c in space["configs"]}
            self.assertIn("first", names)
            self.assertIn("big", names)
            self.assertNotIn("ktnamed[BM=32;BN=32;BK=8;TM=1;TN=4]", names)
            self.assertTrue(any(n.startswith("ktnamed[") for n in names))
            if os.environ.get("KERNLAB"):
                rows, _ = kt.kernlab_list(os.environ["KERNLAB"], path, "ktnamed", ["first", "big"])
                self.assertIn("first", rows)
                self.assertEqual(kt.compare_kernlab_list(space, rows), [])

    @unittest.skipUnless(have("kernel_tuner"), "needs kernel_tuner")
    def test_kernel_tuner_searchspace(self):
        for name in ("ktfix", "ktrow"):
            _, space, p = self.load(name)
            diffs, size, _ = kt.compare_space(space, p)
            self.assertEqual(diffs, [])
            self.assertEqual(size, len(space["configs"]))


@unittest.skipUnless(have("numpy"), "needs numpy")
class Inputs(unittest.TestCase):
    def test_kernlab_generator(self):
        import numpy as np
        # kernlab's splitmix64 with seed 12345, exact mode: its first draws, and draw 3,000,000
        a = kt.splitmix_exact(np, 12345, 0, 5)
        self.assertEqual(a.tolist(), [0.25, 0.25, 0.5, -0.25, 1.0])
        b = kt.splitmix_exact(np, 12345, 2999990, 10, chunk=3)
        self.assertEqual(float(b[-1]), 0.0)
        A, B, ref, _ = kt.make_problem(np, (5, 7, 3), 12345)
        self.assertEqual(A[:5].tolist(), [0.25, 0.25, 0.5, -0.25, 1.0])
        self.assertEqual(ref.shape, (35,))


def fake_backend_class():
    """A Kernel Tuner GPU backend that runs the fixture ktfix on the CPU: a launch writes the
    part of C its grid covers with BM x BN tiles, and only when the block is the kernel's
    (BN / TN, BM / TM); one configuration is made wrong on purpose."""
    import numpy as np
    from kernel_tuner.backends.backend import GPUBackend
    from kernel_tuner.observers.observer import BenchmarkObserver

    class Timer(BenchmarkObserver):
        def __init__(self, dev):
            self.dev, self.times = dev, []

        def after_finish(self):
            self.times.append(self.dev.last_time)

        def get_results(self):
            r = {"time": float(np.mean(self.times)), "times": list(self.times)}
            self.times = []
            return r

    class Fake(GPUBackend):
        units = {"time": "ms"}

        def __init__(self, device=0, iterations=7, compiler_options=None, observers=None):
            self.name, self.max_threads, self.iterations = "simulated GPU", 1024, iterations
            self.compiler_options = compiler_options
            self.env = {"device_name": self.name, "iterations": iterations, "compiler_options": compiler_options}
            self.observers = (observers or []) + [Timer(self)]
            self.last_time, self.launches = 0.0, []

        def ready_argument_list(self, arguments):
            return [np.array(a) if isinstance(a, np.ndarray) else a for a in arguments]

        def compile(self, instance):
            name = instance.name
            assert name.startswith("ktfix<") and name.endswith(">"), name
            assert "-std=c++17" in self.compiler_options
            return tuple(int(v) for v in name[len("ktfix<"):-1].split(","))

        def run_kernel(self, func, gpu_args, threads, grid, stream=None):
            BLOCK, BM, BN, BK, TM, TN, COLS = func
            A, B, C, M, N, K = gpu_args
            M, N, K = int(M), int(N), int(K)
            self.launches.append((func, tuple(threads), tuple(grid)))
            self.last_time = 1.0 + 1000.0 / (BM * BN) + BK / 100.0 + TM / 1000.0 + TN / 10000.0
            if tuple(threads) != (BN // TN, BM // TM, 1) or BLOCK != threads[0] * threads[1]:
                return
            rows, cols = min(M, grid[1] * BM), min(N, grid[0] * BN)
            prod = A.reshape(M, K).astype(np.float64) @ B.reshape(K, N).astype(np.float64)
            C.reshape(M, N)[:rows, :cols] = prod[:rows, :cols]
            if (BM, BN, BK, TM, TN) == (64, 64, 8, 4, 4):
                C[0] += 1

        def memcpy_dtoh(self, dest, src):
            np.copyto(dest, src)

        def memcpy_htod(self, dest, src):
            np.copyto(dest, src)

        def memset(self, allocation, value, size):
            allocation[:] = value

        def synchronize(self):
            pass

        def start_event(self):
            pass

        def stop_event(self):
            pass

        def kernel_finished(self):
            return True

        def copy_constant_memory_args(self, cmem_args):
            pass

        def copy_shared_memory_args(self, smem_args):
            pass

        def copy_texture_memory_args(self, texmem_args):
            pass

    return Fake


@unittest.skipUnless(have("kernel_tuner") and have("numpy"), "needs kernel_tuner and numpy")
class OfflineTuning(unittest.TestCase):
    def test_tune_kernel_with_a_simulated_gpu(self):
        import kernel_tuner.backends.cupy as kt_cupy
        real = kt_cupy.CupyFunctions
        kt_cupy.CupyFunctions = fake_backend_class()
        try:
            with tempfile.TemporaryDirectory() as out:
                rc = kt.main(["--kernel", str(FIXTURES / "ktfix.cu"), "--shape", "70x96x40", "--lang", "cupy",
                              "--out", out, "--table", "5"])
                report = json.loads((Path(out) / "kt_tune.json").read_text())
                self.assertEqual(rc, 1)  # one configuration is wrong on purpose
                self.assertEqual((report["evaluated"], report["passed"], report["wrong"], report["failed"]),
                                 (80, 79, 1, 0))
                wrong = [r for r in report["results"] if r["status"] == "WRONG"]
                self.assertEqual(wrong[0]["kernlab_name"], "ktfix[BM=64;BN=64;BK=8;TM=4;TN=4]")
                self.assertIn("1 of 6720 elements differ", wrong[0]["error"])
                self.assertEqual(report["best"]["kernlab_name"], "ktfix[BM=128;BN=128;BK=8;TM=4;TN=8]")
                for r in report["results"]:
                    self.assertIsNotNone(r.get("compile_ms"))
                    self.assertIsNotNone(r.get("framework_ms"))
                self.assertGreater(report["configs_per_s"], 0)
                # a kernlab results file of the same configurations, 3x faster per configuration
                records = [{"variant": {"family": "matmul", "name": r["kernlab_name"]}, "block": r["block_size"],
                            "config": {"shape": [70, 96, 40]}, "outcome": "passed",
                            "timing": {"median_us": r["time_ms"] * 900}} for r in report["results"]]
                kl = Path(out) / "kl.json"
                kl.write_text(json.dumps({"format": "kernlab-results", "version": 1, "records": records}))
                sbs = kt.side_by_side(report, str(kl), report["tune_wall_s"] / 3, 3)
                self.assertAlmostEqual(sbs["throughput_ratio_kernlab_over_kt"], 3.0, places=6)
                self.assertAlmostEqual(sbs["kernlab_best_us"] / sbs["kt_best_us"], 0.9, places=6)
                self.assertEqual(kt.main(["--kt-json", str(Path(out) / "kt_tune.json"), "--kernlab-json", str(kl),
                                          "--kernlab-wall", "1"]), 0)
        finally:
            kt_cupy.CupyFunctions = real


if __name__ == "__main__":
    unittest.main(verbosity=2)
