#!/usr/bin/env bash
# The measured results of kernlab's GPU sessions: logs, JSON, scripts, one folder per session,
# kept in this repository's history but out of main's tree. Each session's folder is a commit on
# a line of history of its own (the "results line", no common root with main), which is merged
# into main with `git merge -s ours`: main's files do not change, and every clone of main carries
# the results. A separate branch would not do: only main travels to other clones here.
# Folders of sessions before 2026-11-28 are in main's own history, under docs/results/ at the
# commit before 5efd148 (which moved them out of the tree); this script finds both kinds.
#
#   scripts/results.sh list                 every folder, newest line first
#   scripts/results.sh show FOLDER [FILE]   print FILE of FOLDER (default README.md)
#   scripts/results.sh extract FOLDER DIR   write FOLDER's files into DIR/FOLDER
#   scripts/results.sh add DIR "WHY"        record DIR (its name is the folder's) as a new commit
#                                           of the results line and merge it into HEAD
set -euo pipefail
cd "$(dirname "$0")/.."
old=5efd148^:docs/results  # where the folders of the first sessions are

tip() {  # the results line's newest commit: the second parent of HEAD's newest results merge
  local m
  m=$(git log -1 --merges --grep='^Results: ' --format=%H HEAD 2>/dev/null || true)
  [ -n "$m" ] && git rev-parse "$m^2"
}
where() {  # where FOLDER: the tree-ish that holds it
  local t
  t=$(tip || true)
  if [ -n "$t" ] && git cat-file -e "$t:$1" 2>/dev/null; then echo "$t:$1"; return; fi
  if git cat-file -e "$old/$1" 2>/dev/null; then echo "$old/$1"; return; fi
  echo "results.sh: no results folder '$1' (scripts/results.sh list shows them)" >&2
  exit 2
}

case "${1:-}" in
list)
  t=$(tip || true)
  [ -n "$t" ] && git ls-tree --name-only "$t" | grep -v '^README.md$' | sort -r
  git ls-tree --name-only "$old/" 2>/dev/null | sed 's|^docs/results/||' | grep -v '^README.md$' | sort -r
  ;;
show)
  [ $# -ge 2 ] || { echo "usage: results.sh show FOLDER [FILE]" >&2; exit 2; }
  src=$(where "$2")
  if [ "$(git cat-file -t "$src")" = blob ]; then git show "$src"; exit 0; fi  # a one-file session
  git show "$src/${3:-README.md}"
  ;;
extract)
  [ $# -eq 3 ] || { echo "usage: results.sh extract FOLDER DIR" >&2; exit 2; }
  src=$(where "$2")
  mkdir -p "$3/$2"
  git archive --format=tar "$src" | tar -x -C "$3/$2"
  echo "results.sh: $2 written to $3/$2"
  ;;
add)
  [ $# -eq 3 ] && [ -d "$2" ] || { echo "usage: results.sh add DIR \"WHY\" (DIR a folder)" >&2; exit 2; }
  dir=$(cd "$2" && pwd)
  name=$(basename "$dir")
  [ -f "$dir/README.md" ] || { echo "results.sh: $dir has no README.md (device, date, commit, commands)" >&2; exit 2; }
  t=$(tip || true)
  if [ -n "$t" ] && git cat-file -e "$t:$name" 2>/dev/null; then
    echo "results.sh: folder $name is already on the results line" >&2
    exit 2
  fi
  idx=$(mktemp)
  trap 'rm -f "$idx"' EXIT
  export GIT_INDEX_FILE=$idx
  if [ -n "$t" ]; then git read-tree "$t"; else git read-tree --empty; fi
  gitdir=$(git rev-parse --absolute-git-dir)
  (cd "$(dirname "$dir")" && git --git-dir="$gitdir" --work-tree=. add -f -- "$name")
  tree=$(git write-tree)
  unset GIT_INDEX_FILE
  commit=$(git commit-tree "$tree" ${t:+-p "$t"} -m "results: $name" -m "$3")
  git merge -q -s ours --allow-unrelated-histories --no-edit -m "Results: $name" -m "$3" "$commit"
  echo "results.sh: $name recorded as $(git rev-parse --short "$commit"), merged into $(git rev-parse --short HEAD)"
  ;;
*)
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
  [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ] || exit 2
  ;;
esac
