#!/usr/bin/env bash
# Tests of `uitrail tune`, one case per meson test:
#   tune_cli_test.sh UITRAIL SOURCE_ROOT CASE
# Each case runs the real binary and checks its exit status, stdout and
# stderr.
set -uo pipefail

uitrail=$1
root=$2
case_name=$3
labelled=$root/fixtures/sessions/labelled
# Sessions without labels: the stories (clicks and forms) and real page
# loads; a small grid keeps the cases fast.
unlabelled_sessions=("$root"/fixtures/sessions/{bluewidget,checkout20,full20,perms20,refund20}.json
                     "$root"/fixtures/sessions/real/{page_loads,script_sort_burst,unload_no_return}.json)
small_grid='enter_threshold=0.5;exit_threshold=0.02;quiet_ms=100,200,300;window_ms=300;busy_cap_ms=10000'
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL ($case_name): $*" >&2; echo "--- stdout" >&2; cat "$work/out" >&2; echo "--- stderr" >&2; cat "$work/err" >&2; exit 1; }

# run EXPECTED_STATUS ARGS...
run() {
  local want=$1; shift
  "$uitrail" "$@" </dev/null >"$work/out" 2>"$work/err"
  local got=$?
  [ "$got" -eq "$want" ] || fail "exit status $got, expected $want (uitrail $*)"
}
stdout_has() { grep -qF -- "$1" "$work/out" || fail "stdout lacks: $1"; }
stderr_has() { grep -qF -- "$1" "$work/err" || fail "stderr lacks: $1"; }

# The value of column NAME in the row starting with LABEL.
column() {
  awk -v label="$1" -v name="$2" '
    $1 == "" { next }
    /^ +ties / { for (i = 1; i <= NF; i++) col[$i] = i + 1; next }
    $1 == label && (label != "front" || $2 != "*") { print $(col[name]); exit }' "$work/out"
}

# Waits until the daemon started in the background (pid $1, its output in
# $work/daemon.err) says it is ready, or has exited, for at most 20 s: a
# bound for a loaded machine, not a measurement.
wait_ready() {
  for _ in $(seq 400); do
    grep -q ready "$work/daemon.err" && return 0
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.05
  done
}
daemon_state() { if kill -0 "$1" 2>/dev/null; then echo "still running, silent"; else echo "exited"; fi; }

case "$case_name" in
labelled)
  # The run CI makes: the output's shape, and a recommendation without a
  # premature stable mark.
  run 0 tune "$labelled"
  n_sessions=$(ls "$labelled"/*.json | wc -l)
  stdout_has "uitrail tune: $n_sessions sessions,"
  stdout_has "360 settings of the uitrail model"
  stdout_has "Pareto front over (premature sessions, missed settles, p95 latency)"
  grep -qE '^front \* ' "$work/out" || fail "the recommended setting is not marked on the front"
  for label in default domquake recommend; do
    grep -qE "^$label +[0-9]+ +[0-9]+ +[0-9]+/[0-9]+ +([0-9]+|-) +([0-9]+|-) " "$work/out" || fail "no $label row"
  done
  # The tuner's grid has no load_quiet_ms: a page's first settle 100 ms
  # after its render marks the synthetic renders with stalls of 90 ms and
  # more early under every setting; the recommendation is no worse there.
  [ "$(column recommend premature)" -le "$(column default premature)" ] ||
    fail "the recommended setting has more premature marks than the default"
  grep -qE '^Recommended: enter_threshold=[0-9.]+ exit_threshold=[0-9.]+ quiet_ms=[0-9]+ window_ms=[0-9]+ busy_cap_ms=[0-9]+ ' \
    "$work/out" || fail "no Recommended line"
  grep -qE '^(It is the default setting|It differs from the defaults)' "$work/out" || fail "no verdict on the defaults"
  # DOMQuake, which ignores loading indicators, marks the skeleton stable
  # before its data: the truth must catch that.
  [ "$(column domquake premature)" -gt 0 ] || fail "DOMQuake shows no premature mark"
  stdout_has "Failures of DOMQuake:"
  stdout_has "skeleton_data_5_0s (1 premature)"
  # Both forms of the truth are read: static_page has a sidecar only.
  [ -f "$labelled/static_page.labels" ] || fail "static_page.labels is missing"
  if grep -q '"uitrail.label"' "$labelled/static_page.json"; then fail "static_page.json carries labels"; fi
  # The same answer with one job as with several.
  cp "$work/out" "$work/out.parallel"
  run 0 tune "$labelled" --jobs 1
  diff <(sed 1d "$work/out.parallel") <(sed 1d "$work/out") >&2 || fail "--jobs 1 gives another result" ;;
svg)
  run 0 tune "$labelled" --svg "$work/plot.svg" --svg-session shell_data_2_5s --grid 'quiet_ms=200,300'
  stdout_has "SVG plot of shell_data_2_5s: $work/plot.svg"
  python3 - "$work/plot.svg" <<'PY' || fail "the SVG is not well-formed or lacks a part"
import sys
import xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == ns + "svg", root.tag
groups = {g.get("class"): g for g in root.iter(ns + "g")}
for part in ("busy", "axes", "ticks", "marks", "truth", "legend"):
    assert part in groups, part
assert len(list(groups["busy"])) >= 1, "no busy period shaded"
assert len(list(groups["marks"])) >= 1, "no mark drawn"
assert len(groups["truth"].findall(ns + "path")) == 1, "one true settle expected"
line = root.find(ns + "polyline")
assert line is not None and len(line.get("points").split()) > 100, "too few intensity samples"
assert "shell_data_2_5s" in root.find(ns + "title").text
PY
  # The default session is the first in name order.
  run 0 tune "$labelled" --svg "$work/first.svg" --grid 'quiet_ms=200'
  stdout_has "SVG plot of carousel_3s:" ;;
svg_long_session)
  # A session of 1 000 s would take 50 000 samples at one per 20 ms
  # (UT_TUNE_SVG_STEP_MS): the plot is capped at UT_TUNE_SVG_SAMPLES_MAX
  # (20 000) samples, spread over the whole session.
  cat >"$work/long.json" <<'JSON'
[
 ["uitrail.nav", 1700000000.0, {"tab": "t", "url": "/", "title": "Long", "how": "load"}],
 ["uitrail.mutation", 1700000000.1, {"tab": "t", "dom": [500, 10], "recs": [["main", 0, 2, 400, 300, 30000]], "busy": 0}],
 ["uitrail.label", 1700000000.3, {"tab": "t", "settled": true}],
 ["uitrail.mutation", 1700001000.0, {"tab": "t", "dom": [500, 10], "recs": [["main", 0, 2, 400, 300, 30000]], "busy": 0}],
 ["uitrail.label", 1700001000.2, {"tab": "t", "settled": true}]
]
JSON
  run 0 tune "$work/long.json" --svg "$work/long.svg" --grid 'quiet_ms=200'
  python3 - "$work/long.svg" <<'PY' || fail "the long session's plot is not capped at 20 000 samples"
import sys
import xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
points = ET.parse(sys.argv[1]).getroot().find(ns + "polyline").get("points").split()
assert 10000 < len(points) <= 20000, len(points)
xs = [float(p.split(",")[0]) for p in points]
assert xs == sorted(xs), "samples out of order"
PY
  ;;
grid)
  run 0 tune "$labelled" --grid 'quiet_ms=100,200;exit_threshold=0.02;enter_threshold=0.5;window_ms=300;busy_cap_ms=10000'
  stdout_has "2 settings of the uitrail model"
  # quiet_ms 100 marks renders stable in their gaps; the recommendation
  # must be 200, and with every other parameter at its default, that is
  # the default setting.
  stdout_has "Recommended: enter_threshold=0.5 exit_threshold=0.02 quiet_ms=200 "
  stdout_has "It is the default setting"
  # A parameter outside the default grid becomes a column.
  run 0 tune "$labelled/click_dialog.json" --grid 'leaf_floor=0.01,0.05;quiet_ms=200;enter_threshold=0.1;exit_threshold=0.02;window_ms=300;busy_cap_ms=10000'
  grep -qE '^ +ties .* leaf_floor$' "$work/out" || fail "no leaf_floor column"
  stdout_has "uitrail tune: 1 sessions, 3 true settles, 2 settings" ;;
recording_with_sidecar)
  # A recording written by the record module, labelled by a sidecar: its
  # page settles with its last mutations (info: 14:32:06.560).
  mkdir "$work/rec"
  cp "$root/fixtures/fuzz/fuzz_recording/clean.uitrail" "$work/rec/"
  echo '{"tab":"tab-7f3a","settled":1706711526560}' >"$work/rec/clean.labels"
  echo 'not a session' >"$work/rec/notes.txt"
  run 0 tune "$work/rec" --grid 'quiet_ms=200,300'
  stdout_has "uitrail tune: 1 sessions, 1 true settles, 144 settings"
  # The page showed a loading indicator before it settled, so its first
  # settle waits quiet_ms (200) like a later change: no premature mark at
  # the pause in its render, and the mark is 200 ms after the settle.
  grep -qE '^default +0 +0 +0/1 +200 +200 ' "$work/out" || fail "the default should mark 200 ms after the settle" ;;
no_labels)
  run 1 tune "$root/fixtures/stability/static_page.json"
  stderr_has "static_page.json: no true settle: add uitrail.label entries or a .labels file"
  mkdir "$work/empty"
  run 1 tune "$work/empty"
  stderr_has "holds no session" ;;
bad_arguments)
  run 2 tune
  stderr_has "missing PATH"
  stderr_has "usage: uitrail tune PATH..."
  run 2 tune "$work/nope"
  stderr_has "cannot open $work/nope: No such file or directory"
  run 2 tune "$labelled" --bogus
  stderr_has "unknown option '--bogus'"
  run 2 tune "$labelled" --jobs
  stderr_has "option '--jobs' needs a value"
  run 2 tune "$labelled" --svg-session x
  stderr_has "--svg-session needs --svg FILE"
  run 2 tune "$labelled" --svg "$work/x.svg" --svg-session nope
  stderr_has "--svg-session 'nope': no such session"
  while IFS='|' read -r spec message; do
    run 2 tune "$labelled" --grid "$spec"
    stderr_has "uitrail tune: --grid: $message"
  done <<'TABLE'
quiet=1|unknown parameter 'quiet'; known: enter_threshold exit_threshold quiet_ms
quiet_ms|'quiet_ms': use name=value,value,...
quiet_ms=|quiet_ms has no values
quiet_ms=abc|quiet_ms=abc: quiet_ms must be a whole number from 0 to 60000 ms
quiet_ms=1.5|quiet_ms=1.5: quiet_ms must be a whole number from 0 to 60000 ms
quiet_ms=-1|quiet_ms=-1: quiet_ms must be a whole number from 0 to 60000 ms
enter_threshold=0|enter_threshold=0: enter_threshold must be a number from above 0 to 1000
churn_rhythm_tolerance=1.5|churn_rhythm_tolerance=1.5: churn_rhythm_tolerance must be a number from 0 to 1
window_ms=5|window_ms=5: window_ms must be a whole number from 6 to 60000 ms
quiet_ms=100;quiet_ms=200|quiet_ms is given twice
exit_threshold=nan|exit_threshold=nan: exit_threshold must be a number from 0 to 1000
TABLE
  help_out=$("$uitrail" tune --help) || fail "tune --help failed"
  grep -qF -- "--svg-session NAME" <<<"$help_out" || fail "help lacks --svg-session" ;;
limits)
  # UT_TUNE_JOBS_MAX
  run 2 tune "$labelled" --jobs 257
  stderr_has "--jobs '257': use a number from 1 to 256"
  run 2 tune "$labelled" --jobs 0
  # UT_TUNE_GRID_VALUES_MAX: 65 values of one parameter
  run 2 tune "$labelled" --grid "quiet_ms=$(seq -s, 0 64)"
  stderr_has "quiet_ms: more than 64 values"
  # UT_TUNE_SETTINGS_MAX: 64 × 64 × 4 × 3 × 2 settings
  run 2 tune "$labelled" --grid "quiet_ms=$(seq -s, 0 63);leaf_floor=$(seq -s, 0 63)"
  stderr_has "--grid: more than 20000 settings"
  # UT_TUNE_GRID_SPEC_MAX_BYTES
  run 2 tune "$labelled" --grid "quiet_ms=$(printf '1%.0s' $(seq 4100))"
  stderr_has "--grid: longer than 4096 bytes"
  # UT_TUNE_LABELS_MAX: 10001 labels in a sidecar
  cp "$labelled/click_dialog.json" "$work/many.json"
  awk 'BEGIN { for (i = 0; i <= 10000; i++) printf "{\"tab\":\"t\",\"settled\":%d}\n", 1700000000000 + i }' >"$work/many.labels"
  run 1 tune "$work/many.json"
  stderr_has "more than 10000 labels"
  # UT_TUNE_LABELS_FILE_MAX_BYTES: a sidecar over 1 MiB
  cp "$labelled/click_dialog.json" "$work/big.json"
  { for i in $(seq 30000); do echo '                                         '; done; } >"$work/big.labels"
  run 1 tune "$work/big.json"
  stderr_has "big.labels: over 1048576 bytes"
  # UT_TUNE_FILES_MAX: a directory of 4097 sessions
  mkdir "$work/many"
  (cd "$work/many" && seq -f 's%05g.json' 4097 | xargs touch)
  run 1 tune "$work/many"
  stderr_has "more than 4096 sessions"
  # UT_CLI_INPUT_MAX_BYTES: a session over 256 MiB (sparse)
  truncate -s $((256 * 1024 * 1024 + 1)) "$work/huge.msgpack"
  run 1 tune "$work/huge.msgpack"
  stderr_has "huge.msgpack: input over 268435456 bytes" ;;
recorded)
  # The recordings made in headless Chromium by tests/e2e/record-sessions.mjs
  # (fixtures/sessions/recorded), with the synthetic sessions, as CI runs it.
  recorded=$root/fixtures/sessions/recorded
  n_recorded=$(ls "$recorded"/*.uitrail | wc -l)
  [ "$n_recorded" -ge 33 ] || fail "$n_recorded recordings in $recorded: want 3 runs of each of the 11 cases"
  # Each recording is whole, was closed by its tab's uitrail.close, and has
  # a sidecar whose labels name the recording's own tab (a label for a tab
  # the recording lacks would only show up as a missed settle).
  settles=0
  for file in "$recorded"/*.uitrail; do
    sidecar=${file%.uitrail}.labels
    [ -s "$sidecar" ] || fail "$file has no sidecar ${sidecar##*/}"
    run 0 info "$file"
    stdout_has "damage: none"
    stdout_has "close 1)"
    tab=$(sed -n 's/^  tabs: \([^ ]*\) (.*/\1/p' "$work/out")
    [ -n "$tab" ] || fail "uitrail info names no tab for $file"
    if grep -vqF "{\"tab\":\"$tab\"," "$sidecar"; then fail "${sidecar##*/} labels a tab other than $tab"; fi
    settles=$((settles + $(wc -l <"$sidecar")))
  done
  # Read alone, every recorded session decodes without a rejected record
  # and every label counts.
  run 0 tune "$recorded"
  [ -s "$work/err" ] && fail "tune of the recordings wrote to stderr"
  stdout_has "uitrail tune: $n_recorded sessions, $settles true settles, 360 settings"
  # The labels are on the clock of the marks: a page's true settle is its
  # last flush, and the default marks stable quiet_ms (200) after it, so the
  # median latency is about 200 ms, not an offset between two clocks.
  median=$(column default median_ms)
  [ "$median" -ge 200 ] && [ "$median" -lt 260 ] || fail "default median latency $median ms: labels on another clock?"
  # Loading indicators hold the default model until the data is in; DOMQuake
  # ignores them and marks the 1.3 s shell stable before its data.
  default_failures=$(grep '^Failures of the default:' "$work/out")
  for page in skeleton_busy_then_data shell_then_late_data; do
    if grep -qE "$page-[0-9]+ \([0-9]+ premature" <<<"$default_failures"; then fail "default: premature mark on $page"; fi
  done
  grep '^Failures of DOMQuake:' "$work/out" | grep -qE 'shell_then_late_data-[0-9]+ \([0-9]+ premature' ||
    fail "DOMQuake shows no premature mark on shell_then_late_data"
  # The CI run: recordings and synthetic sessions together.
  n_labelled=$(ls "$labelled"/*.json | wc -l)
  run 0 tune "$recorded" "$labelled"
  stdout_has "uitrail tune: $((n_recorded + n_labelled)) sessions,"
  grep -qE '^front \* ' "$work/out" || fail "the recommended setting is not marked on the front"
  grep -qE '^Recommended: enter_threshold=[0-9.]+ exit_threshold=[0-9.]+ quiet_ms=[0-9]+ ' "$work/out" ||
    fail "no Recommended line"
  grep -qE '^(It is the default setting|It differs from the defaults)' "$work/out" || fail "no verdict on the defaults" ;;
bad_sidecar)
  cp "$labelled/click_dialog.json" "$work/s.json"
  while IFS='|' read -r line message; do
    printf '%s\n' "$line" >"$work/s.labels"
    run 1 tune "$work/s.json"
    stderr_has "s.labels:1: $message"
  done <<'TABLE'
{"tab":"t"}|want {"tab":"<1 to 128 bytes>","settled":<ms since the epoch>}
{"tab":"","settled":1}|want {"tab":"<1 to 128 bytes>","settled":<ms since the epoch>}
{"tab":"t","settled":"soon"}|want {"tab":"<1 to 128 bytes>","settled":<ms since the epoch>}
{"tab":"t","settled":-5}|want {"tab":"<1 to 128 bytes>","settled":<ms since the epoch>}
{"tab":"t",|bad JSON:
TABLE
  # In-stream labels that are malformed are reported and skipped.
  printf '[["uitrail.nav", 1718000000, {"tab":"t","url":"/","title":"x","how":"load"}],\n ["uitrail.label", 1718000001, {"tab":"t"}],\n ["uitrail.label", 1718000001, {"tab":"t","settled":true}]]' >"$work/l.json"
  run 0 tune "$work/l.json" --grid 'quiet_ms=200'
  stderr_has 'record rejected (missing_field): uitrail.label: field "settled" is missing'
  stdout_has "1 true settles" ;;
daemon_runs_recommended)
  # uitraild runs what the tuner recommends, every parameter of it, on its
  # command line and in its config file; a grid over parameters outside
  # the default grid too.
  run 0 tune "$labelled" --grid 'churn_min_period_ms=40,60;leaf_floor=0.02,0.03;decay_half_life_ms=50;quiet_ms=200,300'
  options=$(sed -n 's/^As uitraild options: //p' "$work/out")
  [ -n "$options" ] || fail "no 'As uitraild options:' line"
  n_options=$(grep -o -- '--stab-' <<<"$options" | wc -l)
  # Every row of the parameter table, counted there.
  n_params=$(grep -c '^ *X(' "$root/include/uitrail/stab_params.h")
  [ "$n_options" -eq "$n_params" ] || fail "$n_options parameters in the options, want all $n_params: $options"
  rt=$work/rt
  mkdir -m 700 "$rt"
  # shellcheck disable=SC2086 # the options are words
  timeout 30 "$UITRAILD" --runtime-dir "$rt" --http off $options >"$work/daemon.err" 2>&1 &
  pid=$!
  wait_ready "$pid"
  grep -q ready "$work/daemon.err" || { cat "$work/daemon.err" >&2; fail "uitraild refused the recommended options ($(daemon_state "$pid"))"; }
  kill "$pid"; wait "$pid"
  # shellcheck disable=SC2086
  set -- $options
  while [ $# -ge 2 ]; do echo "${1#--} = $2"; shift 2; done >"$work/tuned.conf"
  timeout 30 "$UITRAILD" --runtime-dir "$rt" --http off --config "$work/tuned.conf" >"$work/daemon.err" 2>&1 &
  pid=$!
  wait_ready "$pid"
  grep -q ready "$work/daemon.err" || { cat "$work/tuned.conf" "$work/daemon.err" >&2; fail "uitraild refused the config ($(daemon_state "$pid"))"; }
  kill "$pid"; wait "$pid" ;;
unlabelled)
  # Sessions without labels (issue 26 item 4): the report's shape, the
  # objective met, and the labelled mode still asking for labels.
  run 1 tune "${unlabelled_sessions[@]}"
  stderr_has "no true settle: add uitrail.label entries or a .labels file, or tune with --unlabelled"
  run 0 tune --unlabelled "${unlabelled_sessions[@]}" --grid "$small_grid"
  stdout_has "uitrail tune --unlabelled: ${#unlabelled_sessions[@]} sessions,"
  stdout_has "3 settings of the uitrail model"
  stdout_has "Objective: the lowest median action -> settle among the settings with no more flaps"
  grep -qE '^front \* ' "$work/out" || fail "the recommended setting is not marked on the front"
  for label in default domquake recommend; do
    grep -qE "^$label +[0-9]+ +[0-9]+ +[0-9.]+ +[0-9]+ +[0-9]+ +([0-9]+|-) +([0-9]+|-) " "$work/out" || fail "no $label row"
  done
  answered=$(sed -n 's/.* \([0-9]*\) answered actions.*/\1/p' "$work/out")
  [ "${answered:-0}" -gt 0 ] || fail "no answered action in the stories"
  # The objective: no more flaps nor unsettled actions than the defaults,
  # and a median no slower.
  [ "$(column recommend flaps)" -le "$(column default flaps)" ] || fail "the recommendation flaps more than the default"
  [ "$(column recommend unsettled)" -le "$(column default unsettled)" ] || fail "the recommendation leaves more unsettled"
  [ "$(column recommend median_ms)" -le "$(column default median_ms)" ] || fail "the recommendation is slower than the default"
  # The same report with one job; --partial and --merge of one file give it too.
  cp "$work/out" "$work/out.parallel"
  run 0 tune --unlabelled "${unlabelled_sessions[@]}" --grid "$small_grid" --jobs 1
  cmp -s "$work/out" "$work/out.parallel" || fail "--jobs 1 gives another report"
  run 0 tune --unlabelled "${unlabelled_sessions[@]}" --grid "$small_grid" --partial "$work/all.json"
  run 0 tune --merge "$work/all.json"
  cmp -s "$work/out" "$work/out.parallel" || fail "--merge of the whole run's partial result gives another report" ;;
unlabelled_shards)
  # N shards run in turn, merged, print byte for byte the report of one
  # process over every session; each session goes to exactly one shard.
  run 0 tune --unlabelled "${unlabelled_sessions[@]}" --grid "$small_grid"
  cp "$work/out" "$work/one"
  shards=4
  for i in $(seq 0 $((shards - 1))); do
    run 0 tune --unlabelled --shard "$i/$shards" "${unlabelled_sessions[@]}" --grid "$small_grid" --partial "$work/part-$i.json"
  done
  total=0
  for i in $(seq 0 $((shards - 1))); do
    n=$(grep -o '"sessions":[0-9]*' "$work/part-$i.json" | cut -d: -f2)
    total=$((total + n))
  done
  [ "$total" -eq "${#unlabelled_sessions[@]}" ] || fail "the shards hold $total sessions, not ${#unlabelled_sessions[@]}"
  run 0 tune --merge "$work"/part-*.json
  diff "$work/one" "$work/out" >&2 || fail "the merged shards give another report than one process"
  # Shards of another grid do not merge.
  run 0 tune --unlabelled --shard 0/2 "${unlabelled_sessions[@]}" --grid 'quiet_ms=100,300' --partial "$work/other.json"
  run 1 tune --merge "$work/part-0.json" "$work/other.json"
  stderr_has "other.json: made with another grid: run every shard with the same --grid" ;;
unlabelled_parallel)
  # The shards under GNU parallel (Debian's `parallel`), the local batch
  # engine PROTOCOL.md §5.3 names, merged: the report of one process.
  if ! parallel --version 2>/dev/null | grep -q 'GNU parallel'; then
    echo "GNU parallel is not installed (Debian package parallel): skipped" >&2
    exit 77
  fi
  run 0 tune --unlabelled "${unlabelled_sessions[@]}" --grid "$small_grid"
  cp "$work/out" "$work/one"
  parallel --will-cite --halt now,fail=1 "$uitrail" tune --unlabelled --shard '{}/3' --grid "'$small_grid'" \
    --partial "$work/part-{}.json" "${unlabelled_sessions[@]}" ::: 0 1 2 >"$work/parallel.out" 2>&1 ||
    { cat "$work/parallel.out" >&2; fail "a shard under GNU parallel failed"; }
  run 0 tune --merge "$work"/part-{0,1,2}.json
  diff "$work/one" "$work/out" >&2 || fail "the shards under GNU parallel give another report than one process" ;;
unlabelled_bad)
  # --partial and --merge refuse what they cannot honour; a hostile or
  # truncated partial result is said, never read (the whole table is
  # test_tune_observed's).
  run 2 tune --partial "$work/p.json" "${unlabelled_sessions[@]}"
  stderr_has "--partial needs --unlabelled"
  run 2 tune --merge
  stderr_has "missing FILE (a partial result of --partial)"
  run 2 tune --merge --grid 'quiet_ms=100' "$work/p.json"
  stderr_has "--merge takes partial results only"
  run 2 tune --unlabelled --shard 2/2 "${unlabelled_sessions[@]}"
  stderr_has "--shard '2/2': use I/N with 0 <= I < N"
  run 1 tune --merge "$work/nope.json"
  stderr_has "cannot open $work/nope.json"
  run 0 tune --unlabelled "${unlabelled_sessions[@]}" --grid "$small_grid" --partial "$work/p.json"
  head -c 100 "$work/p.json" >"$work/cut.json"
  run 1 tune --merge "$work/cut.json"
  stderr_has "cut.json: bad JSON"
  sed 's/"flaps":[0-9]*/"flaps":-1/' "$work/p.json" >"$work/neg.json"
  run 1 tune --merge "$work/neg.json"
  stderr_has 'neg.json: "flaps": want a whole number from 0 to 2^53-1'
  printf '[' >"$work/deep.json"; head -c 100000 /dev/zero | tr '\0' '[' >>"$work/deep.json"
  run 1 tune --merge "$work/deep.json"
  stderr_has "deep.json: bad JSON" ;;
*)
  echo "tune_cli_test.sh: unknown case $case_name" >&2
  exit 2 ;;
esac
exit 0
