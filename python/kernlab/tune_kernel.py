"""kernlab.tune_kernel: Kernel Tuner's tune_kernel over kernlab.

A Kernel Tuner script moves over by changing `import kernel_tuner` to `import kernlab`:

    results, env = kernlab.tune_kernel("vector_add", kernel_string, size, args, tune_params)

What Kernel Tuner takes as Python objects, kernlab takes as files, so the call writes a family
folder (docs/families.md) and a tunable kernel file (docs/kernel_contract.md), runs `kernlab tune`
on it and turns its rows into Kernel Tuner's `(results, env)`. The writing is split into functions
that need no GPU (`write_family`, `kernel_header`, `translate_restriction`), so they can be tested
with `kernlab --compile-only` and `--list`.

Kernel Tuner `#define`s every tunable before the source; so does kernlab here: the file's
`defines:` key (docs/kernel_contract.md) passes each tunable to the point's compile as
`-DNAME=<value>`, the block dimensions that are not tuned as their constants (256, 1, 1), and
`kernel_tuner` as 1. The source is written as it is, after the header, and the entry is the kernel
itself: `#if` and `#ifdef` on a tunable, a tunable used in a `__device__` helper, and the
`#ifndef NAME` / `#define NAME default` idiom all mean what they mean under Kernel Tuner.
"""
import ast
import itertools
import math
import os
import re
import shutil
import tempfile

import numpy as np

from kernlab.run import find_binary, tune

# numpy dtype -> kernlab buffer type (docs/families.md, [[buffers]] type); numpy has no bfloat16.
BUFFER_TYPES = {"uint8": "uint8", "int32": "int32", "int64": "int64", "float16": "float16",
                "float32": "float32", "float64": "float64"}
# The C type of each buffer's element, for the generated reference kernel's parameters.
C_TYPES = {"uint8": "unsigned char", "int32": "int", "int64": "long long", "float16": "__half",
           "float32": "float", "float64": "double"}
# numpy scalar -> kernlab's integer argument types ([kernel] args, { value, type }).
SCALAR_TYPES = {"int32": "int32", "int64": "int64", "uint32": "uint32", "uint64": "uint64"}

# Kernel Tuner's strategy names -> kernlab's (`kernlab tune --strategy`, docs/tuning.md).
KERNLAB_STRATEGIES = ["exhaustive", "random", "greedy", "annealing", "genetic", "halving", "bayes"]
STRATEGIES = {None: "exhaustive", "brute_force": "exhaustive", "random_sample": "random",
              "simulated_annealing": "annealing", "genetic_algorithm": "genetic",
              "bayes_opt": "bayes"}

# kernlab's largest block (docs/kernel_contract.md: `blocks`, each 1..1024).
MAX_BLOCK = 1024

# Kernel Tuner's tune_kernel arguments that kernlab does not take: their Kernel Tuner default
# (which asks for nothing, so it passes) and why. Any other keyword argument goes on to kernlab
# tune as an option, so these are caught here, before anything is written, not as kernlab's
# "unrecognised option" after.
# Kernel Tuner's lang values that compile CUDA source (with nvcc, NVRTC through CuPy, or NVRTC
# through NVIDIA's Python bindings): kernlab compiles the same source with NVRTC.
CUDA_LANGS = ("CUDA", "CUPY", "NVCUDA")

NOT_TAKEN = {
    "verify": (None, "kernlab compares with the answer by tolerance only (answer=, atol=)"),
    "platform": (0, "an OpenCL platform; kernlab compiles CUDA only"),
    "smem_args": (None, "kernlab gives a kernel of tune_kernel no dynamic shared memory"),
    "cmem_args": (None, "kernlab has no constant-memory arguments"),
    "texmem_args": (None, "kernlab has no texture arguments"),
    "compiler": (None, "kernlab compiles with NVRTC"),
    "compiler_options": (None, "kernlab takes no compiler options for a family"),
    "defines": (None, "kernlab defines every tunable with the point's value itself; other "
                      "macros (strings, functions of the point) are not taken"),
    "log": (None, "kernlab does not log through Python's logging (verbose=True prints its "
                  "output)"),
    "cache": (None, "kernlab keeps its own tuning store (store=) and compile cache "
                    "(cache_dir=)"),
    "simulation_mode": (None, "kernlab's replay= answers points from a recorded exhaustive tune"),
    "parallel": (None, "kernlab's devices= spreads a tune over several GPUs"),
    "observers": (None, "kernlab measures time, and energy with objective=\"energy\""),
    "objective_higher_is_better": (None, "kernlab's objective (time or energy) is minimised"),
    "objectives": (None, "kernlab tunes for one objective (objective=time or energy)"),
}


def strategy_name(strategy):
    """kernlab's --strategy for Kernel Tuner's `strategy`."""
    if strategy in STRATEGIES:
        return STRATEGIES[strategy]
    if strategy in KERNLAB_STRATEGIES:
        return strategy
    raise ValueError(f"strategy {strategy!r}: kernlab has none of that name; use one of "
                     f"{', '.join(KERNLAB_STRATEGIES)} (or Kernel Tuner's "
                     f"{', '.join(k for k in STRATEGIES if k)})")


# --- restrictions: Python expressions -> kernlab's C-like expressions -------------------------

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "/", ast.Mod: "%"}
_CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


def translate_restriction(text, names):
    """Kernel Tuner's restriction (a Python expression over the tunables `names`) as a kernlab
    `require:` expression. Names, whole numbers, + - * // %, comparisons (chained too), and, or,
    not, parentheses, min and max translate; anything else raises ValueError. `//` and `%` become
    C's `/` and `%`, which agree with Python's for the non-negative values tunables have."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as e:
        raise ValueError(f"restriction {text!r} is not a Python expression: {e.msg}") from None

    def bad(node, what):
        raise ValueError(f"restriction {text!r}: {what} ({ast.unparse(node)!r}) has no kernlab "
                         "translation; kernlab's require: takes names, whole numbers, + - * // %, "
                         "comparisons, and/or/not, min() and max()")

    def tr(node):
        if isinstance(node, ast.Name):
            if node.id not in names:
                bad(node, f"unknown name {node.id!r}, not a tunable")
            return node.id
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool):
                return "1" if node.value else "0"
            if isinstance(node.value, int):
                return str(node.value)
            bad(node, "a value that is not a whole number")
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Div):
                bad(node, "'/' is true division in Python (kernlab's is integer division: "
                          "write '//')")
            if type(node.op) not in _BINOPS:
                bad(node, "an operator")
            return f"({tr(node.left)} {_BINOPS[type(node.op)]} {tr(node.right)})"
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                return f"!({tr(node.operand)})"
            if isinstance(node.op, ast.USub):
                return f"(0 - {tr(node.operand)})"
            if isinstance(node.op, ast.UAdd):
                return tr(node.operand)
            bad(node, "an operator")
        if isinstance(node, ast.BoolOp):
            op = " && " if isinstance(node.op, ast.And) else " || "
            return "(" + op.join(tr(v) for v in node.values) + ")"
        if isinstance(node, ast.Compare):
            # a < b < c is a < b and b < c, as in Python.
            parts, left = [], node.left
            for op, right in zip(node.ops, node.comparators):
                if type(op) not in _CMPOPS:
                    bad(node, "a comparison")
                parts.append(f"({tr(left)} {_CMPOPS[type(op)]} {tr(right)})")
                left = right
            return parts[0] if len(parts) == 1 else "(" + " && ".join(parts) + ")"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("min", "max") and len(node.args) >= 2 and not node.keywords:
            out = tr(node.args[0])
            for a in node.args[1:]:  # kernlab's min and max take two arguments
                out = f"{node.func.id}({out}, {tr(a)})"
            return out
        if isinstance(node, ast.IfExp):
            return f"({tr(node.test)} ? {tr(node.body)} : {tr(node.orelse)})"
        bad(node, "this construct")

    return tr(tree)


def _points(tune_params):
    """Every combination of the tunables' values, as dicts, in tune_params' order."""
    names = list(tune_params)
    for values in itertools.product(*(tune_params[n] for n in names)):
        yield dict(zip(names, values))


def callable_restriction(function, tune_params):
    """A restriction given as a Python function of a point (a dict, as Kernel Tuner passes it):
    evaluated here on every point, and written as one kernlab condition that allows exactly the
    points it allows (the list of those, or of those it refuses, whichever is shorter). kernlab's
    `points:` only names points, it does not narrow the space, so a condition is the way."""
    names = list(tune_params)
    allowed, refused = [], []
    for p in _points(tune_params):
        (allowed if function(p) else refused).append(p)
    if not allowed:
        raise ValueError("the restriction function allows no point of tune_params")
    if not refused:
        return None

    def one(p):
        return "(" + " && ".join(f"{n} == {p[n]}" for n in names) + ")"

    if len(allowed) <= len(refused):
        return " || ".join(one(p) for p in allowed)
    return "!(" + " || ".join(one(p) for p in refused) + ")"


# --- the kernel file ---------------------------------------------------------------------------

def _problem(problem_size):
    """problem_size as a tuple of 1 to 3 positive ints."""
    dims = tuple(problem_size) if isinstance(problem_size, (tuple, list)) else (problem_size,)
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"problem_size {problem_size!r}: 1 to 3 dimensions")
    for d in dims:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)) or d < 1:
            raise ValueError(f"problem_size {problem_size!r}: each dimension must be a positive "
                             "whole number (kernlab does not take Kernel Tuner's parameter names "
                             "or functions there)")
    return tuple(int(d) for d in dims)


AXES = ["PROBLEM_X", "PROBLEM_Y", "PROBLEM_Z"]


def _block_names(block_size_names):
    names = list(block_size_names or ["block_size_x", "block_size_y", "block_size_z"])
    defaults = ["block_size_x", "block_size_y", "block_size_z"]
    return names + defaults[len(names):]


def _check_tune_params(tune_params):
    if not tune_params:
        raise ValueError("tune_params is empty: Kernel Tuner's tune_params is a dict of name -> "
                         "list of values")
    for name, values in tune_params.items():
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ValueError(f"tune_params: {name!r} is not an identifier")
        if name in ("BLOCK", "T", "TSIZE", "DTYPE", "OP", "SM_COUNT", "RESIDENT_BLOCKS") or \
                name in AXES:
            raise ValueError(f"tune_params: {name!r} is a name kernlab reserves")
        if not len(values):
            raise ValueError(f"tune_params[{name!r}] has no values")
        for v in values:
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
                raise ValueError(f"tune_params[{name!r}]: {v!r} is not a whole number; kernlab's "
                                 "tunables are whole numbers")


def kernel_header(family, kernel_name, problem_size, tune_params, restrictions=None,
                  grid_div_x=None, grid_div_y=None, grid_div_z=None, block_size_names=None):
    """The kernlab header (the `/* kernlab ... */` block) of the tunable file."""
    _check_tune_params(tune_params)
    dims = _problem(problem_size)
    names = list(tune_params)
    bx, by, bz = _block_names(block_size_names)
    # A block dimension that is not tuned is a constant, as Kernel Tuner's defaults: 256 for x, 1
    # for y and z.
    block = [bx if bx in tune_params else "256", by if by in tune_params else "1",
             bz if bz in tune_params else "1"]

    # kernlab's BLOCK is the threads of a block, one tunable among the others: its values are
    # every product of the block dimensions, and a condition ties each point to its own.
    def values(d, default):
        return [int(v) for v in tune_params[d]] if d in tune_params else [default]
    blocks = sorted({x * y * z for x in values(bx, 256) for y in values(by, 1)
                     for z in values(bz, 1) if 1 <= x * y * z <= MAX_BLOCK})
    if not blocks:
        raise ValueError(f"no block of {bx} x {by} x {bz} has 1 to {MAX_BLOCK} threads")

    require = []
    if any(d in tune_params for d in (bx, by, bz)):
        require.append(f"BLOCK == {block[0]} * {block[1]} * {block[2]}")
    if restrictions is not None:
        items = [restrictions] if callable(restrictions) or isinstance(restrictions, str) \
            else list(restrictions)
        for r in items:
            if callable(r):
                c = callable_restriction(r, tune_params)
                if c:
                    require.append(c)
            elif isinstance(r, str):
                require.append(translate_restriction(r, names))
            else:
                raise ValueError(f"restriction {r!r}: a string or a function of the point")

    # Kernel Tuner's grid: each dimension is ceil(problem / product of its grid_div entries),
    # each an expression over the tunables; the defaults divide by the block's dimensions.
    grid = []
    for i, (size, div) in enumerate(zip(dims, (grid_div_x, grid_div_y, grid_div_z))):
        if div is None:
            div = [[bx, by, bz][i]]
        elif isinstance(div, str):
            div = [div]
        parts = []
        for d in div:
            if callable(d):
                raise ValueError("grid_div: functions are not supported, only expressions over "
                                 "the tunables")
            d = _exact_division(str(d), tune_params)
            # a block dimension that is not tuned divides by its constant
            parts.append(translate_restriction(str(d), names + [n for n in (bx, by, bz)
                                                                if n not in names])
                         if str(d) not in (bx, by, bz) else block[[bx, by, bz].index(str(d))])
        divisor = " * ".join(f"({p})" for p in parts) if parts else "1"
        grid.append(f"ceil_div({AXES[i]}, {divisor})")
    # the names of untuned block dimensions in grid_div mean their constants
    grid = [_replace_words(g, {n: c for n, c in zip((bx, by, bz), block) if n not in names})
            for g in grid]

    # Kernel Tuner's #defines: every tunable with the point's value, the block dimensions that
    # are not tuned as their constants, and kernel_tuner = 1.
    defines = list(names) + [f"{n} = {c}" for n, c in zip((bx, by, bz), block) if n not in names]
    defines.append("kernel_tuner = 1")
    tune_line = "; ".join(f"{n} = {', '.join(str(int(v)) for v in tune_params[n])}"
                          for n in names)
    lines = ["/* kernlab",
             f"family:     {family}",
             f"entry:      {kernel_name}",
             f"blocks:     {' '.join(str(b) for b in blocks)}",
             f"tune:       {tune_line}",
             f"defines:    {'; '.join(defines)}"]
    if require:
        lines.append(f"require:    {'; '.join(require)}")
    lines += [f"block_dims: {', '.join(block)}",
              f"grid_dims:  {', '.join(grid)}",
              "summary:    written by kernlab.tune_kernel (Kernel Tuner's tune_kernel)",
              "*/"]
    return "\n".join(lines) + "\n"


def _exact_division(text, tune_params):
    """`text` with its `/` as `//` where that changes nothing: where the expression, evaluated
    with Python's true division over every combination of the tunables it names, is always a
    whole number (Kernel Tuner's spmv divides `block_size_x/threads_per_row`, block sizes that
    are multiples of 32 by 1 or 32). Otherwise `text` as it is, which translate_restriction
    refuses with the reason."""
    if "/" not in text or "//" in text:
        return text
    used = [n for n in tune_params if re.search(rf"\b{re.escape(n)}\b", text)]
    if math.prod(len(tune_params[n]) for n in used) > 1 << 20:
        return text
    try:
        code = compile(text, "<grid_div>", "eval")
        for values in itertools.product(*(tune_params[n] for n in used)):
            v = eval(code, {"__builtins__": {}}, dict(zip(used, (int(x) for x in values))))
            if v != int(v):
                return text
    except Exception:  # not an expression of the tunables alone: left to the translator's error
        return text
    return text.replace("/", "//")


def _replace_words(text, mapping):
    for k, v in mapping.items():
        text = re.sub(rf"\b{re.escape(k)}\b", v, text)
    return text


def split_name(kernel_name):
    """Kernel Tuner's kernel_name as (the function's name, its template arguments or ""):
    "vector_add" -> ("vector_add", ""), "vector_add<float>" -> ("vector_add", "<float>")."""
    m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*(<.*>)?\s*", str(kernel_name))
    if not m:
        raise ValueError(f"kernel_name {kernel_name!r}: the name of a __global__ function, with "
                         "its template arguments if it is a template (vector_add<float>)")
    return m.group(1), m.group(2) or ""


def check_kernel(source, kernel_name):
    """Raises ValueError unless `source` defines the __global__ function `kernel_name` once, as a
    template exactly when the name gives template arguments (vector_add<float>)."""
    base, targs = split_name(kernel_name)
    pattern = re.compile(r"(?:extern\s+\"C\"\s+)?__global__\s+(?:[\w:<>]+\s+)*?"
                         rf"(?:void\s+)?(?:__launch_bounds__\s*\([^)]*\)\s+)?{re.escape(base)}"
                         r"\s*\(")

    def defines_it(m):  # a definition, not a declaration: the parameter list is followed by `{`
        depth, i = 1, m.end()
        while i < len(source) and depth:
            depth += {"(": 1, ")": -1}.get(source[i], 0)
            i += 1
        return re.match(r"\s*\{", source[i:]) is not None

    found = [m for m in pattern.finditer(source) if defines_it(m)]
    if not found:
        raise ValueError(f"kernel_source has no `__global__ void {base}(`: kernel_name "
                         "must name a __global__ function of the source")
    if len(found) > 1:
        raise ValueError(f"kernel_source declares __global__ {base} more than once")
    template = re.search(r"template\s*<[^>]*>\s*$", source[:found[0].start()]) is not None
    if template and not targs:
        raise ValueError(f"{base} is a template: name it with its template arguments, e.g. "
                         f"{base}<float>, as Kernel Tuner takes it")
    if targs and not template:
        raise ValueError(f"kernel_name {kernel_name!r}: {base} is not a template")


# --- the family --------------------------------------------------------------------------------

def _on_host(value):
    """A CuPy array (or another GPU array with `__cuda_array_interface__` and `get()`, as Kernel
    Tuner's lang="cupy" examples pass) copied to a numpy array; anything else as it is."""
    if hasattr(value, "__cuda_array_interface__") and callable(getattr(value, "get", None)):
        return np.asarray(value.get())
    return value


def _arguments(arguments, answer):
    """Each argument as ("array", ndarray, checked) or ("scalar", value, kernlab type)."""
    if answer is not None and len(answer) != len(arguments):
        raise ValueError(f"answer has {len(answer)} entries, arguments {len(arguments)}: one per "
                         "argument, None for those not checked")
    out = []
    for i, a in enumerate(arguments):
        a = _on_host(a)
        if isinstance(a, np.ndarray):
            kind = BUFFER_TYPES.get(a.dtype.name)
            if kind is None or a.dtype.byteorder == ">":
                raise ValueError(f"argument {i}: a numpy array of {a.dtype}; kernlab's buffers "
                                 f"are {', '.join(BUFFER_TYPES)} (little-endian)")
            expected = None if answer is None else answer[i]
            if expected is not None:
                expected = np.asarray(_on_host(expected))
                if expected.size != a.size:
                    raise ValueError(f"answer[{i}] has {expected.size} elements, argument {i} "
                                     f"{a.size}")
            if a.size == 0:
                # Kernel Tuner passes an empty array as it is (a kernel that reads it reads out of
                # bounds); a kernlab buffer has at least one element, so it becomes one zero
                # element, with nothing to check.
                a, expected = np.zeros(1, a.dtype), None
            out.append(("array", a, expected))
        elif isinstance(a, (np.integer, int)) and not isinstance(a, (bool, np.bool_)):
            t = SCALAR_TYPES.get(np.asarray(a).dtype.name if isinstance(a, np.integer)
                                 else "int32")
            if t is None:
                raise ValueError(f"argument {i}: a {type(a).__name__}; kernlab's scalar arguments "
                                 f"are {', '.join(SCALAR_TYPES)}")
            if answer is not None and answer[i] is not None:
                raise ValueError(f"answer[{i}]: argument {i} is a scalar, it cannot be checked")
            out.append(("scalar", int(a), t))
        else:
            raise ValueError(
                f"argument {i}: {type(a).__name__} is not supported. kernlab.tune_kernel takes "
                f"numpy arrays ({', '.join(BUFFER_TYPES)}) and whole-number scalars "
                f"({', '.join(SCALAR_TYPES)}): kernlab's family format passes scalars as integer "
                "expressions only, so a float scalar has no way in")
    return out


def _toml_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _reference_source(args):
    """The reference kernel: it computes nothing. The answer's arrays are the expected values of
    the checked buffers ([reference] expected, read from .npy files); an unchecked buffer keeps
    its start, so it matches whatever finite values a variant leaves (the compare rule says)."""
    params = []
    for i, (kind, value, extra) in enumerate(args):
        if kind == "scalar":
            params.append({"int32": "int", "int64": "long long", "uint32": "unsigned int",
                           "uint64": "unsigned long long"}[extra] + f" s{i}")
        else:
            params.append(f"{C_TYPES[BUFFER_TYPES[value.dtype.name]]}* b{i}")
    return ("// written by kernlab.tune_kernel: the expected outputs (Kernel Tuner's answer) are\n"
            "// the answer*.npy files of [reference] expected, so this kernel writes nothing\n"
            "#include <cuda_fp16.h>\n"
            f"__global__ void kl_reference({', '.join(params)}) {{}}\n")


def write_family(folder, kernel_name, kernel_source, problem_size, arguments, tune_params,
                 restrictions=None, answer=None, grid_div_x=None, grid_div_y=None,
                 grid_div_z=None, block_size_names=None, atol=1e-6):
    """Writes the family folder `folder` (its name is the family's): family.toml, an .npy file
    per array argument, reference.cu and the tunable kernel file `<kernel_name>.cu`. Returns the
    kernel file's path."""
    family = os.path.basename(os.path.normpath(folder))
    if isinstance(kernel_source, (str, os.PathLike)) and str(kernel_source).endswith(".cu") and \
            "\n" not in str(kernel_source) and os.path.isfile(kernel_source):
        with open(kernel_source, encoding="utf-8") as f:
            kernel_source = f.read()
    if not isinstance(kernel_source, str):
        raise ValueError("kernel_source: the source text or the path of a .cu file (Kernel "
                         "Tuner's lists of files and code generators are not supported)")
    dims = _problem(problem_size)
    args = _arguments(arguments, answer)
    header = kernel_header(family, kernel_name, problem_size, tune_params, restrictions,
                           grid_div_x, grid_div_y, grid_div_z, block_size_names)
    check_kernel(kernel_source, kernel_name)
    checked = [a for a in args if a[0] == "array" and a[2] is not None]

    os.makedirs(folder, exist_ok=True)
    toml = ["# written by kernlab.tune_kernel from Kernel Tuner's tune_kernel arguments",
            f"summary = {_toml_str(f'{kernel_name}, from kernlab.tune_kernel')}",
            f'dtypes = ["{next((BUFFER_TYPES[a[1].dtype.name] for a in args if a[0] == "array"), "float32")}"]',
            "", "[axes]"]
    for name, size in zip(AXES, dims):
        toml.append(f"{name} = {{ default = {size}, min = 1, max = {max(size, 2**31 - 1)} }}")
    kernel_args, expected = [], []
    for i, (kind, value, extra) in enumerate(args):
        if kind == "scalar":
            kernel_args.append(f'{{ value = "{value}", type = "{extra}" }}')
            continue
        name = f"arg{i}"
        kernel_args.append(_toml_str(name))
        np.save(os.path.join(folder, f"{name}.npy"), np.ascontiguousarray(value).ravel())
        if extra is not None:
            # The answer in the buffer's own type (the reference's type is T), as Kernel Tuner
            # compares it with the result.
            np.save(os.path.join(folder, f"answer{i}.npy"),
                    np.ascontiguousarray(extra.astype(value.dtype, copy=False)).ravel())
            expected.append(f'{name} = "answer{i}.npy"')
        # A checked array is inout: it starts from the argument's values before every run (put
        # back outside the timed region), as Kernel Tuner copies the arguments in, and is
        # compared with the answer after. Without an answer every array is inout too, so that
        # kernlab has buffers to compare, but nothing is checked (below).
        role = "inout" if (extra is not None or not checked) else "in"
        toml += ["", "[[buffers]]", f'name = "{name}"', f'role = "{role}"',
                 f'type = "{BUFFER_TYPES[value.dtype.name]}"', f'count = "{value.size}"',
                 f'init = {{ kind = "npy", file = "{name}.npy" }}']
        if role == "inout":
            toml.append('reset = "untimed"')
    # The family's grid is the header's (there it sees the tunables); the reference computes
    # nothing (the answer is [reference] expected's files), so one block does for it.
    toml += ["", "[kernel]", f"args = [{', '.join(kernel_args)}]",
             'grid_dims = ["ceil_div(PROBLEM_X, BLOCK)"]', "",
             "[reference]", 'file = "reference.cu"', 'entry = "kl_reference"', 'type = "T"',
             "block = 256", 'grid_dims = ["1"]']
    if expected:
        toml.append(f"expected = {{ {', '.join(expected)} }}")
    toml += ["", "[compare]", 'rule = "tolerance"']
    if checked:
        # numpy.allclose(expected, result, atol=atol), as Kernel Tuner compares: rtol 1e-5.
        toml += [f"abs = {float(atol)!r}", "rel = 1e-05"]
    else:
        # answer=None: Kernel Tuner checks nothing; kernlab still compares, so any finite value
        # passes (NaN and infinity never do).
        toml += ["abs = 1e300", "rel = 0.0"]
    with open(os.path.join(folder, "family.toml"), "w", encoding="utf-8") as f:
        f.write("\n".join(toml) + "\n")
    with open(os.path.join(folder, "reference.cu"), "w", encoding="utf-8") as f:
        f.write(_reference_source(args))
    path = os.path.join(folder, f"{split_name(kernel_name)[0]}.cu")
    with open(path, "w", encoding="utf-8") as f:
        f.write(header + kernel_source)
    return path


# --- the call ----------------------------------------------------------------------------------

def _strategy_options(strategy_options):
    """Kernel Tuner's strategy_options that kernlab has: max_fevals (--budget N) and time_limit
    (--budget Ns)."""
    out = {}
    for key, value in (strategy_options or {}).items():
        if key == "max_fevals":
            out["budget"] = int(value)
        elif key == "time_limit":
            out["budget"] = f"{int(math.ceil(value))}s"
        else:
            raise ValueError(f"strategy_options[{key!r}]: kernlab.tune_kernel takes max_fevals "
                             "and time_limit only")
    return out


def _plain(value):
    """numpy scalars in `value` (a number, a tuple or list of them) as Python numbers, so that
    the results can be written with json.dump as Kernel Tuner's examples do."""
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(v) for v in value)
    return value.item() if isinstance(value, np.generic) else value


def results_of(df, tune_params, problem_size, block_size_names=None):
    """Kernel Tuner's (results, env) from read() of kernlab tune's --json."""
    bx, by, bz = _block_names(block_size_names)
    rows = df[df["outcome"] == "passed"] if len(df) else df
    results = []
    for _, r in rows.iterrows():
        if any(n not in r.index or r[n] is None or (isinstance(r[n], float) and math.isnan(r[n]))
               for n in tune_params):
            continue  # a row of another variant (the family's baseline), no point of ours
        point = {n: int(r[n]) for n in tune_params}
        median_ms = float(r["median_us"]) / 1000.0
        samples = r.get("samples_us") if "samples_us" in r.index else None
        times = [float(s) / 1000.0 for s in samples] if isinstance(samples, list) and samples \
            else [median_ms]
        point.update({"time": median_ms, "times": times,
                      "ci_low_ms": float(r["ci_low_us"]) / 1000.0
                      if r.get("ci_low_us") is not None else None,
                      "ci_high_ms": float(r["ci_high_us"]) / 1000.0
                      if r.get("ci_high_us") is not None else None})
        results.append(point)
    rep = df.attrs.get("reproducibility") or {}
    device = rep.get("device") or {}  # null without a device
    command = rep.get("command")
    env = {"device_name": device.get("name"),
           "kernlab_version": rep.get("kernlab_version"),
           "kernlab_commit": rep.get("kernlab_commit"),
           "command": " ".join(command) if isinstance(command, list) else command,
           "problem_size": _plain(problem_size),
           "reproducibility": rep}
    return results, env


def _check_metrics(metrics):
    if metrics is None:
        return
    if not isinstance(metrics, dict):
        raise ValueError("metrics: a dict of name -> function of the point or expression, in "
                         "order (a later metric may use an earlier one)")
    for name, how in metrics.items():
        if not (callable(how) or isinstance(how, str)):
            raise ValueError(f"metrics[{name!r}]: a function of the point or an expression")


def add_metrics(results, metrics):
    """Kernel Tuner's metrics: each, in order, put into every result under its name, from a
    function of the result (a dict: the tunables, `time`, the metrics before it) or a Python
    expression over the same names."""
    for point in results:
        for name, how in (metrics or {}).items():
            point[name] = how(point) if callable(how) else eval(how, {}, dict(point))
    return results


def tune_kernel(kernel_name, kernel_source, problem_size, arguments, tune_params,
                restrictions=None, answer=None, grid_div_x=None, grid_div_y=None,
                block_size_names=None, atol=1e-6, lang="CUDA", strategy=None,
                strategy_options=None, verbose=False, binary=None, workdir=None,
                grid_div_z=None, iterations=None, metrics=None, quiet=False,
                **kernlab_options):
    """Kernel Tuner's tune_kernel, run by kernlab: writes a family folder and a tunable kernel
    file under `workdir` (default: a temporary folder, removed when the call returns), runs
    `kernlab tune` on it and returns `(results, env)`: a dict per evaluated point that passed
    (the tunables, `time` and `times` in ms, `ci_low_ms`, `ci_high_ms`, the `metrics`), and the
    device, kernlab's version, the command and the problem size. `iterations` is kernlab's
    --min-samples. Other keyword arguments are kernlab tune's options (`seed=`, `samples=True`,
    `timeout=`...); Kernel Tuner's that kernlab does not take (NOT_TAKEN) raise ValueError."""
    for name, (default, why) in NOT_TAKEN.items():
        value = kernlab_options.get(name)
        if value is None or value is False or (type(value) is int and value == default):
            kernlab_options.pop(name, None)  # Kernel Tuner's default: nothing asked
        else:
            raise ValueError(f"{name}=: kernlab.tune_kernel does not take it ({why})")
    if lang is not None and lang.upper() not in CUDA_LANGS:
        raise ValueError(f"lang={lang!r}: kernlab compiles CUDA only (Kernel Tuner's CUDA, "
                         "cupy and nvcuda backends)")
    kl_strategy = strategy_name(strategy)
    options = _strategy_options(strategy_options)
    _check_metrics(metrics)
    if iterations is not None:
        # Kernel Tuner times `iterations` runs and takes their mean; kernlab samples until its
        # stopping rule is met, at least --min-samples (a point raced out stops sooner).
        options["min_samples"] = int(iterations)
    if kl_strategy == "exhaustive" and "budget" not in options:
        # Kernel Tuner's brute_force evaluates every point; so does kernlab's exhaustive, but
        # cap the budget at the space (kernlab allows 4096 points a file).
        options["budget"] = 4096
    temporary = workdir is None
    root = tempfile.mkdtemp(prefix="kernlab-tk-") if temporary else str(workdir)
    try:
        family = "kt_" + re.sub(r"\W+", "_", kernel_name).strip("_").lower()
        folder = os.path.join(root, family)
        if os.path.isdir(folder):
            shutil.rmtree(folder)  # a folder of an earlier call: written afresh
        write_family(folder, kernel_name, kernel_source, problem_size, arguments, tune_params,
                     restrictions, answer, grid_div_x, grid_div_y, grid_div_z, block_size_names,
                     atol)
        dims = _problem(problem_size)
        shape = {"size": dims[0]} if len(dims) == 1 else {"shape": "x".join(map(str, dims))}
        kwargs = dict(kernels_dir=root, family=family, strategy=kl_strategy,
                      store=os.path.join(root, "tuning.jsonl"), fresh=True, **shape)
        kwargs.update(options)
        kwargs.update(kernlab_options)
        df = tune(split_name(kernel_name)[0], binary=find_binary(binary), **kwargs)
        if verbose and not quiet:
            print(df.attrs.get("output", ""))
        results, env = results_of(df, tune_params, problem_size, block_size_names)
        return add_metrics(results, metrics), env
    finally:
        if temporary:
            shutil.rmtree(root, ignore_errors=True)
