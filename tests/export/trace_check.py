#!/usr/bin/env python3
"""Runs tests/export/trace_scenarios.c and checks the Chrome trace files it writes with
Python's json module (strict: no NaN, valid UTF-8): the format, every event's
parent enclosing it in time on the same thread, exact per-thread nesting, the
payload args, and the exact count of events dropped by a full buffer."""
import json
import os
import time
import subprocess
import sys
import tempfile
from decimal import Decimal


def reject_constant(name):
    raise ValueError("not JSON: " + name)


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    return json.loads(raw.decode("utf-8"), parse_float=Decimal, parse_constant=reject_constant)


def run(binary, mode, path):
    out = subprocess.run([binary, mode, path], check=True, stdout=subprocess.PIPE).stdout
    return json.loads(out)


def check_format(doc):
    assert set(doc) >= {"traceEvents", "displayTimeUnit", "otherData"}, doc.keys()
    # The wall anchor puts ts on the Unix clock: this process's events ran within
    # the last few minutes (the anchor is the kernel's offset between the clocks).
    off = doc["otherData"]["wall_offset_ns"]
    assert isinstance(off, str) and off.lstrip("-").isdigit(), off
    # Bracketed by two wall readings around one monotonic reading, within a few
    # milliseconds: a preemption between the readings widens the bracket instead of
    # failing the check.
    before = time.time_ns()
    mono = time.monotonic_ns()
    after = time.time_ns()
    assert before - mono - 5_000_000 <= int(off) <= after - mono + 5_000_000, (off, before - mono)
    for ev in doc["traceEvents"]:
        unix_ns = int(Decimal(ev["ts"]) * 1000) + int(off)
        assert 0 <= time.time_ns() - unix_ns < 600 * 10**9, (ev, off)
    pid = os.getpid()
    for ev in doc["traceEvents"]:
        assert ev["ph"] == "X", ev
        for key in ("name", "cat", "ts", "dur", "pid", "tid", "id", "parent_id", "args"):
            assert key in ev, (key, ev)
        assert isinstance(ev["args"], dict), ev
        assert ev["dur"] >= 0 and ev["ts"] >= 0, ev
        assert ev["id"] > 0, ev
        dot = ev["name"].find(".")
        want_cat = ev["name"][dot + 1:] if 0 <= dot < len(ev["name"]) - 1 else "hark"
        assert ev["cat"] == want_cat, ev
        assert ev["pid"] != pid and ev["pid"] > 0, ev  # the writer's process, not ours


def check_nesting(events):
    by_id = {ev["id"]: ev for ev in events}
    assert len(by_id) == len(events), "event ids must be unique"
    for ev in events:
        end = ev["ts"] + ev["dur"]
        if ev["parent_id"]:
            parent = by_id[ev["parent_id"]]
            assert parent["tid"] == ev["tid"], (parent, ev)
            assert parent["ts"] <= ev["ts"] and end <= parent["ts"] + parent["dur"], (parent, ev)
            assert parent["id"] < ev["id"], (parent, ev)
    # Exact per thread: the parent is the most recently started event of the
    # thread that encloses it, and no two events of a thread partly overlap.
    threads = {}
    for ev in events:
        threads.setdefault(ev["tid"], []).append(ev)
    for tid, evs in threads.items():
        evs.sort(key=lambda e: e["id"])
        for i, ev in enumerate(evs):
            s, e = ev["ts"], ev["ts"] + ev["dur"]
            enclosing = [p for p in evs[:i] if p["ts"] <= s and e <= p["ts"] + p["dur"]]
            want = enclosing[-1]["id"] if enclosing else 0
            assert ev["parent_id"] == want, (tid, ev, want)
            for other in evs[:i]:
                os_, oe = other["ts"], other["ts"] + other["dur"]
                disjoint = oe <= s or e <= os_
                nested = os_ <= s and e <= oe
                assert disjoint or nested, ("partial overlap", other, ev)


def check_nest_events(events, want):
    """The events of the nest workload (tests/support/nest_workload.h), as any hark
    output shows them in Chrome's terms: threads, exact nesting, depths, the awkward
    event's name, category and payload."""
    assert len({ev["tid"] for ev in events}) == want["threads"]
    check_nesting(events)
    by_id = {ev["id"]: ev for ev in events}
    for ev in events:
        if "depth" not in ev["args"]:
            continue
        d = ev["args"]["depth"]
        if d == 0:
            assert ev["parent_id"] == 0, ev
        else:
            assert by_id[ev["parent_id"]]["args"]["depth"] == d - 1, ev
    odd = [ev for ev in events if ev["name"].startswith("odd")]
    assert len(odd) == 1, odd
    odd = odd[0]
    assert odd["name"] == 'odd "name"\n.with\\escapes', odd["name"]
    assert odd["cat"] == "with\\escapes", odd["cat"]
    args = odd["args"]
    assert args["quote"] == 'say "hi"\\ \t\x01 caf\u00e9', args
    assert args["bad_utf8"] == "a\ufffd\ufffd z", args
    assert args["null"] is None and args["pi"] == Decimal("3.25"), args
    assert args["big"] == 2**64 - 1 and args["nested"] == {"k": "v"}, args
    assert args["ptr"] == "0x0" and args["exception"] == {"type": "IOError", "message": 'disk "gone"'}, args


def check_nest(binary, tmp):
    path = os.path.join(tmp, "nest.json")
    want = run(binary, "nest", path)
    doc = load(path)
    check_format(doc)
    events = doc["traceEvents"]
    assert want["dropped"] == 0 and doc["otherData"]["dropped_events"] == 0, doc["otherData"]
    assert len(events) == want["events"], (len(events), want)
    check_nest_events(events, want)
    print("trace_check: nest: %d events, %d threads, nesting exact" % (len(events), want["threads"]))


def check_drop(binary, tmp):
    path = os.path.join(tmp, "drop.json")
    want = run(binary, "drop", path)
    doc = load(path)
    check_format(doc)
    events = doc["traceEvents"]
    assert len(events) == want["events"], (len(events), want)
    assert want["reported_dropped"] == want["dropped"], want
    assert doc["otherData"]["dropped_events"] == want["dropped"], doc["otherData"]
    assert [ev["args"]["i"] for ev in events] == [i % 10 for i in range(len(events))]
    print("trace_check: drop: %d kept, %d dropped, as computed" % (len(events), want["dropped"]))


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        check_nest(binary, tmp)
        check_drop(binary, tmp)


if __name__ == "__main__":
    main()
