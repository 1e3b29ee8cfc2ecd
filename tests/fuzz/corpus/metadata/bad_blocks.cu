/* kernlab
family: reduce
entry: k
blocks: 128 2048 many 128
*/
