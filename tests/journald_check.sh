#!/usr/bin/env bash
# The journald sink against the real systemd-journald: starts one when none runs
# (as root; it is stopped again at the end), sends a record with
# tests/journald_send, reads it back with journalctl -o json and compares fields.
#   tests/journald_check.sh BUILD_DIR
set -u
build=${1:-build}
send="$build/tests/journald_send"
[ -x "$send" ] || { echo "journald: SKIP ($send not built: no libsystemd-dev)"; exit 0; }
command -v journalctl >/dev/null || { echo "journald: SKIP (no journalctl)"; exit 0; }
started=""
listening() {
  python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.connect(sys.argv[1])' \
    /run/systemd/journal/socket 2>/dev/null
}
had_dir=1
[ -d /run/systemd/journal ] || had_dir=0
if ! listening; then
  jd=/lib/systemd/systemd-journald
  [ -x "$jd" ] && [ "$(id -u)" = 0 ] || { echo "journald: SKIP (no journald to start)"; exit 0; }
  "$jd" >/dev/null 2>&1 &
  started=$!
  for _ in $(seq 50); do listening && break; sleep 0.1; done
fi
cleanup() {
  [ -n "$started" ] || return 0
  kill "$started" 2>/dev/null && wait "$started" 2>/dev/null
  # Leave /run as it was: no sockets pointing at a journald that is gone.
  [ "$had_dir" = 0 ] && rm -rf /run/systemd/journal
  return 0
}
trap cleanup EXIT
run="run$$$RANDOM"
"$send" "$run" || { echo "journald: FAIL (send)"; exit 1; }
for _ in $(seq 50); do
  out=$(journalctl --no-pager -o json HARK_RUN="$run" 2>/dev/null)
  [ -n "$out" ] && break
  sleep 0.1
done
printf '%s\n' "$out" | python3 -c '
import json, sys
lines = [l for l in sys.stdin.read().splitlines() if l.strip()]
if len(lines) != 1:
    sys.exit("journald: FAIL (expected 1 entry, got %d)" % len(lines))
e = json.loads(lines[0])
want = {"MESSAGE": "slow query 42", "PRIORITY": "4", "SYSLOG_IDENTIFIER": "hark-journald-check",
        "HARK_TAGS": "req-42,api", "HARK_EVENT": "sql.db", "HARK_DURATION_MS": "1.500",
        "HARK_TRANSACTION_ID": "abc123", "HARK_EVENT_ID": "7", "HARK_ROWS": "3",
        "HARK_SQL": "SELECT \"x\"\nFROM t"}
for k, v in want.items():
    got = e.get(k)
    if isinstance(got, list):  # journalctl prints non-UTF-8 or binary values as byte arrays
        got = bytes(got).decode("utf-8", "replace")
    if got != v:
        sys.exit("journald: FAIL (%s: got %r, want %r)" % (k, got, v))
print("journald: PASS (%d fields compared)" % len(want))
'
