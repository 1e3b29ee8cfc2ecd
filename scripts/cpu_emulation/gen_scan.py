# Builds scan_kernels.hpp from the scan family's kernel files (and its reference) for the CPU
# emulation (run_scan.sh): the status words' inline-PTX relaxed loads and stores become calls to
# the emulation's, and each __shared__ variable a reference to its block's own storage.
import re
import sys

out = []
for path in sys.argv[2:]:
    s = open(path).read()
    s, n_ld = re.subn(r'asm volatile\("ld\.relaxed\.gpu\.global\.u64 %0, \[%1\];"[^;]*;',
                      'v = emu_load_status(p);', s)
    s, n_st = re.subn(r'asm volatile\("st\.relaxed\.gpu\.global\.u64 \[%0\], %1;"[^;]*;',
                      'emu_store_status(p, v);', s)
    if '#define LT_LD(' in s:  # lookback_tunable.cu's hinted loads: plain loads here
        a = s.index('#define LT_LD(')
        b = s.index('#undef LT_LD') + len('#undef LT_LD')
        s = s[:a] + 'template <class V> V load_prefetching(const V* p) { return *p; }' + s[b:]
    # one declarator or several (`__shared__ float a[N], b[N];`), each its own storage
    def shared(m):
        decls = re.findall(r'(\w+)((?:\[[^\]]*\])*)', m.group(2))
        return ' '.join(f'auto& {name} = kl_shared<{m.group(1)}{dims}>(__LINE__ * 16 + {i});'
                        for i, (name, dims) in enumerate(decls))
    s = re.sub(r'__shared__\s+([\w:<>]+)\s+((?:\w+(?:\[[^\]]*\])*\s*,\s*)*\w+(?:\[[^\]]*\])*)\s*;',
               shared, s)
    assert '__shared__' not in s and 'asm' not in s, path
    assert n_ld == n_st and n_ld in (0, 1), (path, n_ld, n_st)
    out.append('// ---- ' + path + '\n' + s)
open(sys.argv[1], 'w').write('#pragma once\n' + '\n'.join(out))
