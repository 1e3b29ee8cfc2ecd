#!/usr/bin/env bash
# Fuzzes the parsers of the text kernlab takes from its users and its tools with libFuzzer
# (tests/fuzz), one target after the other, under ASan and UBSan. A clang build of its own,
# beside the normal g++ one:
#   scripts/fuzz.sh                   -> every target in tests/fuzz/targets.txt for 180 s each
#   scripts/fuzz.sh 600               -> each for 600 s
#   scripts/fuzz.sh 60 metadata       -> only fuzz_metadata
#   scripts/fuzz.sh --build-only      -> configure and build the targets, run nothing
#   scripts/fuzz.sh --no-build 15 config  -> run what is built (ctest's fuzz.* tests do this)
# Environment: JOBS (build parallelism, default 2), FUZZ_ARGS (more libFuzzer flags; for runs
# much longer than 10 minutes, FUZZ_ARGS=-rss_limit_mb=4096: ASan's RSS passes 1 GB by then),
# FUZZ_DIR (the build folder, default build-fuzz), FUZZ_INSTALL=0 (never apt-get clang: exit 77,
# "skipped", when it is missing).
# Writes $FUZZ_DIR/: the targets, corpus/<target>/ (inputs found, kept between runs; the seeds
# in tests/fuzz/corpus/ are only read), crashes/ (crash-*, leak-*, timeout-* files), logs/.
# Exits 1 when a target found something. To reproduce or shrink a finding:
#   build-fuzz/fuzz_metadata build-fuzz/crashes/metadata-crash-...
#   build-fuzz/fuzz_metadata -minimize_crash=1 -max_total_time=60 build-fuzz/crashes/metadata-crash-...
set -euo pipefail
cd "$(dirname "$0")/.."

build=1 run=1
case "${1:-}" in
  --build-only) run=0; shift ;;
  --no-build) build=0; shift ;;
esac
seconds=${1:-180}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(grep -Ev '^[[:space:]]*(#|$)' tests/fuzz/targets.txt)
fi
dir=${FUZZ_DIR:-build-fuzz}

# clang-14 with its runtime libraries (libFuzzer and the sanitizers are in libclang-rt-14-dev).
missing=()
command -v clang++-14 >/dev/null 2>&1 || missing+=(clang-14)
ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 ||
  missing+=(libclang-rt-14-dev)
if [ ${#missing[@]} -gt 0 ] && [ "${FUZZ_INSTALL:-1}" = 0 ]; then
  echo "fuzz: skipped: ${missing[*]} not installed (scripts/setup.sh installs them)"
  exit 77
fi

if [ $build -eq 1 ]; then
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
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    CC=clang-14 CXX=clang++-14 cmake -S . -B "$dir" -DKERNLAB_ENABLE_FUZZING=ON \
      -DKERNLAB_ENABLE_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
  fi
  # Only the fuzz targets: the rest of this configure (kernlab, plugins) is never built.
  cmake --build "$dir" -j"${JOBS:-2}" --target "${targets[@]/#/fuzz_}"
fi
[ $run -eq 1 ] || exit 0

mkdir -p "$dir/crashes" "$dir/logs"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
status=0
for t in "${targets[@]}"; do
  if [ ! -x "$dir/fuzz_$t" ]; then
    echo "fuzz: $dir/fuzz_$t is not built (scripts/fuzz.sh --build-only builds it)" >&2
    status=1
    continue
  fi
  mkdir -p "$dir/corpus/$t"
  log="$dir/logs/$t.log"
  echo "fuzz: fuzz_$t for ${seconds} s (log: $log)"
  # New inputs go to the first folder ($dir/corpus/$t); the committed seeds are read only.
  # The header parser also starts from every shipped kernel file, read where it lives.
  seeds=("tests/fuzz/corpus/$t")
  [ "$t" != metadata ] || seeds+=(kernels_src/*/)
  [ "$t" != results_structure ] || seeds+=(tests/fuzz/corpus/results)
  # Seeds kept compressed in the repository (gzip -9n; a 33 KB line) are unpacked beside it.
  gz=(tests/fuzz/corpus/"$t"/*.gz)
  if [ -e "${gz[0]}" ]; then
    mkdir -p "$dir/seeds/$t"
    for f in "${gz[@]}"; do gzip -dc "$f" >"$dir/seeds/$t/$(basename "${f%.gz}")"; done
    seeds+=("$dir/seeds/$t")
  fi
  # Results files are read up to 256 MiB: their inputs may grow to 4 MiB (libFuzzer's default
  # is the largest seed, 4 KiB at least), room for a value nested 100,000 deep.
  max_len=()
  case "$t" in results*) max_len=(-max_len=4194304) ;; esac
  # shellcheck disable=SC2086
  if ! "$dir/fuzz_$t" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
      -dict="tests/fuzz/$t.dict" -artifact_prefix="$dir/crashes/$t-" "${max_len[@]}" \
      ${FUZZ_ARGS:-} "$dir/corpus/$t" "${seeds[@]}" >"$log" 2>&1; then
    echo "fuzz: fuzz_$t found a problem:" >&2
    grep -E "ERROR|SUMMARY|runtime error|fuzz_$t:|Test unit written" "$log" | head -n 20 >&2 || true
    status=1
  fi
  grep -E "^#[0-9]+[[:space:]]+DONE|^stat::" "$log" || tail -n 5 "$log"
done
exit $status
