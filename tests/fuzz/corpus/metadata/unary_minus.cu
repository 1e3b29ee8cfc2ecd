/* kernlab
family: reduce
entry: k
blocks: 128
tile: -(-BLOCK) * 2
shared_bytes: (BLOCK % 7) * (TSIZE / 2)
*/
