#!/usr/bin/env bash
# Replays one session of fixtures/sessions/real/ (what real pages send: page
# loads and reloads with `uitrail.unload`, host events, script-dispatched
# clicks, column sorts, bursts with state) through `uitrail replay` and
# compares its text trace, JSON trace and stability marks with the files
# beside it.
#   real_sessions_test.sh UITRAIL SOURCE_ROOT SESSION
set -uo pipefail

uitrail=$1
root=$2
name=$3
base="$root/fixtures/sessions/real/$name"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

check() { # format, expected file
  if ! "$uitrail" replay "$base.json" --format "$1" >"$work/out" 2>"$work/err"; then
    echo "FAIL ($name): uitrail replay --format $1 failed:" >&2; cat "$work/err" >&2; exit 1
  fi
  [ ! -s "$work/err" ] || { echo "FAIL ($name): stderr is not empty:" >&2; cat "$work/err" >&2; exit 1; }
  diff -u "$2" "$work/out" >&2 || { echo "FAIL ($name): --format $1 differs from $(basename "$2")" >&2; exit 1; }
}

check text "$base.trace.txt"
check json "$base.trace.json"
check marks "$base.marks"
echo "ok $name"
