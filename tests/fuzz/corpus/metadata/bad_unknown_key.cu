/* kernlab
family: reduce
block: 256
*/
