#!/usr/bin/env bash
# scripts/results.sh against this checkout's history (skipped, exit 77, where the source is not a
# git checkout with its history): every folder docs/results.md cites as a source, and does not
# mark lost, can be shown; a folder that is not there is an error; and `add` in a scratch clone
# records a folder without changing main's files.
set -uo pipefail
cd "$(dirname "$0")/.."
if ! git rev-parse --git-dir > /dev/null 2>&1 || ! git cat-file -e 5efd148 2> /dev/null; then
  echo "results_script_test: skipped: not a git checkout with its history (a shallow clone or a tarball)"
  exit 77
fi
fail() { echo "results_script_test: $*"; exit 1; }
list=$(scripts/results.sh list) || fail "list failed"
# Every `YYYY-MM-DD-name/` the docs cite, but those results.md's opening says are lost (the
# paragraph that says where they were).
folders() { grep -ho '`20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]-[a-z0-9.-]*/`' "$@" | tr -d '`/' | sort -u; }
lost=$(awk '/never left the machine/,/^$/' docs/results.md | folders /dev/stdin)
[ -n "$lost" ] || fail "docs/results.md no longer says which folders are lost"
cited=$(comm -23 <(folders docs/*.md README.md) <(echo "$lost"))
[ -n "$cited" ] || fail "the docs cite no results folder"
for f in $cited; do
  echo "$list" | grep -qx "$f" || fail "the docs cite $f, which scripts/results.sh list lacks"
  scripts/results.sh show "$f" > /dev/null || fail "show $f failed"
done
echo "results_script_test: the $(echo "$cited" | wc -l) results folders the docs cite are all there"
scripts/results.sh show no-such-folder > /dev/null 2>&1
[ $? -eq 2 ] || fail "show of a missing folder did not exit 2"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$(pwd)" "$work/repo" || fail "cannot clone"
cp scripts/results.sh "$work/repo/scripts/results.sh"  # this tree's script, committed or not
mkdir -p "$work/2099-01-01-test"
printf '# a test folder\n' > "$work/2099-01-01-test/README.md"
printf 'data\n' > "$work/2099-01-01-test/run.log"
(cd "$work/repo" && GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t scripts/results.sh add "$work/2099-01-01-test" "a test") ||
  fail "add failed"
(cd "$work/repo" && git diff --quiet HEAD^1 HEAD) || fail "add changed main's files"
[ "$(cd "$work/repo" && scripts/results.sh show 2099-01-01-test run.log)" = data ] || fail "the added file is not shown"
[ "$(cd "$work/repo" && scripts/results.sh list | head -1)" = 2099-01-01-test ] || fail "the added folder is not listed first"
echo "results_script_test: add recorded a folder without changing main's files"
