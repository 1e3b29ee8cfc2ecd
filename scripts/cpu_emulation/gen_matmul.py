# Builds matmul_kernel.hpp from the kernel file: the tmm helpers replaced by the emulation, the
# __shared__ arrays made static and poisoned at the start of every block.
import re, sys
src = open(sys.argv[1]).read()
a = src.index('namespace tmm {'); b = src.index('}  // namespace tmm') + len('}  // namespace tmm')
src = src[:a] + '#include "matmul_tmm.hpp"' + src[b:]
src = src.replace('__shared__ __align__(16) float smem[SMEM];', 'alignas(16) static float smem[SMEM];\n  emu_poison(smem, sizeof(smem)); __syncthreads();')
assert src.count('emu_poison(smem') == 1
open(sys.argv[2], 'w').write(src)
