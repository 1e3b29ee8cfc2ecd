# Builds matmul_kernel.hpp from the kernel file: the tmm helpers replaced by the emulation, the
# __shared__ arrays made static and poisoned at the start of every block.
import re, sys
src = open(sys.argv[1]).read()
a = src.index('namespace tmm {'); b = src.index('}  // namespace tmm') + len('}  // namespace tmm')
src = src[:a] + '#include "matmul_tmm.hpp"' + src[b:]
src = src.replace('__shared__ __align__(16) float As[STAGES][BK][AS];', 'alignas(16) static float As[STAGES][BK][AS];')
src = src.replace('__shared__ __align__(16) float Bs[STAGES][BK][BN];', 'alignas(16) static float Bs[STAGES][BK][BN];\n  emu_poison(As, sizeof(As)); emu_poison(Bs, sizeof(Bs)); __syncthreads();')
assert src.count('emu_poison(As') == 1
open(sys.argv[2], 'w').write(src)
