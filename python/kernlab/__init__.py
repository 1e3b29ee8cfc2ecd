"""kernlab from Python: read any results file kernlab writes into a pandas DataFrame, and run
kernlab (a sweep or a tune) with keyword arguments.

    import kernlab
    df = kernlab.read("run.json")             # --json, --jsonl, --csv, --t4, a tuning store
    df = kernlab.run(variant="reduce5", block=512, size="2^24")
    df = kernlab.tune("reduce_tunable", size="2^24", strategy="random", budget=50)
"""
from kernlab.read import read
from kernlab.run import KernlabError, find_binary, run, tune
from kernlab.tune_kernel import tune_kernel

__all__ = ["read", "run", "tune", "tune_kernel", "find_binary", "KernlabError"]
