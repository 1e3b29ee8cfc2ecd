#!/usr/bin/env bash
# CPU emulation of the scan family's kernels and reference, for checking them without a GPU:
#   scripts/cpu_emulation/run_scan.sh [asan|tsan|plain] [extra.cu ...]   (default: asan)
# gen_scan.py turns the reference and every kernels_src/scan/*.cu (hillis_steele, blelloch,
# decoupled_lookback, lookback_tunable, smem_lookback_tunable, ...), and any extra file named
# (a draft, e.g. the two look-back designs in the results folder 2026-11-28-scan-smem-h200's kernels/), into plain C++ over scan_prelude.hpp, with
# <kernlab/...> headers inlined: blocks as groups of OS threads started in a shuffled order,
# several at once (a persistent kernel's, grid capped by RESIDENT_BLOCKS, all at once; those that
# take their tile from blockIdx.x, smem_lookback's ORDER 1, in index order), warp shuffles and
# ballots emulated, status stores seen late, dynamic shared memory a buffer a block of exactly
# the header's shared_bytes, cp.async deferred to the wait_group that completes it (until then its
# destination holds garbage). It also lists each file's points from its header (scan_points.hpp:
# every block, the tune: values require: allows, params:, grid_dims and shared_bytes).
# scan_emu.cpp runs every file at its points (of a tunable file, a sample with every block and
# every pair of tunable values: lookback_tunable 61 of 162, smem_lookback 28 of 28; SCAN_POINTS=all
# builds every point, far slower), int32 and
# float32, at awkward sizes (1, 7, a tile - 1, a tile, a tile + 1, several tiles and a bit; tiles
# as the file counts them: warp_lookback's a warp's, with a block's too; more tiles than
# persistent blocks), against a sequential 64-bit scan, then checks the workspace (every tile's
# published inclusive prefix and its value, the counter's end, no stray word) and what the
# cp.async emulation found: under AddressSanitizer + UBSan by default (a read or write past a
# buffer, an overflow), under ThreadSanitizer (`tsan`: a race on shared memory between barriers,
# or on a status word), or optimised (`plain`).
# Environment, for shorter runs (scan_emu.cpp): SCAN_ONLY=entry,entry (e.g.
# SCAN_ONLY=warp_lookback,staged_lookback), SCAN_STRIDE=k (every k-th point of each file),
# SCAN_LONG=0 (no 40- and 70-tile runs), SCAN_TYPES=int32 or float32, SCAN_VERBOSE=1 (each point).
# Time on 2 cores: asan about 3 minutes (1304 launches), about 10 with the warp_lookback and
# staged_lookback drafts (2962 launches; plain: 4.5); tsan is for reduced runs, e.g. 6 minutes for
# SCAN_ONLY=smem_lookback,warp_lookback,staged_lookback SCAN_STRIDE=8 SCAN_TYPES=int32 SCAN_LONG=0.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
mode="${1:-asan}"
extra=()
for f in "${@:2}"; do extra+=("$(realpath "$f")"); done
work="$(mktemp -d)"
cp "$here"/scan_prelude.hpp "$here"/scan_emu.cpp "$work"/
cd "$work"
scan="$root/kernels_src/scan"
files=("$scan"/reference.cu)
for f in "$scan"/*.cu ${extra[@]+"${extra[@]}"}; do
  [ "$f" = "$scan"/reference.cu ] || files+=("$f")
done
python3 "$here/gen_scan.py" scan_kernels.hpp scan_points.hpp "$root/kernels_src/include" \
  "${files[@]}"
flags=(-std=c++20 -g -pthread -fno-strict-aliasing -Wall -Wno-unknown-pragmas)
if [ "${SCAN_POINTS:-sample}" = all ]; then flags+=(-DSCAN_ALL_POINTS); fi
if [ "$mode" = plain ]; then
  g++ "${flags[@]}" -O2 -o scan_emu scan_emu.cpp
elif [ "$mode" = tsan ]; then
  g++ "${flags[@]}" -O1 -fsanitize=thread -o scan_emu scan_emu.cpp
  export TSAN_OPTIONS=halt_on_error=1
else
  g++ "${flags[@]}" -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
    -o scan_emu scan_emu.cpp
fi
./scan_emu
echo "scan cpu emulation ($mode): all passed ($work)"
