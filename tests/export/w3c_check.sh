#!/usr/bin/env bash
# W3C's own Trace Context test suite against a traced service of hark's
# (tests/export/w3c_service.c), at SPEC_LEVEL=2 STRICT_LEVEL=2: Level 1's tests, the
# advanced ones and Level 2's random flag. The pass is the suite's own verdict:
# "Ran 41 tests" and "OK".
#
#   w3c_check.sh W3C_SERVICE_BINARY
#
# The suite is the `test/` folder of W3C's trace-context repository, kept beside the
# repository in ../shared/w3c-trace-context (or beside the checkout a clone came
# from; HARK_W3C_SUITE names another place). It runs on Debian's Python with
# Debian's python3-aiohttp. Without them the test is skipped (77), except in CI
# (CI=true), where it fails: there the suite must run.
set -uo pipefail

service=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
python=/usr/bin/python3

missing() {
  if [ "${CI:-}" = true ]; then
    echo "w3c: $1: FAILED (CI runs the suite)"
    exit 1
  fi
  echo "w3c: $1: SKIPPED"
  exit 77
}

suite=${HARK_W3C_SUITE:-}
if [ -z "$suite" ]; then
  origin=$(git -C "$root" config --get remote.origin.url 2>/dev/null || true)
  dirs=("$root/.." "$root/../..")
  case $origin in /*) dirs+=("$origin/.." "$origin/../..") ;; esac
  for d in "${dirs[@]}"; do
    if [ -f "$d/shared/w3c-trace-context/test/test.py" ]; then
      suite=$d/shared/w3c-trace-context/test
      break
    fi
  done
fi
[ -n "$suite" ] && [ -f "$suite/test.py" ] || missing "W3C's suite not found (../shared/w3c-trace-context)"
"$python" -c 'import aiohttp' 2>/dev/null || missing "no aiohttp for $python (apt-get install python3-aiohttp)"

work=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

"$service" "$work/port" 2>"$work/service.log" &
pid=$!
for _ in $(seq 100); do
  [ -s "$work/port" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
[ -s "$work/port" ] || { echo "w3c: the service did not start"; cat "$work/service.log"; exit 1; }
endpoint=http://127.0.0.1:$(cat "$work/port")/test

# The harness serves the callbacks on a port of its own: a free one, asked of the
# kernel; taken meanwhile by someone else (the harness then cannot listen), another.
ok=false
for _ in 1 2 3; do
  port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  (cd "$suite" && PYTHONDONTWRITEBYTECODE=1 SPEC_LEVEL=2 STRICT_LEVEL=2 HARNESS_HOST=127.0.0.1 \
    HARNESS_PORT=$port timeout 600 "$python" test.py "$endpoint") >"$work/suite.log" 2>&1
  grep -q '^harness listening on' "$work/suite.log" && break
done
cat "$work/suite.log"
if grep -q '^Ran 41 tests' "$work/suite.log" && grep -qx 'OK' "$work/suite.log"; then
  ok=true
fi

# The service served every request and stops cleanly.
kill -0 "$pid" 2>/dev/null || { echo "w3c: the service died"; ok=false; }
kill -TERM "$pid" 2>/dev/null
wait "$pid"
status=$?
pid=
[ "$status" = 0 ] || { echo "w3c: the service exited with $status"; ok=false; }
if [ -s "$work/service.log" ]; then
  echo "w3c: the service said:"
  cat "$work/service.log"
fi
$ok && echo "w3c: W3C Trace Context suite passed (SPEC_LEVEL=2 STRICT_LEVEL=2)"
$ok
