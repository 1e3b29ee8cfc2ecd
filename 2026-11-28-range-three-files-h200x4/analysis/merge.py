#!/usr/bin/env python3
"""merge.py LOW.json.gz HIGH.json.gz OUT.json: the two exhaustive tunes as one file for --replay."""
import gzip, json, sys
a, b = (json.load(gzip.open(p)) for p in sys.argv[1:3])
a["records"] += b["records"]
json.dump(a, open(sys.argv[3], "w"))
