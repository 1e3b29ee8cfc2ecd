/* kernlab
family: reduce
entry: 3k<>
blocks: 1
*/
