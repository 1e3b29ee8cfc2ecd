/* kernlab
family: reduce
family: reduce
*/
