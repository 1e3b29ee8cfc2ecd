/* kernlab
family: reduce
entry: k<BLOCK, T, OP>
blocks: 128, 256 512
tile: 2 * BLOCK
grid: tiles
bounds: padded
shared_bytes: BLOCK * TSIZE
output: per_block
dtypes: int32 float32
ops: sum, min, max
summary:
order: 0
*/
