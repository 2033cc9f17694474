#!/usr/bin/env bash
# tools/build-dir on a machine where cmocka and valgrind came after the
# build directory (tools/run on a bare Debian 12, then tools/test): the
# first configure, without them, leaves the tests out instead of failing;
# once they are there, the next call reconfigures the directory, so the
# tests and the valgrind test setup appear; a call with nothing new
# reconfigures nothing. "Without them" is made for the test alone: a PATH
# with every program but valgrind and cmake (meson's other way to find
# cmocka), and a pkg-config search path without cmocka.pc.
#   build_dir_test.sh SOURCE_ROOT
set -uo pipefail

root=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir "$work/bin" "$work/pc"
IFS=: read -ra path_dirs <<<"$PATH"
for d in "${path_dirs[@]}"; do
  for exe in "$d"/*; do
    name=${exe##*/}
    case $name in valgrind|cmake) continue ;; esac
    [ -x "$exe" ] && [ ! -e "$work/bin/$name" ] && ln -s "$exe" "$work/bin/$name"
  done
done
IFS=: read -ra pc_dirs <<<"$(pkg-config --variable pc_path pkg-config)"
for d in "${pc_dirs[@]}"; do
  for pc in "$d"/*.pc; do
    [ -e "$pc" ] && [ "${pc##*/}" != cmocka.pc ] && [ ! -e "$work/pc/${pc##*/}" ] && ln -s "$pc" "$work/pc/"
  done
done
without() { PATH="$work/bin" PKG_CONFIG_LIBDIR="$work/pc" "$@"; }
without pkg-config --exists cmocka && fail "cmocka.pc is still visible"
without command -v valgrind >/dev/null && fail "valgrind is still on the PATH"

dir=$work/build
tests_of() { meson introspect "$dir" --tests | python3 -c '
import json, sys
print("\n".join(t["name"] for t in json.load(sys.stdin)))'; }

# 1. Without cmocka and valgrind: configured, the daemon in, no test of
# tests/ (only the fuzz corpora, which need no cmocka).
without "$root/tools/build-dir" --configure-only "$dir" 2>"$work/err1" ||
  { cat "$work/err1" >&2; fail "configuring without cmocka failed"; }
meson introspect "$dir" --targets | grep -q '"name": "uitraild"' || fail "no uitraild target"
tests_of >"$work/tests1"
grep -qv "_corpus$" "$work/tests1" && fail "tests of tests/ (cmocka) are configured without cmocka"
grep -q '^Program valgrind found: NO' "$dir/meson-logs/meson-log.txt" || fail "valgrind was found"

# 2. Both "installed": the next call reconfigures, and says why.
"$root/tools/build-dir" --configure-only "$dir" 2>"$work/err2" ||
  { cat "$work/err2" >&2; fail "the second call failed"; }
grep -q "reconfiguring .*cmocka" "$work/err2" || { cat "$work/err2" >&2; fail "no reconfigure for cmocka"; }
grep -q "reconfiguring .*valgrind" "$work/err2" || { cat "$work/err2" >&2; fail "no reconfigure for valgrind"; }
tests_of >"$work/tests2"; grep -qv "_corpus$" "$work/tests2" || fail "the cmocka tests are still missing after the reconfigure"
grep -q '^Program valgrind found: YES' "$dir/meson-logs/meson-log.txt" || fail "valgrind still not found"

# 3. Nothing new: nothing reconfigured.
"$root/tools/build-dir" --configure-only "$dir" 2>"$work/err3" || fail "the third call failed"
grep -q reconfiguring "$work/err3" && { cat "$work/err3" >&2; fail "reconfigured with nothing new"; }
echo "ok"
