/* kernlab
family: reduce
entry: k<BLOCK>
blocks: 512
*/
