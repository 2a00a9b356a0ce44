#!/usr/bin/env bash
# The journald sink against the real systemd-journald: starts one when none runs
# (as root; it is stopped again at the end), sends records with every field type
# with tests/logger/journald_send, reads them back with journalctl -o json and compares
# every field.
#   tests/logger/journald_check.sh BUILD_DIR
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
# --all: journalctl prints values of 4096 bytes or more, or unprintable ones, as
# null without it.
for _ in $(seq 50); do
  out=$(journalctl --no-pager --all -o json HARK_RUN="$run" 2>/dev/null)
  [ "$(printf '%s\n' "$out" | grep -c .)" -ge 6 ] && break
  sleep 0.1
done
printf '%s\n' "$out" | python3 -c '
import json, sys
run = sys.argv[1]
key70 = "K123456789_123456789_123456789_123456789_123456789_123456789_123456789"
# Every field an entry must have, exactly: the journal (its own fields start with
# "_") may add nothing else of ours, and each field is sent once.
types = {
    "MESSAGE": "slow query 42", "PRIORITY": "4", "SYSLOG_IDENTIFIER": "hark-journald-check",
    "TID": None, "HARK_TAGS": "req-42,api", "HARK_EVENT": "sql.db",
    "HARK_DURATION_MS": "1.500", "HARK_TRANSACTION_ID": "abc123", "HARK_EVENT_ID": "7",
    "HARK_PARENT_ID": "6", "HARK_RUN": run,
    "HARK_ROWS": "-3", "HARK_BIG": "18446744073709551615", "HARK_RATIO": "0.1",
    "HARK_NAN": "NaN", "HARK_CACHED": "false",
    "HARK_SQL": "SELECT \"x\"\nFROM t\n",
    "HARK_BINARY": b"\x01\xff\xfe bin\ttab\x7f",
    "HARK_UTF8": "h\u00e9llo",
    "HARK_NONE": "null",
    "HARK_CONN": "0x1234abcd", "HARK_NULLPTR": "0x0",
    "HARK_DB_NAME": "main", "HARK_DB_PORT": "5432", "HARK_DB_INNER_DEEP": "true",
    "HARK_MISSING": "null",
    "HARK_EXCEPTION": "SQLiteError", "HARK_EXCEPTION_MESSAGE": "no such table: nope\nat line 2",
    "HARK_HALF_ERROR": "Timeout", "HARK_HALF_ERROR_MESSAGE": "null",
    "HARK_USER_AGENT_V2": "curl", "HARK_9LIVES": "9", "HARK__PRIVATE": "1",
    "HARK_CAF__": "2", ("HARK_" + key70)[:64]: "70",
}
want = {
    "types": dict(types, HARK_CASE="types"),
    "async": dict(types, HARK_CASE="async"),
    "budget": dict({"MESSAGE": "budget", "PRIORITY": "6",
                    "SYSLOG_IDENTIFIER": "hark-journald-check", "TID": None,
                    "HARK_EVENT": "budget.test", "HARK_DURATION_MS": "0.250",
                    "HARK_RUN": run, "HARK_CASE": "budget"},
                   # run and case are two of the HARK_LOG_FIELDS_MAX (64) fields.
                   **{"HARK_F%d" % i: str(i) for i in range(62)}),
    "handmade": {"MESSAGE": "hand\nmade", "PRIORITY": "3",
                 "SYSLOG_IDENTIFIER": "hark-journald-check", "HARK_TAGS": "a,,b",
                 "HARK_RUN": run, "HARK_CASE": "handmade"},
    # Cut as a structured line cuts: HARK_LOG_MESSAGE_MAX, HARK_LOG_VALUE_MAX.
    "large": {"MESSAGE": "m" * 65536, "PRIORITY": "6",
              "SYSLOG_IDENTIFIER": "hark-journald-check", "TID": None,
              "HARK_EVENT": "large.test", "HARK_DURATION_MS": "2.000",
              "HARK_RUN": run, "HARK_CASE": "large", "HARK_A1": "a" * 4096,
              "HARK_A2": "a" * 4096, "HARK_B": "Big", "HARK_B_MESSAGE": "b" * 4096,
              "HARK_TRUNCATED": "true"},
    # The hostile payload: its journald column of the table in
    # tests/export/test_export_payload_rendering.c, through the real journal.
    "hostile": {"MESSAGE": "hostile", "PRIORITY": "6",
                "SYSLOG_IDENTIFIER": "hark-journald-check", "TID": None,
                "HARK_EVENT": "hostile.test", "HARK_DURATION_MS": "3.000", "HARK_EVENT_ID": "9",
                "HARK_RUN": run, "HARK_CASE": "hostile",
                "HARK_INT": "-9223372036854775808", "HARK_UINT": "18446744073709551615",
                "HARK_DOUBLE": "0.1", "HARK_NAN": "NaN", "HARK_NEG_INF": "-Inf",
                "HARK_BOOL": "true", "HARK_TEXT": "caf\u00e9 \"q\"\n",
                "HARK_CTRL": b"\x01\t\x08", "HARK_BAD_UTF8": b"a\xffb\xe2\x82",
                "HARK_NULL_TEXT": "null", "HARK_PTR": "0xabc", "HARK_NULL_PTR": "0x0",
                "HARK_NULL_NESTED": "null", "HARK_NESTED_K": "1",
                "HARK_NESTED_CAUSE": "IOError", "HARK_NESTED_CAUSE_MESSAGE": "null",
                "HARK_NESTED_NEXT_K": "2", "HARK_NESTED_NEXT_NEXT_K": "3",
                "HARK_NESTED_NEXT_NEXT_NEXT_K": "4", "HARK_NESTED_NEXT_NEXT_NEXT_NEXT": "...",
                "HARK_EXCEPTION": "null", "HARK_EXCEPTION_MESSAGE": "boom \"x\"",
                "HARK_LONG": "x" * 4095, "HARK_TRUNCATED": "true"},
}

def value(k, v):
    # journalctl prints a value that is not printable UTF-8 as an array of bytes,
    # and a field sent more than once as an array of values.
    if isinstance(v, list) and all(isinstance(b, int) for b in v):
        return bytes(v)
    if isinstance(v, list):
        sys.exit("journald: FAIL (%s sent %d times: %r)" % (k, len(v), v))
    return v.encode("utf-8")

lines = [l for l in sys.stdin.read().splitlines() if l.strip()]
got = {}
for l in lines:
    e = json.loads(l)
    case = e.get("HARK_CASE")
    if case not in want or case in got:
        sys.exit("journald: FAIL (unexpected entry %r)" % case)
    got[case] = {k: value(k, v) for k, v in e.items() if not k.startswith("_")}
compared = 0
for case, fields in want.items():
    if case not in got:
        sys.exit("journald: FAIL (no %s entry; got %s)" % (case, sorted(got)))
    entry = got[case]
    extra = sorted(set(entry) - set(fields))
    missing = sorted(set(fields) - set(entry))
    if extra or missing:
        sys.exit("journald: FAIL (%s: fields %s not expected, %s missing)" % (case, extra, missing))
    for k, v in fields.items():
        if v is None:  # present, any value (the thread id)
            if not entry[k].isdigit():
                sys.exit("journald: FAIL (%s %s: %r)" % (case, k, entry[k]))
            continue
        v = v if isinstance(v, bytes) else v.encode("utf-8")
        if entry[k] != v:
            sys.exit("journald: FAIL (%s %s: got %r, want %r)" % (case, k, entry[k], v))
        compared += 1
print("journald: PASS (%d entries, %d fields compared)" % (len(want), compared))
' "$run"
