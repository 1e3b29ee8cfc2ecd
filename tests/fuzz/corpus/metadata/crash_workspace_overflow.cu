/*kernlab
family:e
entry:k
blocks:1
workspace:GRID*9223372017*/