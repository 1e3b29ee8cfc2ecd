/* kernlab
family: reduce
entry: k
blocks: 128
tile: BLOCK
dtypes: ,
ops: ,
*/
