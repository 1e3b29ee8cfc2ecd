// Beyond the seeds, step 5: one launch instead of two.
// Every variant so far needs a second launch to reduce the blocks' partial results; at 2^20
// elements (4 MiB) the launch and the ramp-up of that second grid cost as much as reading the
// data. Here each block of reduce_persistent's grid stores its partial result in a workspace,
// makes it visible (__threadfence), and takes a ticket from an atomic counter; the block that
// takes the last ticket reduces all the partial results and writes the answer. It reads them in
// block order, whichever block is last, so the result is deterministic (no float atomics). The
// last block also resets the counter to 0, leaving the workspace as kernlab zeroed it.
/* kernlab
family:    reduce
entry:     reduce_single_pass<BLOCK, T, OP>
blocks:    128 256 512 1024
tile:      16 * BLOCK
grid:      resident
bounds:    checked
output:    single            # the kernel writes the final result: one launch
workspace: 16 + GRID * TSIZE # a ticket counter, then one partial result per block
summary:   reduce_persistent finished by the last block to arrive: a single launch
order:     24
*/
#include <kernlab/reduce.cuh>

