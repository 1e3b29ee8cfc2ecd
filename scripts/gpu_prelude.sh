# Sourced by the scripts/gpu_*.sh device scripts, run in the repository root on the GPU machine.
# Sets `out` ($OUT, made), `here` (this folder) and `src` (the source path the build was
# configured with). When build/ is missing it unpacks dist/build.tgz (scripts/pack_gpu.sh makes
# it); when src is not this folder it links src to it, because the build has src baked in (the
# tests' paths, the plugin folder).
out=${OUT:-/tmp/kernlab-out}
mkdir -p "$out"
here=$(pwd)
if [ ! -f build/CMakeCache.txt ] && [ -f dist/build.tgz ]; then
  tar xzf dist/build.tgz || { echo "gpu_prelude: cannot unpack dist/build.tgz" >&2; exit 1; }
fi
# pytest for the python.kernlab_gpu test, where the machine's python3 has none (pack_gpu.sh), and
# that python3 for the test when it is not the /usr/bin one the build found (run_pytest.py).
export KERNLAB_PYTHON=${KERNLAB_PYTHON:-$(command -v python3)}
if ! python3 -c 'import pytest' 2>/dev/null && [ -f dist/pylib.tgz ]; then
  mkdir -p /tmp/kernlab-pylib && tar xzf dist/pylib.tgz -C /tmp/kernlab-pylib &&
    export PYTHONPATH=/tmp/kernlab-pylib${PYTHONPATH:+:$PYTHONPATH}
fi
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' build/CMakeCache.txt)
if [ -z "$src" ]; then echo "gpu_prelude: no build/CMakeCache.txt here" >&2; exit 1; fi
if [ "$src" != "$here" ] && [ ! -e "$src" ]; then
  mkdir -p "$(dirname "$src")" && ln -s "$here" "$src"
fi

# step NAME SECONDS COMMAND...: runs COMMAND under a time limit, its output appended to
# $out/NAME.log between a line that names it and one with its exit code and wall time.
step() {
  local name=$1 secs=$2; shift 2
  echo "=== $name: $*" >> "$out/$name.log"
  local t0 t1
  t0=$(date +%s.%N)
  timeout "$secs" "$@" >> "$out/$name.log" 2>&1
  local rc=$?
  t1=$(date +%s.%N)
  echo "=== $name: exit $rc after $(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s" | tee -a "$out/$name.log"
}
