/* kernlab
family: reduce
entry: k
blocks: 128
grid: all
bounds: maybe
output: many
order: first
*/
