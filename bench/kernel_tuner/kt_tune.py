#!/usr/bin/env python3
"""Kernel Tuner tuning a kernlab tunable matmul file, read from the file's own header.

Both tools then tune the same source over the same space: Kernel Tuner's tune_params are the
header's `tune:` values plus `block_size_x` for `blocks:` (kernlab's BLOCK), its restrictions are
the `require:` conditions translated to Python, its kernel name is the `entry:` template-id (Kernel
Tuner substitutes the parameters' values into it and compiles it as an NVRTC name expression), and
the launch's block and grid are the header's `block_dims` and `grid_dims`. Every configuration is
checked exactly against a float64 reference on kernlab's exact inputs.

    python3 bench/kernel_tuner/kt_tune.py --kernel kernels_src/matmul/tunable.cu --out $OUT
    python3 bench/kernel_tuner/kt_tune.py --kernel FILE --dry-run [--kernlab build/kernlab]
    python3 bench/kernel_tuner/kt_tune.py --kt-json OUT/kt_tune.json --kernlab-json kl.json \\
        --kernlab-wall SECONDS

See README.md beside this file. Only the tuning itself imports kernel_tuner; --dry-run uses it
when it is importable (to build its search space) and works without it.
"""

import argparse
import datetime
import hashlib
import json
import keyword
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

T_START = time.perf_counter()
HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
FORMAT = "kernlab-kt-tune"
FORMAT_VERSION = 1

# What kernlab compiles with (host/src/nvrtc/compiler.cpp), less the architecture, which each
# Kernel Tuner backend adds itself (CuPy: a cubin for the device; nvcuda: compute_XX PTX), and
# less "-Xptxas -v", which only prints. Without a -std option Kernel Tuner would add c++11.
BASE_COMPILER_OPTIONS = ["-std=c++17", "-lineinfo"]
DEFAULT_SEED = 12345                  # kernlab's default --seed
EXACT_K_LIMIT = 1 << 20               # kernlab compares exactly only up to K = 2^20
MAX_ELEMENTS = (1 << 31) - 1          # kernlab refuses a matrix of 2^31 elements or more
TSIZE = 4                             # bytes per float32 element
TUNE_MAX_POINTS = 4096                # kernlab's limit on a file's points
TUNE_MAX_VALUES = 1024                # ... and on one tunable's values

# Names a tunable may not have here: Kernel Tuner forbids the first four; the Python
# translation of the expressions uses the rest (besides Python's keywords).
FORBIDDEN_NAMES = {"grid_size_x", "grid_size_y", "grid_size_z", "time", "block_size_x",
                   "block_size_y", "block_size_z", "min", "max", "int", "True", "False", "None",
                   "kl_block_x", "kl_block_y", "kl_block_z"}


class HeaderError(Exception):
    """A problem with the kernel file's header (reported with file:line where known)."""


class ExprError(Exception):
    """An expression that does not parse or does not evaluate (kernlab's words where they apply)."""


# ----------------------------------------------------------------------------------------------
# The expression language of kernlab's headers (docs/kernel_contract.md, "Expressions"):
# integers, + - * / % (C's truncating division), parentheses, sqrt (integer square root),
# min, max, ceil_div, < <= > >= == != (non-associative, 1 or 0), && || ! (1 or 0, short
# circuit) and c ? a : b, with C's precedence. Parsed once into a tree; the tree is evaluated
# with C's semantics (as kernlab does) or written out as a Python expression for Kernel Tuner.

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
FUNCTIONS = {"sqrt": 1, "min": 2, "max": 2, "ceil_div": 2}


class _Parser:
    """Recursive descent over the grammar kernlab's host/src/spec/expression.cpp parses:
         expr := or ('?' expr ':' expr)?     or := and ('||' and)*     and := cmp ('&&' cmp)*
         cmp := add (('<' | '<=' | '>' | '>=' | '==' | '!=') add)?
         add := term (('+' | '-') term)*     term := unary (('*' | '/' | '%') unary)*
         unary := '-' unary | '!' unary | '(' expr ')' | number | identifier | f '(' args ')'
       Nodes are tuples: ('num', v), ('var', name), ('neg', a), ('not', a), ('bin', op, a, b),
       ('cond', c, a, b), ('call', name, [args])."""

    def __init__(self, text, variables):
        self.s, self.pos, self.variables = text, 0, variables

    def fail(self, why):
        raise ExprError(f"in expression '{self.s}': {why}")

    def skip(self):
        while self.pos < len(self.s) and self.s[self.pos].isspace():
            self.pos += 1

    def accept(self, c):
        self.skip()
        if self.s.startswith(c, self.pos):
            self.pos += len(c)
            return True
        return False

    def peek(self, c):
        self.skip()
        return self.s.startswith(c, self.pos)

    def parse(self):
        node = self.expr()
        self.skip()
        if self.pos != len(self.s):
            self.fail(f"unexpected '{self.s[self.pos]}'")
        return node

    def expr(self):
        c = self.logical_or()
        if not self.accept("?"):
            return c
        a = self.expr()
        if not self.accept(":"):
            self.fail("missing ':' of '?'")
        b = self.expr()
        return ("cond", c, a, b)

    def logical_or(self):
        v = self.logical_and()
        while self.accept("||"):
            v = ("bin", "||", v, self.logical_and())
        return v

    def logical_and(self):
        v = self.comparison()
        while self.accept("&&"):
            v = ("bin", "&&", v, self.comparison())
        return v

    def comparison(self):
        a = self.additive()
        for op in ("<=", ">=", "==", "!=", "<", ">"):
            if self.accept(op):
                return ("bin", op, a, self.additive())
        if self.peek("="):
            self.fail("'=' is not an operator (compare with '==')")
        return a

    def additive(self):
        v = self.term()
        while True:
            if self.accept("+"):
                v = ("bin", "+", v, self.term())
            elif self.accept("-"):
                v = ("bin", "-", v, self.term())
            else:
                return v

    def term(self):
        v = self.unary()
        while True:
            for op in ("*", "/", "%"):
                if self.accept(op):
                    v = ("bin", op, v, self.unary())
                    break
            else:
                return v

    def unary(self):
        if self.accept("-"):
            return ("neg", self.unary())
        self.skip()
        if self.s.startswith("!", self.pos) and not self.s.startswith("!=", self.pos):
            self.pos += 1
            return ("not", self.unary())
        if self.accept("("):
            v = self.expr()
            if not self.accept(")"):
                self.fail("missing ')'")
            return v
        self.skip()
        if self.pos >= len(self.s):
            self.fail("unexpected end")
        m = re.compile(r"\d+").match(self.s, self.pos)
        if m:
            self.pos = m.end()
            v = int(m.group())
            if v > (1 << 40):
                self.fail("number too large")
            return ("num", v)
        m = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").match(self.s, self.pos)
        if not m:
            self.fail(f"unexpected '{self.s[self.pos]}'")
        self.pos = m.end()
        name = m.group()
        if name in FUNCTIONS and name not in self.variables and self.accept("("):
            args = [self.expr()]
            for _ in range(FUNCTIONS[name] - 1):
                if not self.accept(","):
                    self.fail(f"missing ',' between {name}'s two arguments")
                args.append(self.expr())
            if not self.accept(")"):
                self.fail(f"missing ')' after {name}'s argument" + ("s" if len(args) > 1 else ""))
            return ("call", name, args)
        if name not in self.variables:
            self.fail(f"unknown variable '{name}' (known: {', '.join(sorted(self.variables))})")
        return ("var", name)


def parse_expr(text, variables):
    """The tree of `text`; every identifier must be one of `variables` (as in kernlab, also in a
    branch that is never taken)."""
    return _Parser(text, set(variables)).parse()


def _c_div(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _checked(text, v):
    if not INT64_MIN <= v <= INT64_MAX:
        raise ExprError(f"in expression '{text}': the value does not fit in 64 bits")
    return v


def c_eval(node, env, text="?"):
    """Evaluates a tree as kernlab does: int64, truncating / and %, 1/0 for comparisons and
    logic, the branch not taken never evaluated."""
    kind = node[0]
    if kind == "num":
        return node[1]
    if kind == "var":
        return env[node[1]]
    if kind == "neg":
        return _checked(text, -c_eval(node[1], env, text))
    if kind == "not":
        return 1 if c_eval(node[1], env, text) == 0 else 0
    if kind == "cond":
        return c_eval(node[2] if c_eval(node[1], env, text) != 0 else node[3], env, text)
    if kind == "call":
        name, args = node[1], node[2]
        a = c_eval(args[0], env, text)
        if name == "sqrt":
            if a < 0:
                raise ExprError(f"in expression '{text}': sqrt of a negative value")
            return math.isqrt(a)
        b = c_eval(args[1], env, text)
        if name == "min":
            return min(a, b)
        if name == "max":
            return max(a, b)
        if b == 0:  # ceil_div
            raise ExprError(f"in expression '{text}': ceil_div by zero")
        q = _c_div(a, b)
        return _checked(text, q + (1 if a - b * q != 0 and (a < 0) == (b < 0) else 0))
    op, x, y = node[1], node[2], node[3]
    a = c_eval(x, env, text)
    if op == "&&":
        return 1 if a != 0 and c_eval(y, env, text) != 0 else 0
    if op == "||":
        return 1 if a != 0 or c_eval(y, env, text) != 0 else 0
    b = c_eval(y, env, text)
    if op in ("/", "%"):
        if b == 0:
            raise ExprError(f"in expression '{text}': division by zero")
        q = _c_div(a, b)
        return _checked(text, q if op == "/" else a - b * q)
    if op == "+":
        return _checked(text, a + b)
    if op == "-":
        return _checked(text, a - b)
    if op == "*":
        return _checked(text, a * b)
    return 1 if {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[op] else 0


def nonneg(node, signs):
    """Whether a tree is never negative, given which variables never are (`signs`: name ->
    bool). Conservative: a subtraction or a negation is not known to be."""
    kind = node[0]
    if kind == "num":
        return True
    if kind == "var":
        return signs.get(node[1], False)
    if kind == "not":
        return True
    if kind == "neg":
        return False
    if kind == "cond":
        return nonneg(node[2], signs) and nonneg(node[3], signs)
    if kind == "call":
        args = [nonneg(n, signs) for n in node[2]]
        return {"sqrt": True, "min": all(args), "max": any(args), "ceil_div": all(args)}[node[1]]
    op = node[1]
    if op in ("&&", "||", "<", "<=", ">", ">=", "==", "!="):
        return True
    if op in ("+", "*", "/", "%"):
        return nonneg(node[2], signs) and nonneg(node[3], signs)
    return False  # "-"


def to_python(node, names, signs=None):
    """A Python expression for a tree, every node parenthesized (so Python's precedence, its
    chained comparisons and its low-precedence `not` never apply), over `names` (variable ->
    Python text) and only the builtins abs, min, max and int. The translation: && -> and,
    || -> or, !x -> (x == 0), c ? a : b -> (a if c else b) (a non-boolean condition compared
    with 0), min/max -> min/max, ceil_div(a, b) -> -((-a) // b) (exact for any signs),
    sqrt(x) -> int(x ** 0.5), and / -> //, % -> % where both operands are never negative
    (`signs`, see nonneg); elsewhere / and % are written with abs() so that they truncate
    towards zero as C's do, where Python's // and % round towards minus infinity."""
    signs = signs or {}
    kind = node[0]
    if kind == "num":
        return str(node[1])
    if kind == "var":
        return names[node[1]]
    if kind == "neg":
        return f"(-{to_python(node[1], names, signs)})"
    if kind == "not":
        # not Python's `not`: its precedence is below the comparisons'
        return f"({to_python(node[1], names, signs)} == 0)"
    if kind == "cond":
        c, a, b = (to_python(n, names, signs) for n in node[1:])
        return f"({a} if {truth(node[1], c)} else {b})"
    if kind == "call":
        args = [to_python(n, names, signs) for n in node[2]]
        if node[1] == "sqrt":
            return f"int({args[0]} ** 0.5)"
        if node[1] == "ceil_div":
            return f"(-((-{args[0]}) // {args[1]}))"
        return f"{node[1]}({args[0]}, {args[1]})"
    op = node[1]
    a, b = to_python(node[2], names, signs), to_python(node[3], names, signs)
    if op in ("&&", "||"):
        return f"({truth(node[2], a)} {'and' if op == '&&' else 'or'} {truth(node[3], b)})"
    if op in ("/", "%") and not (nonneg(node[2], signs) and nonneg(node[3], signs)):
        q = f"(abs({a}) {'//' if op == '/' else '%'} abs({b}))"
        same_sign = f"(({a} >= 0) == ({b} >= 0))" if op == "/" else f"({a} >= 0)"
        return f"({q} if {same_sign} else (-{q}))"
    return f"({a} {'//' if op == '/' else op} {b})"


def truth(node, py):
    """`py` (the Python text of `node`) as a condition: a comparison or a logical operator is a
    Python bool already; anything else holds when it is not 0 (as in C)."""
    if node[0] == "not" or (node[0] == "bin" and node[1] in ("&&", "||", "<", "<=", ">", ">=", "==", "!=")):
        return py
    return f"{py} != 0"


def free_vars(node, out=None):
    out = set() if out is None else out
    if node[0] == "var":
        out.add(node[1])
    elif node[0] == "call":
        for n in node[2]:
            free_vars(n, out)
    elif node[0] != "num":
        for n in node[1:]:
            if isinstance(n, tuple):
                free_vars(n, out)
    return out


# ----------------------------------------------------------------------------------------------
# The header (docs/kernel_contract.md): the first block comment opening with "/* kernlab",
# "key: value" lines, '#' comments, ending at "*/".

KNOWN_KEYS = {"family", "entry", "blocks", "tile", "grid", "bounds", "shared_bytes", "dtypes", "ops",
              "summary", "order", "output", "workspace", "params", "block_dims", "grid_dims",
              "tune", "require", "points"}
RESERVED = {"BLOCK", "TSIZE", "GRID", "M", "N", "K", "T", "OP", "sqrt"}


def split_items(value):
    """The non-empty ';'-separated items of params, tune and require."""
    return [s.strip() for s in value.split(";") if s.strip()]


def split_dims(value):
    """'a, min(b, c)' -> ['a', 'min(b, c)']: commas inside parentheses belong to a call."""
    dims, cur, depth = [], "", 0
    for c in value + ",":
        depth += c == "("
        depth -= c == ")"
        if c != "," or depth > 0:
            cur += c
            continue
        if not cur.strip():
            raise HeaderError("an empty dimension")
        dims.append(cur.strip())
        cur = ""
    if len(dims) > 3:
        raise HeaderError("more than 3 dimensions (x, y, z)")
    return dims


def parse_int(text):
    if not re.fullmatch(r"[+-]?\d+", text.strip()):
        raise HeaderError(f"'{text.strip()}' is not an integer")
    v = int(text)
    if abs(v) > (1 << 40):
        raise HeaderError(f"'{text.strip()}' is not an integer")
    return v


def tunable_values(text):
    """'1, 2, 4' | '1..8' | '32..1024 pow2' (the powers of two in the range) | '4..64 step 4'."""
    text = text.strip()
    if ".." not in text:
        out = []
        for item in [s for s in re.split(r"[,\s]+", text) if s]:
            v = parse_int(item)
            if v in out:
                raise HeaderError(f"{item} is listed twice")
            out.append(v)
    else:
        lo_text, rest = text.split("..", 1)
        words = rest.split()
        if not words:
            raise HeaderError(f"'{text}' is not a range (a..b, a..b pow2 or a..b step s)")
        lo, hi = parse_int(lo_text), parse_int(words[0])
        if hi < lo:
            raise HeaderError(f"the range {text} is empty")
        if len(words) == 1:
            if hi - lo + 1 > TUNE_MAX_VALUES:
                raise HeaderError(f"the range {text} has more than {TUNE_MAX_VALUES} values")
            out = list(range(lo, hi + 1))
        elif words[1] == "pow2" and len(words) == 2:
            out = [1 << i for i in range(0, 64) if lo <= (1 << i) <= hi]
            if not out:
                raise HeaderError(f"no power of two in {lo}..{words[0]}")
        elif words[1] == "step" and len(words) == 3:
            step = parse_int(words[2])
            if step < 1:
                raise HeaderError("the step must be at least 1")
            if (hi - lo) // step + 1 > TUNE_MAX_VALUES:
                raise HeaderError(f"the range {text} has more than {TUNE_MAX_VALUES} values")
            out = list(range(lo, hi + 1, step))
        else:
            raise HeaderError(f"'{text}' is not a range (a..b, a..b pow2 or a..b step s)")
    if not out:
        raise HeaderError("no value")
    if len(out) > TUNE_MAX_VALUES:
        raise HeaderError(f"more than {TUNE_MAX_VALUES} values")
    return out


def read_header(path):
    """The header of a kernel file as a dict: family, entry, blocks, tunables [(name, values)],
    requires [text], params [(name, text)], block_dims, grid_dims, shared_bytes, lines."""
    text = Path(path).read_text(encoding="utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    h = {"path": str(path), "name": Path(path).stem, "tunables": [], "requires": [], "params": [],
         "block_dims": [], "grid_dims": [], "shared_bytes": "", "lines": {}, "points": []}
    inside = closed = False
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not inside:
            if line == "/* kernlab" or line.startswith("/* kernlab ") or line == "/*kernlab":
                inside, h["header_line"] = True, no
            continue
        ends = "*/" in line
        if ends:
            line = line[: line.index("*/")].strip()
        line = line.split("#", 1)[0].strip()
        if line:
            if ":" not in line:
                raise HeaderError(f"{path}:{no}: expected 'key: value', got '{line}'")
            key, value = (s.strip() for s in line.split(":", 1))
            where = f"{path}:{no}"
            if key not in KNOWN_KEYS:
                raise HeaderError(f"{where}: unknown key '{key}'")
            if key in h["lines"] and key != "points":  # points: may take several lines
                raise HeaderError(f"{where}: key '{key}' repeated")
            if not value and key != "summary":
                raise HeaderError(f"{where}: key '{key}' has no value")
            h["lines"].setdefault(key, no)
            try:
                if key == "blocks":
                    h["blocks"] = []
                    for item in [s for s in re.split(r"[,\s]+", value) if s]:
                        b = parse_int(item)
                        if not 1 <= b <= 1024 or b in h["blocks"]:
                            raise HeaderError(f"block size '{item}' is not an integer in 1..1024 listed once")
                        h["blocks"].append(b)
                    if not h["blocks"]:
                        raise HeaderError("blocks lists no block size")
                elif key == "tune":
                    for item in split_items(value):
                        name, _, values = (s.strip() for s in item.partition("="))
                        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or not values:
                            raise HeaderError(f"tune: '{item}' is not 'NAME = values'")
                        if name in RESERVED or any(name == n for n, _ in h["tunables"]):
                            raise HeaderError(f"tune: '{name}' is reserved or given twice")
                        h["tunables"].append((name, tunable_values(values)))
                elif key == "require":
                    h["requires"] = split_items(value)
                elif key == "points":
                    # name(NAME=v, NAME=v) "summary"; ... (kernlab checks them; kernlab's
                    # variant name for the point is all this script needs)
                    items = re.findall(r'\s*([A-Za-z0-9_][A-Za-z0-9_-]*)\s*\(([^)]*)\)\s*(?:"[^"]*")?\s*(?:;|$)', value)
                    if not items:
                        raise HeaderError(f"'{value}' is not 'name(NAME=value, ...)'")
                    for name, inner in items:
                        values = {}
                        for a in inner.split(","):
                            k, _, v = (x.strip() for x in a.partition("="))
                            values[k] = parse_int(v)
                        h["points"].append((name, values))
                elif key == "params":
                    for item in split_items(value):
                        name, _, expr = (s.strip() for s in item.partition("="))
                        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or not expr:
                            raise HeaderError(f"params: '{item}' is not 'NAME = expression'")
                        if name in RESERVED or any(name == n for n, _ in h["params"]):
                            raise HeaderError(f"params: '{name}' is reserved or given twice")
                        h["params"].append((name, expr))
                elif key in ("block_dims", "grid_dims"):
                    h[key] = split_dims(value)
                else:
                    h[key] = value
            except HeaderError as e:
                raise HeaderError(f"{where}: {key}: {e}") from None
        if ends:
            closed = True
            break
    if not inside:
        raise HeaderError(f"{path}:1: no kernlab header ('/* kernlab' block comment)")
    if not closed:
        raise HeaderError(f"{path}:{h['header_line']}: the kernlab header is never closed with '*/'")
    for key in ("family", "entry", "blocks"):
        if key not in h:
            raise HeaderError(f"{path}: the kernlab header lacks the required key '{key}'")
    if h["family"] != "matmul":
        raise HeaderError(f"{path}: family '{h['family']}': this script tunes matmul files only")
    if len(h["block_dims"]) < 2 or len(h["grid_dims"]) < 2:
        raise HeaderError(f"{path}: a matmul header needs block_dims and grid_dims (x, y)")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_:]*\s*(<.*>)?", h["entry"]):
        raise HeaderError(f"{path}: entry '{h['entry']}' is not a function template-id")
    tnames = {n for n, _ in h["tunables"]}
    for n, _ in h["params"]:
        if n in tnames:
            raise HeaderError(f"{path}: params: '{n}' is also a tunable (tune:)")
    if h["requires"] and not h["tunables"]:
        raise HeaderError(f"{path}: require constrains tunables: the header has no 'tune:'")
    for n in list(tnames) + [n for n, _ in h["params"]]:
        if n in FORBIDDEN_NAMES or keyword.iskeyword(n) or n.startswith("nvml_"):
            raise HeaderError(f"{path}: the name '{n}' cannot be a Kernel Tuner parameter here")
    return h


def substitute_words(text, words):
    """Whole-word replacement, as kernlab substitutes placeholders in `entry`."""
    return re.sub(r"[A-Za-z_][A-Za-z0-9_]*", lambda m: str(words.get(m.group(), m.group())), text)


# ----------------------------------------------------------------------------------------------
# The space, as kernlab builds it (host/src/spec/metadata.cpp, expand_tunables): the product of
# the tunables' values, the first varying slowest; at each point the blocks where every
# require holds; a point with no block is left out. Each (point, block) is one configuration:
# one row of kernlab's table, one configuration of Kernel Tuner's space.

def build_space(h, shape):
    M, N, K = shape
    tnames = [n for n, _ in h["tunables"]]
    point_vars = ["BLOCK"] + tnames
    req_trees = [(r, parse_expr(r, point_vars)) for r in h["requires"]]
    param_trees, known = [], ["BLOCK", "TSIZE"] + tnames
    for name, text in h["params"]:
        param_trees.append((name, text, parse_expr(text, known)))  # params never see the shape
        known.append(name)
    block_trees = [(t, parse_expr(t, known)) for t in h["block_dims"]]
    grid_trees = [(t, parse_expr(t, known + ["M", "N", "K"])) for t in h["grid_dims"]]
    shared_tree = parse_expr(h["shared_bytes"], known + ["M", "N", "K"]) if h["shared_bytes"] else None

    total = 1
    for _, values in h["tunables"]:
        total *= len(values)
    if total > TUNE_MAX_POINTS:
        raise HeaderError(f"{h['path']}: tune: more than {TUNE_MAX_POINTS} points")

    def points(i=0, acc=()):
        if i == len(h["tunables"]):
            yield dict(acc)
            return
        name, values = h["tunables"][i]
        for v in values:
            yield from points(i + 1, acc + ((name, v),))

    configs, n_points, raw = [], 0, []
    for point in points():
        blocks = []
        for b in h["blocks"]:
            env = dict(point, BLOCK=b)
            ok = True
            for text, tree in req_trees:
                try:
                    ok = ok and c_eval(tree, env, text) != 0
                except ExprError as e:
                    raise HeaderError(f"{h['path']}: require: {e} (it sees BLOCK and the tunables)")
            raw.append((point, b, ok))
            if ok:
                blocks.append(b)
        if not blocks:
            continue
        n_points += 1
        suffix = ";".join(f"{k}={v}" for k, v in point.items())
        kl_name = f"{h['name']}[{suffix}]" if point else h["name"]
        kl_name = next((n for n, values in h["points"] if values == point), kl_name)  # points:
        for b in blocks:
            env = dict(point, BLOCK=b, TSIZE=TSIZE)
            try:
                params = {}
                for name, text, tree in param_trees:
                    env[name] = params[name] = c_eval(tree, env, text)
                block = [c_eval(t, env, s) for s, t in block_trees]
                genv = dict(env, M=M, N=N, K=K)
                grid = [c_eval(t, genv, s) for s, t in grid_trees]
                shared = c_eval(shared_tree, genv, h["shared_bytes"]) if shared_tree else 0
            except ExprError as e:
                raise HeaderError(f"{h['path']}: {kl_name} at BLOCK={b}: {e}")
            if any(d < 1 for d in block + grid):
                raise HeaderError(f"{h['path']}: {kl_name} at BLOCK={b}: a block or grid dimension below 1 "
                                  f"(block {block}, grid {grid})")
            if math.prod(block) != b:
                raise HeaderError(f"{h['path']}: {kl_name}: block_dims give {math.prod(block)} threads for "
                                  f"BLOCK={b} (their product must be the block size)")
            block += [1] * (3 - len(block))
            grid += [1] * (3 - len(grid))
            words = dict(point, BLOCK=b, T="float", **params)
            configs.append({
                "point": point, "block_size": b, "params": params, "block": block, "grid": grid,
                "shared_bytes": shared, "kl_name": kl_name,
                "name_expression": substitute_words(h["entry"], words),
                # kernlab skips a launch past CUDA's limits (y and z at most 65535)
                "grid_ok": grid[0] <= MAX_ELEMENTS and grid[1] <= 65535 and grid[2] <= 65535,
            })
    if not configs:
        raise HeaderError(f"{h['path']}: require leaves none of the {total} points at any of the blocks")
    return {"configs": configs, "points": n_points, "product": total, "raw": raw,
            "param_trees": param_trees, "block_trees": block_trees, "req_trees": req_trees}


# ----------------------------------------------------------------------------------------------
# Kernel Tuner's view of the same space.

def kt_problem(h, space):
    """tune_params, restrictions, block_size_names and the kernel name for Kernel Tuner.

    - tune_params: each tunable with the header's values, in the header's order, then
      block_size_x with the `blocks:` values (kernlab's BLOCK). A `params:` entry that the
      entry names (COLS in `k<BLOCK, BM, COLS>` with `COLS = BN / TN`) is a parameter of its own
      whose value a restriction ties to its expression: Kernel Tuner substitutes only tuning
      parameters into the kernel name. When the block is not (BLOCK, 1, 1) everywhere,
      kl_block_x/y/z likewise carry block_dims, and block_size_names points Kernel Tuner at them.
      Such derived parameters take one value per configuration, so the count is unchanged.
    - restrictions: one string per require, "<python> and True" (see to_python). The " and True"
      keeps python-constraint2's string parser from rewriting the expression into its numeric
      constraints with regular expressions: 2.9 turns "BN // TN == COLS" into the product
      constraint BN == COLS * TN (wrong where the division is not exact) and splits expressions
      with several comparisons. With it, each restriction is one function of the parameters it
      names. Each derived parameter's restriction is guarded by every require, so its expression
      is only evaluated where kernlab evaluates it.
    - the kernel name: `entry` with BLOCK -> block_size_x and T -> float; Kernel Tuner replaces
      each parameter's name in it by the configuration's value.
    """
    names = {"BLOCK": "block_size_x", "TSIZE": str(TSIZE)}
    signs = {"BLOCK": True, "TSIZE": True}  # which variables are never negative
    for n, values in h["tunables"]:
        names[n] = n
        signs[n] = min(values) >= 0
    param_py = {}
    for name, text, tree in space["param_trees"]:
        # Inlined: a param's Python text stands for its name in what follows, so every
        # restriction names only block_size_x and the tunables (and its own derived parameter).
        # to_python gives an atom, a call or a parenthesized expression: safe to substitute.
        param_py[name] = names[name] = to_python(tree, names, signs)
        signs[name] = nonneg(tree, signs)
    tune_params = {n: list(v) for n, v in h["tunables"]}
    tune_params["block_size_x"] = list(h["blocks"])

    req_py = []
    for text, tree in space["req_trees"]:
        if not free_vars(tree):
            # A condition on no parameter holds everywhere here (the space is not empty).
            continue
        req_py.append(truth(tree, to_python(tree, names, signs)))
    restrictions = [f"{r} and True" for r in req_py]
    ties = {}  # derived parameter -> its Python expression
    guard = " and ".join(req_py)

    def tie(param, py):
        ties[param] = py
        return f"{guard} and ({param} == {py})" if guard else f"({param} == {py}) and True"

    entry_words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", h["entry"]))
    derived = []
    for name, _, _ in space["param_trees"]:
        if name in entry_words:
            tune_params[name] = sorted({c["params"][name] for c in space["configs"]})
            restrictions.append(tie(name, param_py[name]))
            derived.append(name)

    configs = space["configs"]
    simple_block = all(c["block"] == [c["block_size"], 1, 1] for c in configs)
    block_size_names = None
    block_dims_params = []
    if not simple_block:
        block_size_names = []
        for i, axis in enumerate("xyz"):
            values = sorted({c["block"][i] for c in configs})
            pname = f"kl_block_{axis}"
            if i < len(space["block_trees"]) and (i == 0 or values != [1]):
                tune_params[pname] = values
                restrictions.append(tie(pname, to_python(space["block_trees"][i][1], names, signs)))
                block_dims_params.append(pname)
                block_size_names.append(pname)
            else:
                block_size_names.append(f"block_size_{axis}")  # not a parameter: Kernel Tuner uses 1
        while block_size_names and block_size_names[-1] not in tune_params:
            block_size_names.pop()
    kernel_name = substitute_words(h["entry"], {"BLOCK": "block_size_x", "T": "float"})
    return {"tune_params": tune_params, "restrictions": restrictions, "block_size_names": block_size_names,
            "kernel_name": kernel_name, "derived": derived, "block_dims_params": block_dims_params,
            "param_python": param_py, "require_python": req_py, "ties": ties}


def config_key_names(kt):
    return list(kt["tune_params"].keys())


def kt_values(c, kt):
    """A configuration as Kernel Tuner's parameters."""
    p = dict(c["point"])
    p["block_size_x"] = c["block_size"]
    for n in kt["derived"]:
        p[n] = c["params"][n]
    for i, n in enumerate(("kl_block_x", "kl_block_y", "kl_block_z")):
        if n in kt["tune_params"]:
            p[n] = c["block"][i]
    return p


def kt_name_for(kernel_name, params):
    """What Kernel Tuner 1.5's util.replace_param_occurrences makes of the kernel name: each
    token ([a-zA-Z0-9_]+) that is a parameter's name replaced by its value."""
    return "".join(str(params[t]) if t in params else t for t in re.split(r"([a-zA-Z0-9_]+)", kernel_name))


def check_translation(h, space, kt):
    """The Python restrictions against kernlab's C evaluation: on every (point, block) of the
    product, the requires' Python translation must hold exactly where kernlab keeps the
    configuration, and each derived parameter's restriction must hold for its kernlab value
    only (every value of its domain is tried). Returns the disagreements (none: they agree)."""
    pnames = config_key_names(kt)
    safe = {"__builtins__": {"min": min, "max": max, "int": int, "abs": abs}}
    base_names = [n for n in pnames if n not in kt["ties"]]
    problems = []
    try:
        reqs = [eval(f"lambda {', '.join(base_names)}: {r}", safe) for r in kt["restrictions"][:len(kt["require_python"])]]
        ties = {n: eval(f"lambda {', '.join(base_names + [n])}: {kt['restrictions'][len(kt['require_python']) + i]}", safe)
                for i, n in enumerate(kt["ties"])}
    except SyntaxError as e:
        return [f"a restriction does not compile: {e}"]
    valid = {}
    for c in space["configs"]:
        valid[(tuple(c["point"].items()), c["block_size"])] = kt_values(c, kt)
    checked = 0
    for point, b, _ in space["raw"]:
        p = dict(point, block_size_x=b)
        want = valid.get((tuple(point.items()), b))
        try:
            got = all(f(**p) for f in reqs)
            checked += 1
            if got != (want is not None):
                problems.append(f"{p}: the Python requires say {'valid' if got else 'invalid'}, kernlab "
                                f"{'valid' if want else 'invalid'}")
            for n, f in ties.items():
                for v in kt["tune_params"][n]:
                    ok = bool(f(**p, **{n: v}))
                    checked += 1
                    expect = want is not None and want[n] == v
                    if ok != expect:
                        problems.append(f"{p}, {n}={v}: Python says {ok}, kernlab {expect}")
        except Exception as e:  # noqa: BLE001
            problems.append(f"{p}: {type(e).__name__}: {e}")
        if len(problems) > 20:
            break
    kt["translation_checked"] = checked
    return problems


def kt_searchspace(kt, max_threads=1024):
    """Kernel Tuner's own Searchspace of the same parameters and restrictions (needs
    kernel_tuner), as a set of tuples in tune_params' order, and the seconds it took."""
    from kernel_tuner.searchspace import Searchspace
    t0 = time.perf_counter()
    # As tune_kernel 1.5 builds it: block_size_names are not passed (its MaxProdConstraint is on
    # the default names it finds: block_size_x, at most 1024 here anyway).
    ss = Searchspace(kt["tune_params"], list(kt["restrictions"]), max_threads)
    return {tuple(c) for c in ss.list}, ss.size, time.perf_counter() - t0


def compare_space(space, kt):
    """Kernel Tuner's Searchspace against the space enumerated here: a list of differences."""
    pnames = config_key_names(kt)
    want = {tuple(kt_values(c, kt)[n] for n in pnames) for c in space["configs"]}
    got, size, secs = kt_searchspace(kt)
    out = []
    if size != len(got):
        out.append(f"Kernel Tuner's space has {size} entries, {len(got)} distinct")
    for t in sorted(want - got)[:5]:
        out.append(f"missing from Kernel Tuner's space: {dict(zip(pnames, t))}")
    for t in sorted(got - want)[:5]:
        out.append(f"in Kernel Tuner's space, not in kernlab's: {dict(zip(pnames, t))}")
    return out, size, secs


def kernlab_list(binary, kernel_path, name, named=()):
    """kernlab's own --list of the file: {variant name: [blocks]} (the family prefix dropped);
    `named`: the names its points: gives some of its points."""
    kernels_dir = Path(kernel_path).resolve().parent.parent
    cmd = [str(binary), "--kernels-dir", str(kernels_dir), "--list", "--variant", name]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {(p.stderr or p.stdout).strip()[-2000:]}")
    rows = {}
    for line in p.stdout.splitlines():
        m = re.match(r"^matmul\.(\S+)\s+(\S+)\s+(?:source|plugin)\b", line)
        if m and (m.group(1) == name or m.group(1).startswith(name + "[") or m.group(1) in named):
            rows[m.group(1)] = [int(b) for b in m.group(2).split(",")]
    return rows, cmd


def compare_kernlab_list(space, rows):
    mine = {}
    for c in space["configs"]:
        mine.setdefault(c["kl_name"], []).append(c["block_size"])
    out = []
    for n in sorted(set(mine) | set(rows)):
        if mine.get(n) != rows.get(n):
            out.append(f"{n}: here blocks {mine.get(n)}, kernlab {rows.get(n)}")
    return out


# ----------------------------------------------------------------------------------------------
# NVRTC for --dry-run (no device needed): the exact source and name expression Kernel Tuner
# compiles, through libnvrtc with ctypes, else CuPy's NVRTC bindings.

def find_nvrtc():
    import ctypes
    import ctypes.util
    tried = []
    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    candidates = [os.path.join(d, "lib64", f) for d in homes if d for f in ("libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12")]
    candidates += ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", ctypes.util.find_library("nvrtc")]
    for c in [c for c in candidates if c]:
        try:
            return ctypes.CDLL(c), c
        except OSError as e:
            tried.append(str(e))
    return None, "; ".join(tried[-2:])


def nvrtc_compile(lib, source, name_expr, options):
    """(ok, log, lowered name, seconds)."""
    import ctypes
    t0 = time.perf_counter()
    prog = ctypes.c_void_p()
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"kernel.cu", 0, None, None)
    if rc:
        return False, f"nvrtcCreateProgram: {rc}", None, 0.0
    try:
        lib.nvrtcAddNameExpression(prog, name_expr.encode())
        opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
        rc = lib.nvrtcCompileProgram(prog, len(options), opts)
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value + 1)
        lib.nvrtcGetProgramLog(prog, buf)
        lowered = None
        if rc == 0:
            ptr = ctypes.c_char_p()
            if lib.nvrtcGetLoweredName(prog, name_expr.encode(), ctypes.byref(ptr)) == 0:
                lowered = ptr.value.decode()
        return rc == 0, buf.value.decode(errors="replace"), lowered, time.perf_counter() - t0
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


def cupy_nvrtc_compile(source, name_expr, options):
    from cupy_backends.cuda.libs import nvrtc
    t0 = time.perf_counter()
    prog = nvrtc.createProgram(source, "kernel.cu", [], [])
    try:
        nvrtc.addNameExpression(prog, name_expr)
        try:
            nvrtc.compileProgram(prog, list(options))
            ok = True
        except nvrtc.NVRTCError:
            ok = False
        log = nvrtc.getProgramLog(prog)
        lowered = nvrtc.getLoweredName(prog, name_expr) if ok else None
        return ok, log, lowered, time.perf_counter() - t0
    finally:
        nvrtc.destroyProgram(prog)


def pick(configs, n):
    if n >= len(configs):
        return list(configs)
    idx = sorted({round(i * (len(configs) - 1) / max(1, n - 1)) for i in range(n)})
    return [configs[i] for i in idx]


# ----------------------------------------------------------------------------------------------
# Inputs and reference, as kernlab's matmul makes them (host/src/families/matmul.cpp): one
# SplitMix64 stream seeded with --seed fills A (M x K, row-major) and then B (K x N); exact
# mode maps each 64-bit draw r to ((r >> 32) % 9 - 4) / 4, so every product is a multiple of
# 1/16 and every sum of K <= 2^20 of them is exact in float32, in any order.

def splitmix_exact(np, seed, first, count, chunk=1 << 22):
    """float32 values of draws first+1 .. first+count (1-based) of SplitMix64(seed)."""
    out = np.empty(count, dtype=np.float32)
    golden = np.uint64(0x9E3779B97F4A7C15)
    m1, m2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
    s30, s27, s31, s32 = (np.uint64(v) for v in (30, 27, 31, 32))
    for lo in range(0, count, chunk):
        n = min(chunk, count - lo)
        z = np.arange(first + lo + 1, first + lo + 1 + n, dtype=np.uint64)
        z *= golden
        z += np.uint64(seed)
        z ^= z >> s30
        z *= m1
        z ^= z >> s27
        z *= m2
        z ^= z >> s31
        k = ((z >> s32) % np.uint64(9)).astype(np.int32) - 4
        out[lo:lo + n] = k.astype(np.float32) / np.float32(4)
    return out


def make_problem(np, shape, seed):
    M, N, K = shape
    with np.errstate(over="ignore"):
        A = splitmix_exact(np, seed, 0, M * K)
        B = splitmix_exact(np, seed, M * K, K * N)
    t0 = time.perf_counter()
    ref = A.reshape(M, K).astype(np.float64) @ B.reshape(K, N).astype(np.float64)
    ref_s = time.perf_counter() - t0
    ref32 = ref.astype(np.float32)
    # Exact inputs: the float64 reference is a float32 value everywhere, so comparing float32
    # results with its float32 copy is comparing them with the float64 reference.
    if not np.array_equal(ref32.astype(np.float64), ref):
        raise RuntimeError("the float64 reference is not exactly a float32 matrix: exact mode does not hold")
    return A, B, ref32.ravel(), ref_s


# ----------------------------------------------------------------------------------------------
# Tuning

class Verifier:
    """Kernel Tuner's answer and verify: exact comparison (tolerance 0; atol is not used).

    A verify function returning False makes tune_kernel raise and lose the rest of the run, so a
    mismatch is recorded here, returned as True, and the configuration is reported as WRONG and
    never ranked. The answer is a kernel_tuner Tunable whose selector Kernel Tuner calls with
    the configuration's parameters just before it verifies that configuration: that is how a
    mismatch is tied to its configuration."""

    def __init__(self, np, names, expected, index):
        self.np, self.names, self.expected, self.index = np, names, expected, index
        self.current = None
        self.wrong, self.verified = {}, set()

    def key(self, params):
        return tuple(params.get(n) for n in self.names)

    def answer(self, n_args):
        from kernel_tuner.accuracy import Tunable
        ans = [None] * n_args
        ans[self.index] = self.expected

        def select(params):
            self.current = self.key(params)
            return 0
        return Tunable(select, {0: ans})

    def verify(self, answer, result_host, atol=None):
        np = self.np
        self.verified.add(self.current)
        got = np.asarray(result_host[self.index]).ravel()
        exp = self.expected
        if got.shape == exp.shape and np.array_equal(got, exp):
            return True
        if got.shape != exp.shape:
            self.wrong[self.current] = f"shape {got.shape}, expected {exp.shape}"
        else:
            bad = np.flatnonzero(~(got == exp))
            i = int(bad[0])
            self.wrong[self.current] = (f"{bad.size} of {exp.size} elements differ; first C[{i}]: "
                                        f"expected {float(exp[i])}, got {float(got[i])}")
        return True


def json_safe(o):
    if isinstance(o, dict):
        return {str(k): json_safe(v) for k, v in o.items()}
    if isinstance(o, (list, tuple, set)):
        return [json_safe(v) for v in o]
    if hasattr(o, "item") and hasattr(o, "dtype") and getattr(o, "shape", None) == ():
        return json_safe(o.item())
    if hasattr(o, "tolist"):
        return json_safe(o.tolist())
    if isinstance(o, float):
        return o if math.isfinite(o) else str(o)
    if o is None or isinstance(o, (str, int, bool)):
        return o
    if isinstance(o, bytes):
        return o.decode(errors="replace")
    return str(o)


def versions():
    from importlib import metadata
    out = {"python": platform.python_version(), "platform": platform.platform()}
    for d in ("kernel_tuner", "python-constraint2", "numpy", "scipy", "cupy-cuda13x", "cupy-cuda12x",
              "cupy", "cuda-bindings", "cuda-python"):
        try:
            out[d] = metadata.version(d)
        except metadata.PackageNotFoundError:
            pass
    return out


def choose_lang(requested):
    """cupy when CuPy is installed, else nvcuda (cuda-bindings). No probe kernel: the CUDA context is
    created inside tune_kernel, so its wall time includes it, as kernlab's includes its own."""
    if requested != "auto":
        return requested
    import importlib.util
    # Found, not imported: CuPy's import belongs to tune_kernel's start-up, as it would be
    # for a user of Kernel Tuner.
    return "cupy" if importlib.util.find_spec("cupy") is not None else "nvcuda"


def include_options(kernel_path):
    dirs = []
    for d in (Path(kernel_path).resolve().parent.parent / "include", REPO / "kernels_src" / "include"):
        if d.is_dir() and str(d) not in dirs:
            dirs.append(str(d))
    return [f"-I{d}" for d in dirs]


def run_tuning(args, h, space, kt, report):
    import numpy as np
    import kernel_tuner

    M, N, K = args.shape
    configs = space["configs"]
    pnames = config_key_names(kt)
    by_key = {tuple(kt_values(c, kt)[n] for n in pnames): c for c in configs}

    def lookup(p):
        return by_key[tuple(p[n] for n in pnames)]

    t0 = time.perf_counter()
    A, B, ref, ref_s = make_problem(np, args.shape, args.seed)
    C = np.full(M * N, np.nan, dtype=np.float32)  # kernlab poisons C with NaN before validating
    report["setup_s"] = time.perf_counter() - t0
    report["reference"] = {"how": "numpy float64 A @ B (float64 inputs), equal to its float32 copy "
                                  "(checked), compared exactly with each result",
                           "seconds": ref_s, "tolerance": 0}
    verifier = Verifier(np, pnames, ref, 2)
    arguments = [A, B, C, np.int32(M), np.int32(N), np.int32(K)]
    flops = 2.0 * M * N * K
    strategy_options = {}
    if args.budget is not None:
        strategy_options["max_fevals"] = args.budget
    source = Path(args.kernel).read_text(encoding="utf-8")
    try:
        # Kernel Tuner looks for the kernel's signature with the name as a regular expression
        # (util.check_argument_list); a name that is not one is passed as a generator of the same
        # source instead, which that check skips.
        re.compile(kt["kernel_name"] + r"[ \n\t]*\(")
        kernel_source = source
    except re.error:
        kernel_source = lambda params: source  # noqa: E731
    kwargs = dict(
        kernel_name=kt["kernel_name"], kernel_source=kernel_source,
        problem_size=lambda p: tuple(lookup(p)["grid"]), grid_div_x=[], grid_div_y=[], grid_div_z=[],
        arguments=arguments, tune_params=kt["tune_params"], restrictions=list(kt["restrictions"]),
        answer=verifier.answer(len(arguments)), verify=verifier.verify, lang=args.lang_chosen,
        compiler_options=report["compiler_options"], defines={}, iterations=args.iterations,
        block_size_names=list(kt["block_size_names"]) if kt["block_size_names"] else None,
        metrics={"GFLOP/s": lambda p: flops / 1e6 / p["time"]}, strategy=args.strategy,
        strategy_options=strategy_options or None, quiet=not args.kt_verbose, verbose=args.kt_verbose)
    if any(c["shared_bytes"] for c in configs):
        kwargs["smem_args"] = {"size": lambda p: lookup(p)["shared_bytes"]}
    if args.strategy_seed is not None:
        # Kernel Tuner 1.5 passes `seed` to its pymoo strategies only; random_sample and the
        # others draw from Python's and numpy's global generators.
        import random
        random.seed(args.strategy_seed)
        np.random.seed(args.strategy_seed)
        kwargs["seed"] = args.strategy_seed
    report["kernel_tuner_call"] = {k: v for k, v in kwargs.items()
                                   if k not in ("kernel_source", "arguments", "answer", "verify", "metrics",
                                                "problem_size", "smem_args")}
    report["kernel_tuner_call"]["problem_size"] = "grid_dims per configuration, grid_div_* = [] (grid = problem_size)"
    t0 = time.perf_counter()
    started = datetime.datetime.now(datetime.timezone.utc)
    try:
        results, env = kernel_tuner.tune_kernel(**kwargs)
    finally:
        report["tune_wall_s"] = time.perf_counter() - t0
    rows = []
    for r in results:
        p = {n: r.get(n) for n in pnames}
        try:
            c = lookup(p)
        except KeyError:
            c = None
        key = tuple(p[n] for n in pnames)
        row = {"params": p, "kernlab_name": c["kl_name"] if c else None,
               "block_size": p.get("block_size_x"), "block": c["block"] if c else None,
               "grid": c["grid"] if c else None, "name_expression": kt_name_for(kt["kernel_name"], p)}
        err = r.get("__error__")
        times = [float(t) for t in (r.get("times") or [])]
        # When its result came back, from Kernel Tuner's own timestamp: the time to quality.
        if r.get("timestamp"):
            try:
                row["at_s"] = (datetime.datetime.fromisoformat(str(r["timestamp"])) - started).total_seconds()
            except (TypeError, ValueError):
                pass
        if err is not None:
            row["status"], row["error"] = "failed", f"{type(err).__name__}: {err}"
        elif key in verifier.wrong:
            row["status"], row["error"] = "WRONG", verifier.wrong[key]
        elif key not in verifier.verified:
            row["status"], row["error"] = "unverified", "Kernel Tuner did not run the verification"
        else:
            row["status"] = "passed"
        if err is None and r.get("time") is not None:
            row["time_ms"] = float(r["time"])
            row["times_ms"] = times
            if times:
                row["min_ms"], row["median_ms"] = min(times), float(np.median(times))
            if "GFLOP/s" in r:
                row["gflops"] = float(r["GFLOP/s"])
        for src, dst in (("compile_time", "compile_ms"), ("verification_time", "verification_ms"),
                         ("benchmark_time", "benchmark_ms"), ("framework_time", "framework_ms"),
                         ("strategy_time", "strategy_ms")):
            if r.get(src) is not None:
                row[dst] = float(r[src])
        row["accounted_ms"] = sum(row.get(k, 0.0) for k in ("compile_ms", "verification_ms", "benchmark_ms",
                                                             "framework_ms", "strategy_ms"))
        rows.append(row)
    passed = [r for r in rows if r["status"] == "passed" and "time_ms" in r]
    best = min(passed, key=lambda r: r["time_ms"]) if passed else None
    accounted = sum(r["accounted_ms"] for r in rows) / 1000.0
    wall = report["tune_wall_s"]
    report.update({
        "device": {k: v for k, v in env.items() if k in ("device_name", "compute_capability", "cuda_version",
                                                         "uuid", "pci_bus_id", "iterations", "compiler_options")},
        "kt_env_totals_ms": {k: env.get(k) for k in ("total_framework_time", "total_strategy_time",
                                                     "total_compile_time", "total_verification_time",
                                                     "total_benchmark_time", "overhead_time") if k in env},
        "evaluated": len(rows), "passed": len(passed),
        "failed": sum(r["status"] == "failed" for r in rows),
        "wrong": sum(r["status"] == "WRONG" for r in rows),
        "unverified": sum(r["status"] == "unverified" for r in rows),
        "configs_per_s": len(rows) / wall if wall > 0 else None,
        "accounted_s": accounted,
        "startup_s": wall - accounted,
        "best": best, "results": rows,
    })
    return report


# ----------------------------------------------------------------------------------------------
# Printing

def fmt(v, spec=".4g"):
    return format(v, spec) if isinstance(v, (int, float)) else "-"


def print_table(report, limit):
    rows = report["results"]
    order = sorted(rows, key=lambda r: (r["status"] != "passed", r.get("time_ms", float("inf"))))
    cols = ["kernlab variant", "block", "status", "time ms", "min ms", "GFLOP/s", "compile ms",
            "verify ms", "bench ms", "other ms"]
    table = []
    for r in order[: limit or None]:
        other = (r.get("framework_ms") or 0) + (r.get("strategy_ms") or 0)
        table.append([str(r["kernlab_name"]), str(r["block_size"]), r["status"], fmt(r.get("time_ms")),
                      fmt(r.get("min_ms")), fmt(r.get("gflops"), ".1f"), fmt(r.get("compile_ms"), ".1f"),
                      fmt(r.get("verification_ms"), ".1f"), fmt(r.get("benchmark_ms"), ".1f"), fmt(other, ".1f")])
    widths = [max([len(c)] + [len(t[i]) for t in table]) for i, c in enumerate(cols)]
    line = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))  # noqa: E731
    print(line(cols))
    for t in table:
        print(line(t))
    if limit and len(rows) > limit:
        print(f"... {len(rows) - limit} more in kt_tune.json")
    for r in rows:
        if r["status"] != "passed":
            print(f"{r['status']}: {r['kernlab_name']} block {r['block_size']}: {r.get('error')}")


def print_summary(report):
    b = report.get("best")
    M, N, K = report["shape"]
    print(f"\nKernel Tuner {report['packages'].get('kernel_tuner')} ({report['lang']}), strategy "
          f"{report['strategy']}, {report['iterations']} iterations (time = their mean, no L2 flush), "
          f"matmul {M}x{N}x{K}, exact inputs, seed {report['seed']}")
    print(f"space: {report['space']['configs']} configurations ({report['space']['points']} points); "
          f"evaluated {report['evaluated']}: {report['passed']} passed, {report['failed']} failed, "
          f"{report['wrong']} wrong, {report['unverified']} unverified")
    print(f"tune_kernel wall {report['tune_wall_s']:.2f} s = {report['configs_per_s']:.2f} configurations/s; "
          f"per-configuration times sum to {report['accounted_s']:.2f} s, start-up and the rest "
          f"{report['startup_s']:.2f} s; inputs and reference {report['setup_s']:.2f} s before it")
    if b:
        print(f"best: {b['kernlab_name']} block {b['block_size']}: {b['time_ms']:.4g} ms "
              f"({b.get('gflops', 0) / 1000:.2f} TFLOP/s)")
    else:
        print("best: none passed")


# ----------------------------------------------------------------------------------------------
# Side by side with a kernlab results file (docs/results_format.md)

def find_wall(doc):
    """A whole-run wall time in a kernlab file, if it has one: (seconds, field) or (None, None)."""
    for where, obj in (("", doc), ("reproducibility.", doc.get("reproducibility") or {}),
                       ("tune.", doc.get("tune") or {})):
        if not isinstance(obj, dict):
            continue
        for k, v in obj.items():
            if isinstance(v, (int, float)) and re.fullmatch(r"(total_|tune_)?wall_(s|ms)", k):
                return (v / 1000.0 if k.endswith("_ms") else float(v)), where + k
    return None, None


def parse_kl_name(name):
    """'tunable[BM=128;BN=64]' -> ('tunable', {'BM': 128, 'BN': 64})."""
    m = re.fullmatch(r"([^\[]+)(?:\[(.*)\])?", name or "")
    if not m:
        return name, {}
    point = {}
    for item in (m.group(2) or "").split(";"):
        if "=" in item:
            k, v = item.split("=", 1)
            point[k.strip()] = int(v)
    return m.group(1), point


def side_by_side(kt_report, kl_path, kl_wall, top):
    doc = json.loads(Path(kl_path).read_text())
    if doc.get("format") != "kernlab-results":
        raise SystemExit(f"{kl_path}: not a kernlab results file (format {doc.get('format')!r})")
    base = Path(kt_report["kernel"]["path"]).stem
    shape = list(kt_report["shape"])
    recs = []
    for r in doc.get("records", []):
        v = r.get("variant") or {}
        name, point = parse_kl_name(v.get("name"))
        if v.get("tunable_file"):  # written since named points: the file and point, as data
            name, point = v["tunable_file"], {k: val for k, val in v.get("point", [])}
        if v.get("family") != "matmul" or name != base:
            continue
        cs = (r.get("config") or {}).get("shape")
        if cs and list(cs) != shape:
            continue
        recs.append({"name": v.get("name"), "point": point, "block": r.get("block"), "outcome": r.get("outcome"),
                     "median_us": (r.get("timing") or {}).get("median_us"),
                     "mean_us": (r.get("timing") or {}).get("mean_us"), "tflops": r.get("tflops")})
    if not recs:
        raise SystemExit(f"{kl_path}: no matmul record of '{base}' at shape {'x'.join(map(str, shape))}")
    wall, field = (kl_wall, "--kernlab-wall") if kl_wall else find_wall(doc)
    kt_rows = {(r["kernlab_name"], r["block_size"]): r for r in kt_report["results"]}
    kl_pass = [r for r in recs if r["outcome"] == "passed" and r["median_us"]]
    kl_best = min(kl_pass, key=lambda r: r["median_us"]) if kl_pass else None
    kt_best = kt_report.get("best")
    print(f"\n== side by side: {base}, matmul {'x'.join(map(str, shape))} "
          f"(Kernel Tuner: {kt_report['json_path'] if 'json_path' in kt_report else 'this run'}; kernlab: {kl_path})")
    kt_cps = kt_report.get("configs_per_s")
    kl_cps = len(recs) / wall if wall else None
    rows = [
        ("configurations evaluated", str(kt_report["evaluated"]), str(len(recs)), ""),
        ("passed", str(kt_report["passed"]), str(len(kl_pass)), ""),
        ("wall time s", fmt(kt_report["tune_wall_s"], ".2f") + " (tune_kernel)",
         (fmt(wall, ".2f") + f" ({field})") if wall else "unknown: pass --kernlab-wall", ""),
        ("configurations / s", fmt(kt_cps, ".3f"), fmt(kl_cps, ".3f"),
         (fmt(kl_cps / kt_cps, ".2f") + "x kernlab/KT") if kt_cps and kl_cps else "-"),
    ]
    proc = kt_report.get("process_wall_s")
    if proc:
        # the whole script: imports, kernlab's inputs and the float64 reference, tune_kernel
        rows.append(("  (KT whole script)", f"{kt_report['evaluated'] / proc:.3f} in {proc:.2f} s", "",
                     (fmt(kl_cps / (kt_report["evaluated"] / proc), ".2f") + "x kernlab/KT") if kl_cps else "-"))
    rows += [
        ("best time us", fmt(kt_best["time_ms"] * 1000, ".1f") + " (mean)" if kt_best else "-",
         fmt(kl_best["median_us"], ".1f") + " (median)" if kl_best else "-",
         (fmt(kt_best["time_ms"] * 1000 / kl_best["median_us"], ".3f") + " KT/kernlab")
         if kt_best and kl_best else "-"),
        ("best configuration", f"{kt_best['kernlab_name']} block {kt_best['block_size']}" if kt_best else "-",
         f"{kl_best['name']} block {kl_best['block']}" if kl_best else "-", ""),
    ]
    w = [max(len(r[i]) for r in rows) for i in range(4)]
    print(f"{'':{w[0]}}  {'Kernel Tuner':>{w[1]}}  {'kernlab':>{w[2]}}  ratio")
    for r in rows:
        print(f"{r[0]:{w[0]}}  {r[1]:>{w[1]}}  {r[2]:>{w[2]}}  {r[3]}")
    if kt_best and kl_best:
        other = kt_rows.get((kl_best["name"], kl_best["block"]))
        if other and "time_ms" in other:
            print(f"kernlab's best as Kernel Tuner timed it: {other['time_ms'] * 1000:.1f} us (mean)")
        mine = next((r for r in recs if r["name"] == kt_best["kernlab_name"] and r["block"] == kt_best["block_size"]), None)
        if mine and mine["median_us"]:
            print(f"Kernel Tuner's best as kernlab timed it: {mine['median_us']:.1f} us (median)")
    matched = [(r, kt_rows[(r["name"], r["block"])]) for r in kl_pass if (r["name"], r["block"]) in kt_rows]
    matched = [(a, b) for a, b in matched if "time_ms" in b]
    if matched:
        print(f"\n{len(matched)} configurations timed by both; the {min(top, len(matched))} fastest by kernlab:")
        print(f"{'configuration':50}  {'block':>5}  {'kernlab med us':>14}  {'KT mean us':>10}  {'KT/kl':>6}")
        for a, b in sorted(matched, key=lambda x: x[0]["median_us"])[:top]:
            print(f"{a['name'][:50]:50}  {a['block']:>5}  {a['median_us']:>14.1f}  {b['time_ms'] * 1000:>10.1f}  "
                  f"{b['time_ms'] * 1000 / a['median_us']:>6.3f}")
    print("(Kernel Tuner: mean of its iterations, one launch each, L2 never flushed; kernlab: median, "
          "L2 flushed before each sample unless --flush none; configurations/s = configurations "
          "evaluated / the whole tuning's wall time)")
    return {"kt_configs_per_s": kt_cps, "kernlab_configs_per_s": kl_cps, "kernlab_wall_s": wall,
            "kernlab_wall_from": field, "kernlab_records": len(recs),
            "throughput_ratio_kernlab_over_kt": (kl_cps / kt_cps) if kt_cps and kl_cps else None,
            "kt_best_us": kt_best["time_ms"] * 1000 if kt_best else None,
            "kernlab_best_us": kl_best["median_us"] if kl_best else None,
            "kernlab_best": kl_best}


# ----------------------------------------------------------------------------------------------

def parse_shape(text):
    parts = text.lower().split("x")
    if len(parts) == 1:
        parts = parts * 3
    if len(parts) != 3 or not all(p.isdigit() and int(p) >= 1 for p in parts):
        raise argparse.ArgumentTypeError(f"'{text}' is not a shape MxNxK")
    M, N, K = (int(p) for p in parts)
    if M * K > MAX_ELEMENTS or K * N > MAX_ELEMENTS or M * N > MAX_ELEMENTS:
        raise argparse.ArgumentTypeError(f"{text}: every matrix must have fewer than 2^31 elements")
    return M, N, K


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--kernel", default=str(REPO / "kernels_src" / "matmul" / "tunable.cu"),
                    help="the tunable matmul file (default kernels_src/matmul/tunable.cu)")
    ap.add_argument("--shape", type=parse_shape, default=(4096, 4096, 4096), help="MxNxK (default 4096x4096x4096)")
    ap.add_argument("--strategy", default="brute_force", help="Kernel Tuner's strategy name (default brute_force)")
    ap.add_argument("--budget", type=int, help="max_fevals for a strategy other than brute_force")
    ap.add_argument("--strategy-seed", type=int, help="tune_kernel's seed (random strategies)")
    ap.add_argument("--iterations", type=int, default=7, help="Kernel Tuner's iterations (default 7, its own)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"input seed (default {DEFAULT_SEED}, kernlab's)")
    ap.add_argument("--lang", default="auto", choices=["auto", "cupy", "nvcuda"],
                    help="Kernel Tuner's backend (default auto: cupy if CuPy imports, else nvcuda)")
    ap.add_argument("--out", default="./kt_out", help="folder for kt_tune.json (default ./kt_out)")
    ap.add_argument("--warm-caches", action="store_true",
                    help="keep CuPy's kernel cache and the driver's JIT cache (default: a fresh CuPy cache "
                         "folder and CUDA_CACHE_DISABLE=1, so compile_time is a cold compile, as kernlab's --no-cache)")
    ap.add_argument("--kt-verbose", action="store_true", help="let Kernel Tuner print its lines")
    ap.add_argument("--table", type=int, default=40, help="rows of the printed table (0: all; default 40)")
    ap.add_argument("--dry-run", action="store_true",
                    help="no GPU: build and check the space, compile a few configurations with NVRTC")
    ap.add_argument("--compile", default="4", help="--dry-run: how many configurations to compile, or 'all' (default 4)")
    ap.add_argument("--arch", default="sm_90", help="--dry-run: NVRTC architecture (default sm_90)")
    ap.add_argument("--kernlab", help="a kernlab binary: compare the space with its --list of the same file")
    ap.add_argument("--kernlab-json", help="a kernlab --json results file of the same tuning: print side by side")
    ap.add_argument("--kernlab-wall", type=float, help="the kernlab run's wall time in seconds (when its file has none)")
    ap.add_argument("--kt-json", help="compare this kt_tune.json with --kernlab-json instead of tuning")
    ap.add_argument("--top", type=int, default=10, help="side by side: configurations listed (default 10)")
    args = ap.parse_args(argv)
    if args.budget is not None and args.strategy == "brute_force":
        ap.error("brute_force evaluates the whole space: --budget (max_fevals) is for other strategies")
    if args.kt_json and not args.kernlab_json:
        ap.error("--kt-json needs --kernlab-json")
    args.kernel_given = args.kernel
    args.kernel = str(Path(args.kernel).resolve())  # the tuning runs in --out
    if args.kernlab_json:
        args.kernlab_json = str(Path(args.kernlab_json).resolve())
    return args


def describe(h, space, kt):
    print(f"{h['path']}: entry {h['entry']}, blocks {' '.join(map(str, h['blocks']))}")
    print(f"space: {space['product']} points in the product, {space['points']} kept, "
          f"{len(space['configs'])} configurations (point x block)")
    bad = [c for c in space["configs"] if not c["grid_ok"]]
    if bad:
        print(f"  {len(bad)} configurations have a grid past CUDA's limits at this shape (kernlab skips them)")
    print("Kernel Tuner:")
    print(f"  kernel_name       {kt['kernel_name']}")
    for n, v in kt["tune_params"].items():
        what = " (derived: params)" if n in kt["derived"] else " (derived: block_dims)" if n in kt["block_dims_params"] else ""
        print(f"  tune_params[{n}] = {v}{what}")
    for r in kt["restrictions"]:
        print(f"  restriction       {r}")
    print(f"  block_size_names  {kt['block_size_names'] or 'default (block_size_x is the block: block_dims is BLOCK, 1)'}")
    c = space["configs"][0]
    print(f"  first: {kt_name_for(kt['kernel_name'], kt_values(c, kt))}  block {c['block']}  grid {c['grid']}")


def dry_run(args, h, space, kt):
    rc = 0
    problems = check_translation(h, space, kt)
    if problems:
        rc = 1
        print("TRANSLATION DIFFERS from kernlab's evaluation:")
        for p in problems:
            print(f"  {p}")
    else:
        print(f"translation: the Python restrictions agree with kernlab's C evaluation on all "
              f"{kt['translation_checked']} combinations checked")
    for c in space["configs"]:
        if kt_name_for(kt["kernel_name"], kt_values(c, kt)) != c["name_expression"]:
            rc = 1
            print(f"NAME DIFFERS: Kernel Tuner {kt_name_for(kt['kernel_name'], kt_values(c, kt))}, "
                  f"kernlab {c['name_expression']}")
            break
    else:
        print("kernel names: Kernel Tuner's substitution gives kernlab's name expression for every configuration")
    try:
        import kernel_tuner  # noqa: F401
        have_kt = True
    except Exception as e:  # noqa: BLE001
        have_kt = False
        print(f"kernel_tuner not importable ({type(e).__name__}: {e}): its search space not built")
    if have_kt:
        diffs, size, secs = compare_space(space, kt)
        if diffs:
            rc = 1
            print(f"KERNEL TUNER'S SEARCH SPACE DIFFERS ({size} configurations):")
            for d in diffs:
                print(f"  {d}")
        else:
            print(f"Kernel Tuner's Searchspace: {size} configurations, the same set ({secs * 1000:.0f} ms to build)")
    if args.kernlab and not Path(args.kernlab).is_file():
        print(f"kernlab --list: skipped, no {args.kernlab}")
    elif args.kernlab:
        rows, cmd = kernlab_list(args.kernlab, args.kernel, h["name"], [n for n, _ in h["points"]])
        diffs = compare_kernlab_list(space, rows)
        n = sum(len(b) for b in rows.values())
        if diffs:
            rc = 1
            print(f"KERNLAB'S LIST DIFFERS ({len(rows)} variants, {n} configurations):")
            for d in diffs[:10]:
                print(f"  {d}")
        else:
            print(f"kernlab --list: {len(rows)} variants, {n} configurations, the same points and blocks")
    todo = space["configs"] if args.compile == "all" else pick(space["configs"], int(args.compile))
    if todo:
        lib, where = find_nvrtc()
        compile_fn = None
        if lib is not None:
            compile_fn = lambda src, name, opts: nvrtc_compile(lib, src, name, opts)  # noqa: E731
            print(f"NVRTC: {where}")
        else:
            try:
                import cupy_backends.cuda.libs.nvrtc  # noqa: F401
                compile_fn = cupy_nvrtc_compile
                print("NVRTC: through CuPy")
            except Exception:  # noqa: BLE001
                print(f"NVRTC not found ({where}): nothing compiled")
        if compile_fn:
            src = Path(args.kernel).read_text(encoding="utf-8")
            opts = BASE_COMPILER_OPTIONS + include_options(args.kernel) + [f"--gpu-architecture={args.arch}", "-Xptxas", "-v"]
            for c in todo:
                name = kt_name_for(kt["kernel_name"], kt_values(c, kt))
                ok, log, lowered, secs = compile_fn(src, name, opts)
                regs = re.findall(r"Used (\d+) registers", log)
                spill = re.findall(r"(\d+) bytes spill stores", log)
                if ok:
                    print(f"  ok  {secs * 1000:6.0f} ms  {name}  block {c['block']}  "
                          f"{regs[-1] if regs else '?'} registers, {spill[-1] if spill else '?'} B spilled")
                else:
                    rc = 1
                    print(f"  COMPILE ERROR {name}: {log.strip()[-1500:]}")
    print("dry run ok" if rc == 0 else "dry run found problems")
    return rc


def main(argv=None):
    args = parse_args(argv)
    if args.kt_json:
        kt_report = json.loads(Path(args.kt_json).read_text())
        kt_report["json_path"] = args.kt_json
        side_by_side(kt_report, args.kernlab_json, args.kernlab_wall, args.top)
        return 0
    try:
        h = read_header(args.kernel)
        space = build_space(h, args.shape)
        kt = kt_problem(h, space)
    except (HeaderError, ExprError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    describe(h, space, kt)
    if args.dry_run:
        return dry_run(args, h, space, kt)

    try:
        import numpy  # noqa: F401
        import kernel_tuner  # noqa: F401
    except Exception as e:  # noqa: BLE001
        print(f"error: {type(e).__name__}: {e}\n(install Kernel Tuner's wheels into a folder and put it on "
              f"PYTHONPATH: bench/kernel_tuner/README.md)", file=sys.stderr)
        return 2
    checks = {}
    problems = check_translation(h, space, kt)
    checks["translation"] = f"{kt['translation_checked']} combinations agree" if not problems else problems
    if not problems:
        diffs, size, secs = compare_space(space, kt)
        checks["kt_searchspace"] = f"{size} configurations, the same set" if not diffs else diffs
        problems += diffs
    if not problems and args.kernlab and not Path(args.kernlab).is_file():
        checks["kernlab_list"] = f"skipped: no {args.kernlab}"
    elif not problems and args.kernlab:
        rows, _ = kernlab_list(args.kernlab, args.kernel, h["name"], [n for n, _ in h["points"]])
        diffs = compare_kernlab_list(space, rows)
        checks["kernlab_list"] = f"{sum(len(b) for b in rows.values())} configurations, the same" if not diffs else diffs
        problems += diffs
    for k, v in checks.items():
        print(f"check {k}: {v if isinstance(v, str) else 'DIFFERS'}")
    if problems:
        print("error: the spaces differ:\n  " + "\n  ".join(problems[:20]), file=sys.stderr)
        return 2
    cache_dir = None
    env_set = {}
    if not args.warm_caches:
        # Before CuPy or the driver loads: a fresh CuPy kernel cache, no driver JIT cache.
        cache_dir = tempfile.mkdtemp(prefix="kt_tune_cupy_cache_")
        env_set = {"CUPY_CACHE_DIR": cache_dir, "CUDA_CACHE_DISABLE": "1"}
        os.environ.update(env_set)
    if not (os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")) and os.path.isdir("/usr/local/cuda"):
        os.environ["CUDA_HOME"] = env_set["CUDA_HOME"] = "/usr/local/cuda"
    args.lang_chosen = choose_lang(args.lang)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    src_text = Path(args.kernel).read_bytes()
    report = {
        "format": FORMAT, "version": FORMAT_VERSION,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": [sys.executable] + sys.argv, "packages": versions(), "environment_set": env_set,
        "kernel": {"path": args.kernel_given, "sha256": hashlib.sha256(src_text).hexdigest(),
                   "entry": h["entry"], "blocks": h["blocks"], "tune": h["tunables"], "require": h["requires"],
                   "params": h["params"], "block_dims": h["block_dims"], "grid_dims": h["grid_dims"]},
        "shape": list(args.shape), "seed": args.seed, "input": "exact", "strategy": args.strategy,
        "budget": args.budget, "iterations": args.iterations, "lang": args.lang_chosen,
        "compiler_options": BASE_COMPILER_OPTIONS + include_options(args.kernel),
        "kt": {k: v for k, v in kt.items()},
        "space": {"points": space["points"], "configs": len(space["configs"]), "product": space["product"],
                  "checks": checks},
        "measurement": {
            "time": "Kernel Tuner's: the mean of `iterations` launches, each timed alone with events; "
                    "no L2 flush; a warm-up compile+run of the first configuration before the sweep",
            "tune_wall_s": "the tune_kernel call, start-up (CUDA context, uploads, search space, warm-up) included",
            "compile_caches": "warm (--warm-caches)" if args.warm_caches else
                              "cold: fresh CUPY_CACHE_DIR, CUDA_CACHE_DISABLE=1"},
    }
    rc = 0
    old_cwd = os.getcwd()
    os.chdir(out)  # Kernel Tuner writes a failing configuration's source as temp_* in the working folder
    try:
        print(f"\ntuning with Kernel Tuner (lang={args.lang_chosen}, strategy {args.strategy}) ...", flush=True)
        run_tuning(args, h, space, kt, report)
        print_table(report, args.table)
        print_summary(report)
        if report["failed"] or report["wrong"] or report["unverified"]:
            rc = 1
        if args.kernlab_json:
            report["side_by_side"] = side_by_side(report, args.kernlab_json, args.kernlab_wall, args.top)
    except Exception as e:  # noqa: BLE001
        report["error"] = f"{type(e).__name__}: {e}"
        report["traceback"] = traceback.format_exc()
        print(report["traceback"], file=sys.stderr)
        rc = 1
    finally:
        report["process_wall_s"] = time.perf_counter() - T_START
        report["exit_code"] = rc
        path = out / "kt_tune.json"
        path.write_text(json.dumps(json_safe(report), indent=1) + "\n")
        print(f"wrote {path} (process {report['process_wall_s']:.1f} s)")
        if cache_dir:
            shutil.rmtree(cache_dir, ignore_errors=True)
        os.chdir(old_cwd)
    return rc


if __name__ == "__main__":
    sys.exit(main())
