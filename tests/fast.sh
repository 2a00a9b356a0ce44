#!/usr/bin/env bash
# tests/fast.sh -- what `make test` runs: the fast tier (every CTest test but those
# labelled `integration`), quietly. It configures (first time only) and builds
# BUILD_DIR with their output kept in BUILD_DIR/configure.log and build.log, shown
# when a step fails; a warning of a build that succeeds is shown too. Passing tests
# print nothing; a failing test prints its whole output, and the run ends with
# CTest's summary (how many passed, which failed, which did not run, the time).
#
# Usage: tests/fast.sh BUILD_DIR JOBS [CMAKE_FLAGS...]
set -uo pipefail

build=$1 jobs=$2
shift 2
cd "$(dirname "$0")/.."

if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "make test: configuring $build/ (log: $build/configure.log)"
  mkdir -p "$build"
  cmake -S . -B "$build" "$@" >"$build/configure.log" 2>&1 ||
    { cat "$build/configure.log"; echo "make test: configuring failed"; exit 1; }
fi

echo "make test: building in $build/ (log: $build/build.log)"
# --no-print-directory: the generated Makefiles call make recursively, and each
# level would say which directory it enters and leaves.
if ! cmake --build "$build" -j "$jobs" -- --no-print-directory >"$build/build.log" 2>&1; then
  # The compiler's and linker's complaints, then the end of the log.
  grep -E -A3 'error|undefined reference|\*\*\*' "$build/build.log" | head -n 80
  echo "..."
  tail -n 20 "$build/build.log"
  echo "make test: the build failed; the whole log is $build/build.log"
  exit 1
fi
grep -E -A3 'warning:' "$build/build.log" | head -n 60

log=$build/Testing/fast.log
mkdir -p "$build/Testing"
echo "make test: running $(cd "$build" && ctest -N -LE integration | grep -c 'Test *#') tests (log: $log)"
(cd "$build" && ctest --output-on-failure -j "$jobs" -LE integration) >"$log" 2>&1
rc=$?
# Quiet while tests pass: a failing test's line, then its output in full
# (--output-on-failure prints it right after that line, until the next test's
# line); then the summary, from CTest's "N% tests passed" on, which also names the
# tests that did not run.
awk '
  /^ *Start +[0-9]+: / { next }
  /^ *[0-9]+\/[0-9]+ Test +#[0-9]+: / {
    failing = $0 !~ / Passed +[0-9.]+ sec$/ && $0 !~ /Skipped|Not Run/
    if (failing) { sub(/^ +/, ""); print }
    next
  }
  /tests passed, .* tests failed out of/ { summary = 1 }
  summary || failing { print }
' "$log"
if [ "$rc" -ne 0 ] && ! grep -q 'tests passed, .* tests failed out of' "$log"; then
  cat "$log" # CTest stopped before its summary: show everything it said
fi
exit "$rc"
