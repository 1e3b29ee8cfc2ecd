/* kernlab
family:  reduce
entry:   k<BLOCK, UNROLL, VEC, T, OP>
blocks:  128 256 512 1024
tune:    UNROLL = 2, 4, 8, 16; VEC = 1..4 pow2
require: UNROLL * VEC * BLOCK <= 16384
tile:    UNROLL * VEC * BLOCK
summary: a tunable file with named points
points:  k_two(UNROLL=2, VEC=1) "two loads; one element each"
points:  k_four(VEC=2, UNROLL=4); k_wide(UNROLL=16, VEC=1)
*/
