/* kernlab header on the first line
family: reduce
entry: k<BLOCK>
blocks: 256 */
