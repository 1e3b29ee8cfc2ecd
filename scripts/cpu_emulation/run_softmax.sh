#!/usr/bin/env bash
# CPU emulation of softmax's steps 4 and 5 (row_on_chip, warp_row_on_chip), for checking their
# column bookkeeping without a GPU: scripts/cpu_emulation/run_softmax.sh [asan|plain]
# gen_scan.py turns each kernel file into plain C++ over scan_prelude.hpp (a block's threads as
# OS threads, shuffles through per-warp barriers); softmax_emu.cpp runs each at every block size
# on row lengths around what a block or warp holds on chip (1023..1025, 4095..4100, ...), float4
# and scalar paths, exact and random inputs, against a double softmax in float32 ulps (the
# family's rule: at most 32). About a minute on 2 cores under AddressSanitizer.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
mode="${1:-asan}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$here"/scan_prelude.hpp "$here"/softmax_emu.cpp "$work"/
cd "$work"
python3 "$here/gen_scan.py" row_on_chip.hpp "$root"/kernels_src/softmax/row_on_chip.cu
python3 "$here/gen_scan.py" warp_row_on_chip.hpp "$root"/kernels_src/softmax/warp_row_on_chip.cu
flags=(-std=c++20 -g -pthread -Wall -Wno-unknown-pragmas)
if [ "$mode" = plain ]; then
  g++ "${flags[@]}" -O2 -o softmax_emu softmax_emu.cpp
else
  g++ "${flags[@]}" -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
    -o softmax_emu softmax_emu.cpp
fi
./softmax_emu
