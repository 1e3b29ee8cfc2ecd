# Builds scan_kernels.hpp and scan_points.hpp from the scan family's kernel files (and its
# reference) for the CPU emulation (run_scan.sh):
#   gen_scan.py OUT.hpp POINTS.hpp INCLUDE_DIR FILE.cu...
# scan_kernels.hpp: every file, and each `#include <kernlab/X>` the files use inlined once (the
# first time, from INCLUDE_DIR/kernlab/X, with the same rewrites; later includes of it dropped),
# with
#  - the status words' inline-PTX relaxed loads and stores turned into the emulation's
#    (emu_load_status / emu_store_status);
#  - a macro that defines load_prefetching() overloads with inline PTX (the hinted loads,
#    KL_SCAN_LD in scan_lookback.cuh) replaced by one plain-load template;
#  - cp.async (cp_async16), its commit_group and wait_group turned into emu_copy16,
#    emu_commit_copies and emu_wait_copies (scan_prelude.hpp: copies deferred to their wait);
#  - each __shared__ variable a reference to its block's own storage, and the dynamic shared
#    memory (`extern __shared__ ... name[];`) a pointer to the block's dynamic buffer.
# scan_points.hpp: for every file with an `entry:` and `blocks:` (all but the reference), what its
# kernlab header says, for scan_emu.cpp:
#   #define KL_HAVE_<entry> 1
#   struct kl_args_<entry> { long long <template arguments in the entry's order, less T>; };
#   #define KL_POINTS_<entry>(X) X(<entry>, "<entry>[<tunable>=<value>;...]", LONG, <arguments>) ...
#   #define KL_SAMPLE_<entry>(X) ...
#   long long kl_grid(const kl_args_<entry>&, N, RESIDENT_BLOCKS)      its grid_dims
#   long long kl_shared(const kl_args_<entry>&, TSIZE)                 its shared_bytes (or 0)
#   bool kl_persistent(const kl_args_<entry>&)                 grid_dims uses RESIDENT_BLOCKS
# and KL_ENTRIES(F), F(<entry>) for each. KL_POINTS_ has every point: every block of `blocks:`
# with every combination of `tune:` values that `require:` allows, `params:` evaluated for each.
# KL_SAMPLE_ is, for a file with tune:, a sample that covers every block with every pair of
# tunable values that some allowed point has (for warp_lookback: every (BLOCK, VEC, LOADS),
# (BLOCK, VEC, HINT), ..., (BLOCK, HINT, OCC)), chosen greedily (the point covering most
# uncovered triples first, the earliest on a tie) and listed in KL_POINTS_'s order; otherwise
# every point. LONG is 1 for the sample's first two points of a tunable file (the smallest tiles)
# and the first point of another, which scan_emu.cpp also runs long.
import itertools
import os
import re
import sys


def rewrite(s, path):
    s, n_ld = re.subn(r'asm volatile\("ld\.relaxed\.gpu\.global\.u64 %0, \[%1\];"[^;]*;',
                      'v = emu_load_status(p);', s)
    s, n_st = re.subn(r'asm volatile\("st\.relaxed\.gpu\.global\.u64 \[%0\], %1;"[^;]*;',
                      'emu_store_status(p, v);', s)
    assert n_ld == n_st and n_ld in (0, 1), (path, n_ld, n_st)
    # A macro of inline-PTX hinted loads (load_prefetching overloads): plain loads here.
    for m in re.finditer(r'#define (\w+)\(', s):
        end = s.find('#undef ' + m.group(1))
        if end >= 0 and 'load_prefetching' in s[m.start():end]:
            s = (s[:m.start()] + 'template <class V> V load_prefetching(const V* p) { return *p; }'
                 + s[end + len('#undef ' + m.group(1)):])
            break
    # cp.async (<kernlab/cp_async.cuh>): the 16-byte copy with a src-size operand, its commit and
    # its wait become the emulation's; the 8-byte one, which no scan file uses, aborts.
    n_cp = len(re.findall(r'asm volatile\("cp\.async', s))
    if n_cp:
        s = s.replace('return static_cast<unsigned>(__cvta_generic_to_shared(p));', 'return 0;')
        s, n16 = re.subn(r'asm volatile\("cp\.async\.cg\.shared\.global \[%0\], \[%1\], 16, %2;'
                         r'(?:\\n)?"[^;]*;', 'emu_copy16(dst, src, src_bytes);', s)
        s, n8 = re.subn(r'asm volatile\("cp\.async\.ca\.shared\.global \[%0\], \[%1\], 8, %2;'
                        r'(?:\\n)?"[^;]*;', 'std::abort();', s)
        s, n_commit = re.subn(r'asm volatile\("cp\.async\.commit_group;(?:\\n)?"[^;]*;',
                              'emu_commit_copies();', s)
        s, n_wait = re.subn(r'asm volatile\("cp\.async\.wait_group %0;(?:\\n)?" ::"n"\((\w+)\)[^;]*;',
                            r'emu_wait_copies(\1);', s)
        assert n16 == 1 and n_commit == 1 and n_wait == 1 and n16 + n8 + 2 == n_cp, (path, n_cp)
    # The dynamic shared memory: the block's buffer of the launch's size.
    s = re.sub(r'extern\s+__shared__\s+(?:__align__\(\d+\)\s+)?([\w:<> ]+?)\s+(\w+)\[\];',
               r'\1* const \2 = reinterpret_cast<\1*>(kl_dynamic_shared());', s)

    # one declarator or several (`__shared__ float a[N], b[N];`), each its own storage
    def shared(m):
        decls = re.findall(r'(\w+)((?:\[[^\]]*\])*)', m.group(2))
        return ' '.join(f'auto& {name} = kl_shared<{m.group(1)}{dims}>(__LINE__ * 16 + {i});'
                        for i, (name, dims) in enumerate(decls))
    s = re.sub(r'__shared__\s+([\w:<>]+)\s+((?:\w+(?:\[[^\]]*\])*\s*,\s*)*\w+(?:\[[^\]]*\])*)\s*;',
               shared, s)
    assert '__shared__' not in s and 'asm' not in s, path
    return s


def header(s):
    m = re.search(r'/\* kernlab\n(.*?)\*/', s, re.S)
    d = {}
    for line in m.group(1).splitlines() if m else []:
        k, _, v = line.partition(':')
        if k.strip():
            d[k.strip()] = v.split('#')[0].strip()
    return d


def py(expr):  # a kernlab expression as Python: integer division, || and &&
    return (expr.replace('||', ' or ').replace('&&', ' and ').replace('/', '//')
            .replace('!', ' not ').replace(' not =', '!='))


def cpp(expr):  # ... and as C++ over long long
    return re.sub(r'\b(min|max|ceil_div)\(', r'kl_\1(', expr)


FUNCS = {'ceil_div': lambda a, b: -(-a // b), 'min': min, 'max': max}


def points(path, s):
    h = header(s)
    if 'entry' not in h or 'blocks' not in h:
        return None
    name, args = re.match(r'(\w+)<(.*)>', h['entry']).groups()
    args = [a.strip() for a in args.split(',')]
    assert args[-1] == 'T', h['entry']
    args = args[:-1]

    def assignments(key):
        out = []
        for part in h.get(key, '').split(';'):
            if part.strip():
                k, v = part.split('=', 1)
                out.append((k.strip(), v.strip()))
        return out
    tune = [(k, [int(x) for x in v.split(',')]) for k, v in assignments('tune')]
    params = assignments('params')
    conds = [c.strip() for c in h.get('require', '').split(';') if c.strip()]
    every = []
    for block in [int(b) for b in h['blocks'].split()]:
        for vals in itertools.product(*(v for _, v in tune)):
            env = dict(zip((k for k, _ in tune), vals), BLOCK=block, TSIZE=4)
            for k, v in params:
                env[k] = eval(py(v), dict(FUNCS), env)
            if all(eval(py(c), dict(FUNCS), env) for c in conds):
                every.append(tuple(int(env[a]) for a in args))
    assert every, path
    chosen = sample(every, args) if tune else every
    longs = set(chosen[:2] if tune else chosen[:1])
    shown = [k for k, _ in tune] + [k for k, _ in params]  # kernlab's point name

    def x(a):
        label = name + ('[' + ';'.join(f'{k}={a[args.index(k)]}' for k in shown if k in args) + ']'
                        if shown else '')
        return f'  X({name}, "{label}", {int(a in longs)}, ' + ', '.join(map(str, a)) + ')'
    out = [f'#define KL_HAVE_{name} 1',
           f'struct kl_args_{name} {{\n  long long {", ".join(args)};\n}};']
    for macro, lst in (('POINTS', every), ('SAMPLE', chosen)):
        out.append(f'#define KL_{macro}_{name}(X) \\\n' + ' \\\n'.join(x(a) for a in lst))
    unpack = ''.join(f'  [[maybe_unused]] const long long {a} = a.{a};\n' for a in args)
    out.append(f'inline long long kl_grid(const kl_args_{name}& a, long long N, '
               f'long long RESIDENT_BLOCKS) {{\n{unpack}  return {cpp(h["grid_dims"])};\n}}')
    out.append(f'inline long long kl_shared(const kl_args_{name}& a, [[maybe_unused]] long long '
               f'TSIZE) {{\n{unpack}  return {cpp(h.get("shared_bytes", "0"))};\n}}')
    out.append(f'inline constexpr bool kl_persistent(const kl_args_{name}&) {{ return '
               f'{"true" if "RESIDENT_BLOCKS" in h["grid_dims"] else "false"}; }}')
    return name, '\n'.join(out) + '\n'


def sample(pts, names):
    """Every BLOCK with every pair of the other arguments' values, greedily."""
    b = names.index('BLOCK')
    others = [i for i in range(len(names)) if i != b]

    def triples(p):
        return {(p[b], i, p[i], j, p[j]) for i, j in itertools.combinations(others, 2)}
    left = set().union(*(triples(p) for p in pts))
    chosen = set()
    while left:
        best = max(range(len(pts)), key=lambda k: (len(triples(pts[k]) & left), -k))
        chosen.add(best)
        left -= triples(pts[best])
    return [pts[k] for k in sorted(chosen)]


out, pts, names, seen = [], [], [], set()
inc_dir = sys.argv[3]
for path in sys.argv[4:]:
    s = open(path).read()
    p = points(path, s)
    if p:
        names.append(p[0])
        pts.append(p[1])

    def include(m):
        if m.group(1) in seen:
            return f'// ({m.group(1)}: inlined above)'
        seen.add(m.group(1))
        h = os.path.join(inc_dir, m.group(1))
        text = rewrite(open(h).read().replace('#pragma once', ''), h)
        text = re.sub(r'^#include <(kernlab/[\w.]+)>.*$', include, text, flags=re.M)  # nested
        return f'// ---- {m.group(1)}\n' + text
    s = rewrite(s, path)
    s = re.sub(r'^#include <(kernlab/[\w.]+)>.*$', include, s, flags=re.M)
    assert not re.search(r'^\s*#\s*include', s, re.M), path
    out.append('// ---- ' + path + '\n' + s)
open(sys.argv[1], 'w').write('#pragma once\n' + '\n'.join(out))
helpers = '''#pragma once
inline long long kl_ceil_div(long long a, long long b) { return (a + b - 1) / b; }
inline long long kl_min(long long a, long long b) { return a < b ? a : b; }
inline long long kl_max(long long a, long long b) { return a > b ? a : b; }
'''
entries = ' '.join(f'F({n})' for n in names)
open(sys.argv[2], 'w').write(helpers + '\n'.join(pts) + f'\n#define KL_ENTRIES(F) {entries}\n')
