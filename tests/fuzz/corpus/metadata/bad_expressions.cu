/* kernlab
family: reduce
entry: k
blocks: 128
tile: (BLOCK / 0
workspace: 4 - GRID
*/
