#!/usr/bin/env bash
# The container (Dockerfile), as CI can check it.
#   tests/container_test.sh files  -> the Dockerfile and scripts/setup.sh agree (always runs)
#   tests/container_test.sh image  -> docker build, then the image runs kernlab (exit 77, skipped,
#                                     with the reason where there is no Docker engine)
set -euo pipefail
cd "$(dirname "$0")/.."

# The packages of an apt-get install in FILE's text (between "install" and the next "&&" or ")").
packages_of() {
  tr '\n' ' ' < "$1" | sed 's/\\ / /g' | grep -o 'apt-get install[^&)]*' | tr ' ' '\n' |
    grep -E '^[a-z0-9][a-z0-9.+-]+$' | grep -vx -e apt-get -e install | sort -u
}

case "${1:-}" in
files)
  docker_pkgs=$(packages_of Dockerfile)
  setup_pkgs=$(sed -n '/^packages=(/,/)/p' scripts/setup.sh | tr -d '()' | sed 's/packages=//' |
               tr ' ' '\n' | grep -E '^[a-z0-9]' | sort -u)
  [ -n "$docker_pkgs" ] || { echo "container_test: no apt-get install found in Dockerfile"; exit 1; }
  extra=$(comm -23 <(echo "$docker_pkgs") <(echo "$setup_pkgs"))
  if [ -n "$extra" ]; then
    echo "container_test: the Dockerfile installs what scripts/setup.sh does not: $extra"; exit 1
  fi
  # Each library the configure step requires (CMakeLists.txt's find_package and find_path).
  for p in cmake libboost-dev libboost-program-options-dev nlohmann-json3-dev libxxhash-dev \
           libtomlplusplus-dev libeigen3-dev; do
    echo "$docker_pkgs" | grep -qx "$p" || { echo "container_test: the Dockerfile lacks $p"; exit 1; }
  done
  # The options it configures with exist in the top-level CMakeLists.txt.
  for o in $(grep -o -- '-D[A-Z_]*=' Dockerfile | sed 's/^-D//; s/=$//' | sort -u); do
    case "$o" in CMAKE_*) continue ;; esac
    grep -q "$o" CMakeLists.txt || { echo "container_test: the Dockerfile sets $o, which CMakeLists.txt does not have"; exit 1; }
  done
  grep -q '^ENTRYPOINT \["kernlab"\]' Dockerfile || { echo "container_test: no kernlab ENTRYPOINT"; exit 1; }
  echo "container_test: the Dockerfile's packages are setup.sh's ($(echo $docker_pkgs | wc -w) of them) and its options CMake's"
  ;;
image)
  if ! why=$(docker info 2>&1 >/dev/null); then
    echo "SKIPPED: no Docker engine here, the image was not built: $(echo "$why" | tail -n 1)"
    exit 77
  fi
  tag=kernlab-test:$$
  trap 'docker rmi -f "$tag" >/dev/null 2>&1 || true' EXIT
  docker build -q -t "$tag" .
  docker run --rm "$tag" --version
  docker run --rm "$tag" --compile-only --variant reduce5 --block 256
  if docker run --rm --gpus all "$tag" --version >/dev/null 2>&1; then
    docker run --rm --gpus all "$tag" --variant reduce5,cub --block 256 --size 2^20 --min-time 0.01
  else
    echo "container_test: no GPU for containers here (docker run --gpus all failed): the default job was not run"
  fi
  ;;
*)
  echo "usage: tests/container_test.sh files|image" >&2; exit 2 ;;
esac
