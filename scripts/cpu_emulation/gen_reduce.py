# Builds reduce_kernel.hpp from reduce_tunable.cu: the inline-PTX loads as plain loads,
# __shared__ as static.
import sys
s = open(sys.argv[1]).read()
a = s.index('#define RT_LD('); b = s.index('#undef RT_LD') + len('#undef RT_LD')
s = s[:a] + 'template <class V> V load_hinted(const V* p) { return *p; }' + s[b:]
s = s.replace('__shared__ T warp_results', 'static T warp_results').replace('__shared__ bool is_last', 'static bool is_last')
assert '__shared__' not in s and 'asm' not in s
open(sys.argv[2], 'w').write(s)
