#!/usr/bin/env bash
# CPU emulation of the scan family's kernels and reference, for checking them without a GPU:
#   scripts/cpu_emulation/run_scan.sh [asan|tsan|plain]   (default: asan)
# gen_scan.py turns kernels_src/scan/*.cu into plain C++ over scan_prelude.hpp (blocks as groups
# of OS threads started in a shuffled order, several at once, status stores seen late), and
# scan_emu.cpp runs every variant at awkward sizes against a sequential 64-bit scan: under
# AddressSanitizer + UBSan by default (a read or write past a buffer, an overflow), under
# ThreadSanitizer (`tsan`: a race on shared memory between barriers, or on a status word), or
# optimised (`plain`). asan and plain take about 5 minutes on 2 cores, tsan about 40.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
mode="${1:-asan}"
work="$(mktemp -d)"
cp "$here"/scan_prelude.hpp "$here"/scan_emu.cpp "$work"/
cd "$work"
python3 "$here/gen_scan.py" scan_kernels.hpp "$root"/kernels_src/scan/reference.cu \
  "$root"/kernels_src/scan/hillis_steele.cu "$root"/kernels_src/scan/blelloch.cu \
  "$root"/kernels_src/scan/decoupled_lookback.cu "$root"/kernels_src/scan/lookback_tunable.cu
flags=(-std=c++20 -g -pthread -fno-strict-aliasing -Wall -Wno-unknown-pragmas)
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
