#!/usr/bin/env bash
# Checks that the `cmake` on PATH is new enough for kernlab's build (CMakeLists.txt asks for 3.24).
# scripts/setup.sh runs it after installing the packages: Debian 12 ships 3.25 and Ubuntu 24.04
# 3.28, but Ubuntu 22.04's 3.22 is too old. Exit 0 when it is new enough, 1 with one line on
# stderr saying what to do otherwise.
#   scripts/check_cmake.sh [MINIMUM]    (MINIMUM defaults to 3.24)
set -euo pipefail

minimum=${1:-3.24}
if ! command -v cmake >/dev/null 2>&1; then
  echo "setup: cmake was not found on PATH; kernlab needs CMake $minimum or newer" >&2
  exit 1
fi
# The first line reads "cmake version 3.28.3" (a Kitware build may add a suffix: 3.30.0-rc1).
version=$(cmake --version 2>/dev/null | sed -n '1s/^cmake version \([0-9][0-9.]*\).*/\1/p' || true)
if [ -z "$version" ]; then
  echo "setup: could not read the version from 'cmake --version';" \
       "kernlab needs CMake $minimum or newer" >&2
  exit 1
fi
# sort -V puts the older of the two first: the minimum must come first (or be equal).
if [ "$(printf '%s\n%s\n' "$minimum" "$version" | sort -V | sed -n 1p)" != "$minimum" ]; then
  echo "setup: CMake $version is too old, kernlab needs $minimum or newer: install a newer one" \
       "(pip install cmake, or Kitware's APT repository, https://apt.kitware.com) and run setup again" >&2
  exit 1
fi
