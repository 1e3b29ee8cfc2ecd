/*kernlab
family:e
entry:k
blocks:,*/