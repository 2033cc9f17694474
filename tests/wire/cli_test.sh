#!/usr/bin/env bash
# Tests of the `uitrail` command line, one case per meson test:
#   cli_test.sh UITRAIL SOURCE_ROOT CASE
# Each case runs the real binary and checks its exit status, stdout and
# stderr.
set -uo pipefail

uitrail=$1
root=$2
case_name=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL ($case_name): $*" >&2; echo "--- stdout" >&2; cat "$work/out" >&2; echo "--- stderr" >&2; cat "$work/err" >&2; exit 1; }

# run EXPECTED_STATUS ARGS...: runs uitrail with stdin from $work/in if present.
run() {
  local want=$1; shift
  local in=/dev/null
  [ -f "$work/in" ] && in=$work/in
  "$uitrail" "$@" <"$in" >"$work/out" 2>"$work/err"
  local got=$?
  [ "$got" -eq "$want" ] || fail "exit status $got, expected $want"
}
stdout_has() { grep -qF -- "$1" "$work/out" || fail "stdout lacks: $1"; }
stderr_has() { grep -qF -- "$1" "$work/err" || fail "stderr lacks: $1"; }
stderr_empty() { [ ! -s "$work/err" ] || fail "stderr is not empty"; }

# A small JSON session: two tabs, a rejected record.
write_session() {
  cat >"$work/s.json" <<'JSON'
[
 ["uitrail.nav", 1718000000, {"tab":"t1","url":"/catalog","title":"Catalog","how":"load"}],
 ["uitrail.nav", 1718000001, {"tab":"t2","url":"/other","title":"Other","how":"load"}],
 ["uitrail.click", 1718000002, {"tab":"t1","role":"button","name":"Apply","el":"b1","ctx":{"kind":"toolbar","name":"Filters"}}],
 ["uitrail.mutation", 1718000002.1, {"tab":"t1","dom":[100,5],"recs":[["main",0,3,40,5,900]],"busy":0}],
 ["uitrail.click", 1718000003, {"tab":"t1","role":"button"}]
]
JSON
}

case "$case_name" in
bluewidget)
  run 0 replay "$root/fixtures/sessions/bluewidget.json"
  diff -u "$root/fixtures/sessions/bluewidget.trace.txt" "$work/out" >&2 || fail "trace differs from bluewidget.trace.txt"
  stderr_empty ;;
stability_marks)
  # Every stability fixture, replayed through the whole engine, gives the
  # marks the scorer's own tests expect, for both models.
  for f in "$root"/fixtures/stability/*.json; do
    b=${f%.json}
    run 0 replay "$f" --format marks
    diff -u "$b.marks" "$work/out" >&2 || fail "$(basename "$b"): marks differ"
    run 0 replay "$f" --format marks --model domquake
    diff -u "$b.domquake.marks" "$work/out" >&2 || fail "$(basename "$b"): DOMQuake marks differ"
  done ;;
version)
  run 0 --version
  grep -qE '^uitrail [0-9]+\.[0-9]+\.[0-9]+$' "$work/out" || fail "bad version line" ;;
help)
  run 0 --help
  stdout_has "  replay "
  run 0 replay --help
  stdout_has "usage: uitrail replay FILE"
  stdout_has "--max-tokens N" ;;
no_arguments)
  run 2
  stderr_has "usage: uitrail COMMAND" ;;
unknown_command)
  run 2 frobnicate
  stderr_has "uitrail: unknown command 'frobnicate'" ;;
unknown_option)
  run 2 replay --bogus x.json
  stderr_has "uitrail replay: unknown option '--bogus'"
  stderr_has "usage: uitrail replay FILE" ;;
option_without_value)
  run 2 replay x.json --tab
  stderr_has "option '--tab' needs a value" ;;
bad_option_values)
  for args in "--limit 0" "--limit 1001" "--max-tokens x" "--ring 0" "--debounce-ms 99999999999" "--format xml"; do
    # shellcheck disable=SC2086
    run 2 replay x.json $args
    stderr_has "uitrail replay: ${args%% *}"
  done ;;
closed_tab)
  # A tab that ended with close: its trace as it was just before, and a note.
  cat >"$work/c.json" <<'JSON'
[
 ["uitrail.nav", 1718000000, {"tab":"t1","url":"/catalog","title":"Catalog","how":"load"}],
 ["uitrail.click", 1718000002, {"tab":"t1","role":"button","name":"Apply","el":"b1"}],
 ["uitrail.close", 1718000003, {"tab":"t1"}]
]
JSON
  run 0 replay "$work/c.json"
  stdout_has 'click button "Apply"'
  stdout_has 'navigate /catalog "Catalog"'
  stderr_has 'tab "t1" was closed at 2024-06-10T06:13:23Z: its trace as it was just before'
  run 0 replay "$work/c.json" --tab t1 --format json
  stdout_has '"name":"Apply"' ;;
damaged_recording)
  # A recording cut short: what could be read prints, and the exit says so.
  rec=$(ls "$root"/fixtures/sessions/recorded/*.uitrail | head -1)
  size=$(stat -c %s "$rec")
  head -c $((size - 20)) "$rec" >"$work/cut.uitrail"
  run 1 replay "$work/cut.uitrail"
  stdout_has 'RECENT USER ACTIONS (newest first):'
  stderr_has 'warning: damaged recording: torn tail'
  stderr_has 'the input is damaged (1 place): printed what could be read'
  run 0 replay "$rec" ;;
missing_file)
  run 2 replay
  stderr_has "missing FILE"
  run 2 replay "$work/does-not-exist"
  stderr_has "cannot open $work/does-not-exist: No such file or directory"
  # An empty file (a recording before its first frame): said, not silent.
  : >"$work/empty.uitrail"
  run 1 replay "$work/empty.uitrail"
  stderr_has "uitrail replay: $work/empty.uitrail: the input is empty, nothing to read" ;;
two_tabs)
  write_session
  run 0 replay "$work/s.json"
  [ "$(grep -c '^== tab ' "$work/out")" -eq 2 ] || fail "expected two tab headers"
  [ "$(grep '^== tab ' "$work/out" | head -1)" = "== tab t1 ==" ] || fail "t1 first (first appearance)"
  stdout_has 'click button "Apply" (toolbar: Filters)'
  stderr_has 'warning: record rejected (missing_field): uitrail.click: field "name" is missing' ;;
one_tab_json_stdin)
  write_session
  cp "$work/s.json" "$work/in"
  run 0 replay - --tab t2 --format json
  stdout_has '"url":"/other"'
  if grep -q '/catalog' "$work/out"; then fail "t1 leaked into --tab t2"; fi ;;
json_all_tabs)
  write_session
  run 0 replay "$work/s.json" --format json
  head -c 7 "$work/out" | grep -qF '{' || fail "not a JSON object"
  stdout_has '"t1": {'
  stdout_has '"t2": {' ;;
marks)
  write_session
  run 0 replay "$work/s.json" --format marks
  grep -qE '^\{"tab":"t1","time":[0-9]+,"state":"(stable|changing)","intensity":[0-9]+\.[0-9]{3},"marks":[0-9]+\}$' \
    "$work/out" || fail "no mark line of the documented shape"
  if grep -q 'RECENT USER ACTIONS' "$work/out"; then fail "marks format printed a trace"; fi ;;
unknown_tab)
  write_session
  run 1 replay "$work/s.json" --tab nope
  stderr_has 'no tab "nope"' ;;
malformed_msgpack)
  # ["uitrail.nav", 1718000000, {"tab":"a","url":"/x","how":"load"}], then 0xc1.
  printf '\x93\xabuitrail.nav\xce\x66\x66\x99\x80\x83\xa3tab\xa1a\xa3url\xa2/x\xa3how\xa4load\xc1' >"$work/bad.bin"
  run 1 replay "$work/bad.bin"
  stdout_has 'navigate /x'
  stderr_has "uitrail replay: $work/bad.bin: bad input: byte 0xc1 is not valid msgpack at offset 41" ;;
truncated_msgpack)
  # The same message, whole, then a second one cut short: what was read
  # prints, the warning says where, and the exit status is the damaged
  # recording's (1), so that a script can tell a whole input from a part.
  printf '\x93\xabuitrail.nav\xce\x66\x66\x99\x80\x83\xa3tab\xa1a\xa3url\xa2/x\xa3how\xa4load\x93\xabuitrail.nav\xce' >"$work/cut.bin"
  run 1 replay "$work/cut.bin"
  stdout_has 'navigate /x'
  stderr_has "uitrail replay: $work/cut.bin: warning: the stream ends inside a message (14 bytes ignored)"
  stderr_has "uitrail replay: $work/cut.bin: the input is damaged (1 place): printed what could be read"
  head -c 41 "$work/cut.bin" >"$work/whole.bin"
  run 0 replay "$work/whole.bin"
  stdout_has 'navigate /x' ;;
malformed_json)
  printf '[["uitrail.nav", 1718000000,\n {"tab":"a"} "x"]]' >"$work/bad.json"
  run 1 replay "$work/bad.json"
  stderr_has "bad JSON input: JSON error at line 2, column" ;;
json_too_big)
  { printf '['; head -c $((64 * 1024 * 1024)) /dev/zero | tr '\0' ' '; printf ']'; } >"$work/in"
  run 1 replay -
  stderr_has "JSON input over 67108864 bytes" ;;
token)
  # `uitrail token`: mints what --verify (and uitraild) accept, and says
  # clearly what is wrong with its arguments, the secret or a token.
  printf '0123456789abcdef0123456789abcdef\n' >"$work/secret"
  printf 'short\n' >"$work/short"
  run 0 token --secret-file "$work/secret" --tab tab-42 --ttl 60 --origin https://app.example.com
  stderr_empty
  grep -qE '^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$' "$work/out" || fail "not a JWT"
  token=$(cat "$work/out")
  run 0 token --secret-file "$work/secret" --verify "$token"
  stdout_has 'valid: tab "tab-42", expires in'
  stdout_has 'origin https://app.example.com'
  printf 'another-secret-another-secret-another\n' >"$work/other"
  run 1 token --secret-file "$work/other" --verify "$token"
  stderr_has "refused (bad_signature)"
  run 1 token --secret-file "$work/secret" --verify "${token%?}"
  stderr_has "refused ("
  run 2 token --tab t
  stderr_has "--secret-file is required"
  run 2 token --secret-file "$work/secret"
  stderr_has "--tab is required"
  run 2 token --secret-file "$work/secret" --tab t --ttl 0
  stderr_has "--ttl '0': expected seconds from 1 to 604800"
  run 2 token --secret-file "$work/secret" --tab ""
  stderr_has "--tab must be 1 to 128 bytes"
  run 2 token --secret-file "$work/secret" --verify "$token" --tab t
  stderr_has "--verify checks a token"
  run 1 token --secret-file "$work/short" --tab t
  stderr_has "the secret must be at least 32 bytes"
  run 1 token --secret-file "$work/missing" --tab t
  stderr_has "No such file or directory"
  run 0 token --help
  stdout_has "usage: uitrail token --secret-file FILE --tab TAB" ;;
*)
  echo "cli_test.sh: unknown case $case_name" >&2
  exit 2 ;;
esac
exit 0
