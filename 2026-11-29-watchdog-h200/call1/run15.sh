#!/usr/bin/env bash
# 2026-11-29 (session 4), nvidia-h200: the whole GPU label on 2f0da3d (the head), scripts/gpu_suite.sh.
set -u -o pipefail
bash scripts/gpu_suite.sh
O=${OUT:-/tmp/kernlab-out}
tar czf /tmp/out.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/out.tgz "$O/"
exit 0
