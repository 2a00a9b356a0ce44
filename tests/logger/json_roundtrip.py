#!/usr/bin/env python3
"""Parses hark's JSON lines with Python's json module and compares every field with
what the writer was given (tests/logger/json_roundtrip.c), decoding the raw inputs with
Python's own UTF-8 "replace" handling and cutting messages as documented."""
import json
import subprocess
import sys

MESSAGE_MAX = 65536
VALUE_MAX = 4096


def cut(raw, limit):
    if len(raw) <= limit:
        return raw, False
    at = limit
    for _ in range(3):
        if at > 0 and (raw[at] & 0xC0) == 0x80:
            at -= 1
    return raw[:at], True


def text(raw):
    return raw.decode("utf-8", "replace")


def main():
    out = subprocess.run([sys.argv[1]], check=True, stdout=subprocess.PIPE).stdout
    lines = out.split(b"\n")
    assert lines[-1] == b"", "output must end with a newline"
    records = 0
    for line in lines[:-1]:
        hmsg, htags, hfield, js = line.split(b"\t", 3)
        obj = json.loads(js.decode("utf-8"))  # strict: the line must be valid UTF-8
        raw = bytes.fromhex(hmsg.decode())
        if raw.endswith(b"\n"):
            raw = raw[:-1]
        raw, truncated = cut(raw, MESSAGE_MAX)
        want = {
            "time": "2001-09-09T01:46:40.250000Z",
            "level": "WARN",
            "thread": 4711,
            "tags": [text(cut(bytes.fromhex(t.decode()), VALUE_MAX)[0]) for t in htags.split(b",")],
            "event": "sql.db",
            "transaction_id": "0123abcd",
            "duration_ms": 1.25,
            "message": text(raw),
            "fields": {
                "rows": -3,
                "big": 2**64 - 1,
                "ratio": 0.1,
                "ok": True,
                "s": text(cut(bytes.fromhex(hfield.decode()), VALUE_MAX)[0]),
            },
        }
        if truncated:  # documented place: right after the message
            fields = want.pop("fields")
            want["_truncated"] = True
            want["fields"] = fields
        if list(obj.keys()) != list(want.keys()):
            sys.exit("keys differ: %r != %r" % (list(obj.keys()), list(want.keys())))
        for key in want:
            if obj[key] != want[key]:
                got, exp = repr(obj[key]), repr(want[key])
                sys.exit("field %s differs:\n got %s\nwant %s" % (key, got[:300], exp[:300]))
        records += 1
    if records != 13:
        sys.exit("expected 13 records, parsed %d" % records)
    print("json_roundtrip: %d records parsed back field by field" % records)


main()
