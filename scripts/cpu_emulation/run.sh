#!/usr/bin/env bash
# CPU emulation of the tunable kernels, for checking them without a GPU:
#   scripts/cpu_emulation/run.sh [KERNLAB]   (KERNLAB: the kernlab binary, default build/kernlab)
# Builds into a temporary folder: the matmul kernel on a sample of its points (pick_matmul.py)
# under ThreadSanitizer and under AddressSanitizer + UBSan, the reduce kernel under ASan + UBSan,
# and runs them (about half an hour on 2 cores, most of it ThreadSanitizer). The scan family's
# kernels, which talk between blocks, have a script of their own: run_scan.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
kernlab="${1:-$root/build/kernlab}"
work="$(mktemp -d)"
cp "$here"/*.hpp "$here"/*.cpp "$work"/
cd "$work"
"$kernlab" --config /dev/null --kernels-dir "$root/kernels_src" --list --variant tunable |
  grep '^matmul.tunable' | awk '{print $1, $2}' > points.txt
python3 "$here/pick_matmul.py" 1
python3 "$here/gen_matmul.py" "$root/kernels_src/matmul/tunable.cu" matmul_kernel.hpp
python3 "$here/gen_reduce.py" "$root/kernels_src/reduce/reduce_tunable.cu" reduce_kernel.hpp
flags=(-std=c++20 -O1 -g -pthread -I"$root/kernels_src/include")
g++ "${flags[@]}" -fsanitize=address,undefined -fno-sanitize-recover=undefined -o reduce_asan reduce_emu.cpp
g++ "${flags[@]}" -fsanitize=address,undefined -fno-sanitize-recover=undefined -o matmul_asan matmul_emu.cpp
g++ "${flags[@]}" -fsanitize=thread -o matmul_tsan matmul_emu.cpp
./reduce_asan
./matmul_asan
TSAN_OPTIONS=halt_on_error=1 ./matmul_tsan
echo "cpu emulation: all passed ($work)"
