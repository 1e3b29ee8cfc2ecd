/* kernlab
family: reduce
entry: k
blocks: 128
