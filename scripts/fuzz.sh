#!/usr/bin/env bash
# Fuzzes the metadata header parser, the config parsing and the results readers (compare, plot)
# with libFuzzer (tests/fuzz), one target after the other. A clang build of its own, beside the
# normal g++ one:
#   scripts/fuzz.sh                 -> each target for 180 s
#   scripts/fuzz.sh 600             -> each for 600 s
#   scripts/fuzz.sh 60 metadata     -> only fuzz_metadata (targets: metadata, config, results)
# Environment: JOBS (build parallelism, default 2), FUZZ_ARGS (more libFuzzer flags; for runs
# much longer than 10 minutes, FUZZ_ARGS=-rss_limit_mb=4096: ASan's RSS passes 1 GB by then).
# Writes build-fuzz/: the targets, corpus/<target>/ (inputs found, kept between runs; the seeds
# in tests/fuzz/corpus/ are only read), crashes/ (crash-*, leak-*, timeout-* files), logs/.
# Exits 1 when a target found something. To reproduce or shrink a finding:
#   build-fuzz/fuzz_metadata build-fuzz/crashes/metadata-crash-...
#   build-fuzz/fuzz_metadata -minimize_crash=1 -max_total_time=60 build-fuzz/crashes/metadata-crash-...
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-180}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(metadata config results)

# clang-14 with its runtime libraries (libFuzzer and the sanitizers are in libclang-rt-14-dev).
missing=()
command -v clang++-14 >/dev/null 2>&1 || missing+=(clang-14)
ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 ||
  missing+=(libclang-rt-14-dev)
if [ ${#missing[@]} -gt 0 ]; then
  echo "fuzz: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# The top-level project enables CUDA (for the plugins), so configuring needs nvcc; the fuzz
# targets themselves use nothing of CUDA but cuda.h's types.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi

if [ ! -f build-fuzz/CMakeCache.txt ]; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -DKERNLAB_ENABLE_FUZZING=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
fi
# Only the fuzz targets: the rest of this configure (kernlab, plugins, tests) is never built.
cmake --build build-fuzz -j"${JOBS:-2}" --target "${targets[@]/#/fuzz_}"

mkdir -p build-fuzz/crashes build-fuzz/logs
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
status=0
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t"
  log="build-fuzz/logs/$t.log"
  echo "fuzz: fuzz_$t for ${seconds} s (log: $log)"
  # New inputs go to the first folder (build-fuzz/corpus/$t); the committed seeds are read only.
  # The header parser also starts from every shipped kernel file, read where it lives.
  seeds=("tests/fuzz/corpus/$t")
  [ "$t" != metadata ] || seeds+=(kernels_src/*/)
  # shellcheck disable=SC2086
  if ! "build-fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
      -dict="tests/fuzz/$t.dict" -artifact_prefix="build-fuzz/crashes/$t-" ${FUZZ_ARGS:-} \
      "build-fuzz/corpus/$t" "${seeds[@]}" >"$log" 2>&1; then
    echo "fuzz: fuzz_$t found a problem:" >&2
    grep -E "ERROR|SUMMARY|runtime error|fuzz_$t:|Test unit written" "$log" | head -n 20 >&2 || true
    status=1
  fi
  grep -E "^#[0-9]+[[:space:]]+DONE|^stat::" "$log" || tail -n 5 "$log"
done
exit $status
