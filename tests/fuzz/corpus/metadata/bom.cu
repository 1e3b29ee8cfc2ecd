/* kernlab
family: reduce
entry: k<BLOCK, T, OP>
blocks: 128
tile: 2 * BLOCK
*/
