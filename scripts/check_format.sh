#!/usr/bin/env bash
# The C++ and CUDA sources of host/, plugins/ and tests/ are formatted as .clang-format says
# (ctest: format_check). kernels_src/ is left alone: it is the users' side of the tree.
#   scripts/check_format.sh          report the files that differ, exit 1 if any
#   scripts/check_format.sh --fix    reformat them in place
# Formatting differs between clang-format releases, so this pins release 14 (Debian's
# clang-format-14, which scripts/setup.sh installs).
set -euo pipefail
cd "$(dirname "$0")/.."

tool=""
for t in clang-format-14 clang-format; do
  if command -v "$t" >/dev/null 2>&1 && "$t" --version | grep -q "version 14\."; then
    tool=$t
    break
  fi
done
if [ -z "$tool" ]; then
  echo "check_format: clang-format 14 was not found (Debian package clang-format-14)" >&2
  exit 1
fi

# The tracked files when this is a git clone, else every matching file (a source tarball).
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- host plugins tests | grep -E '\.(cpp|hpp|h|cu|cuh)$' |
                       grep -v '/corpus/')
else
  mapfile -t files < <(find host plugins tests -type f \
                       \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cu' \
                          -o -name '*.cuh' \) -not -path '*/corpus/*' | sort)
fi

if [ "${1:-}" = "--fix" ]; then
  "$tool" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$tool" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check_format: ${#bad[@]} of ${#files[@]} files are not formatted as .clang-format says:"
  printf '  %s\n' "${bad[@]}"
  echo "scripts/check_format.sh --fix reformats them; then review and commit."
  exit 1
fi
echo "check_format: ${#files[@]} files formatted as .clang-format says ($tool)"
