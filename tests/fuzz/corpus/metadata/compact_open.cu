/*kernlab
family: reduce
entry: ns::k
blocks: 1 1024
tile: ((BLOCK + 1) * TSIZE - 4 / 2 % 3)
workspace: 16 + GRID * TSIZE   # comment
*/
