#!/usr/bin/env python3
"""Runs tests/export/recorder_scenarios.c and checks the flight recorder's dumps with
Python's json module (strict: no NaN, valid UTF-8).

  recorder_check.py BINARY            nest (Chrome JSON, checked by trace_check.py's own
                                      checks: format, nesting, ids and parents), jsonl,
                                      the crash dumps (SIGSEGV and abort(), both formats),
                                      a crash while 3 threads go on recording, and the
                                      slow-event trigger
  recorder_check.py BINARY soak       4 threads record while a dump is taken every
                                      100 ms: every dump parses, no record is torn, the
                                      counts add up. 10 s times HARK_TEST_SCALE (or
                                      HARK_TEST_SCALE_FAST)

Environment: ASAN_OPTIONS and TSAN_OPTIONS are passed on to the crashing children
with the sanitizers' own SIGSEGV and SIGABRT handling off, so that they die of the
signal itself.
"""
import glob
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trace_check  # noqa: E402  (the trace file's checker: the same checks)


def load_jsonl(path):
    with open(path, "rb") as f:
        raw = f.read().decode("utf-8")
    assert raw.endswith("\n"), "a dump ends with a newline"
    lines = [json.loads(line, parse_float=Decimal, parse_constant=trace_check.reject_constant)
             for line in raw.split("\n")[:-1]]
    assert lines and set(lines[-1]) == {"recorder"}, lines[-1:]
    for line in lines[:-1]:
        assert "recorder" not in line, line
    return lines[:-1], lines[-1]["recorder"]


def as_chrome(line):
    """A JSON line as the Chrome event it stands for, for trace_check's nesting."""
    return {"name": line["name"], "ts": Decimal(line["start_ns"]) / 1000,
            "dur": Decimal(line["end_ns"] - line["start_ns"]) / 1000, "tid": line["tid"],
            "id": line["id"], "parent_id": line["parent_id"], "args": line["payload"]}


def check_summary(s, reason, events):
    keys = ["pid", "events", "recorded", "overwritten", "dropped", "dump_dropped", "threads",
            "wall_offset_ns", "reason"]
    assert list(s) == keys + (["signal"] if reason == "crash" else []), s
    # The wall anchor: the clocks' offset now, within a few milliseconds. The offset is
    # bracketed by two wall readings around one monotonic reading, so a preemption
    # between the readings (a loaded machine) widens the bracket instead of failing.
    off = s["wall_offset_ns"]
    assert isinstance(off, str) and off.lstrip("-").isdigit(), off
    before = time.time_ns()
    mono = time.monotonic_ns()
    after = time.time_ns()
    assert before - mono - 5_000_000 <= int(off) <= after - mono + 5_000_000, (s, before - mono, after - mono)
    assert s["reason"] == reason, s
    assert s["events"] == events, (s, events)
    assert s["events"] <= s["recorded"], s
    assert s["dump_dropped"] <= s["dropped"], s


def run(binary, *args):
    out = subprocess.run([binary, *args], check=True, stdout=subprocess.PIPE).stdout
    return json.loads(out)


def check_nest(binary, tmp):
    path = os.path.join(tmp, "nest.json")
    want = run(binary, "nest", path)
    doc = trace_check.load(path)
    trace_check.check_format(doc)
    events = doc["traceEvents"]
    summary = doc["otherData"]["recorder"]
    assert doc["otherData"]["producer"] == "hark", doc["otherData"]
    check_summary(summary, "dump", len(events))
    assert len(events) == want["events"] == want["recorded"], (len(events), want)
    assert summary["overwritten"] == 0 and summary["dropped"] == 0, summary
    trace_check.check_nest_events([ev for ev in events if ev["name"] != "cut.excerpt"], want)
    cut = [ev for ev in events if ev["name"] == "cut.excerpt"]
    assert len(cut) == 1 and cut[0]["args"]["first"] == 1, cut
    assert cut[0]["args"]["_truncated"] is True, cut
    assert len(cut[0]["args"].get("big", "")) < 599, cut
    # The excerpt's members take at most payload_bytes (256): what the object holds
    # between its braces, re-encoded compactly, is no longer.
    assert len(json.dumps(cut[0]["args"], separators=(",", ":")).encode()) - 2 <= 256, cut
    print("recorder_check: nest: %d events, %d threads, nesting exact (trace_check)"
          % (len(events), want["threads"]))


def check_jsonl(binary, tmp):
    path = os.path.join(tmp, "nest.jsonl")
    want = run(binary, "jsonl", path)
    lines, summary = load_jsonl(path)
    check_summary(summary, "dump", len(lines))
    assert len(lines) == want["events"], (len(lines), want)
    keys = ["name", "start_ns", "end_ns", "pid", "tid", "id", "parent_id", "transaction_id",
            "failed", "payload"]
    for line in lines:
        assert list(line) == keys, line
        assert line["end_ns"] >= line["start_ns"] > 0 and line["id"] > 0, line
        assert line["pid"] == summary["pid"], line
    trace_check.check_nesting([as_chrome(line) for line in lines])
    for line in lines:  # on the Unix clock through the summary's offset: just now
        assert 0 <= time.time_ns() - (line["start_ns"] + int(summary["wall_offset_ns"])) < 600e9
    failed = [line for line in lines if line["failed"]]
    assert len(failed) == 1 and failed[0]["name"].startswith("odd"), failed
    main_tid = failed[0]["tid"]
    for line in lines:
        if line["tid"] == main_tid:
            assert line["transaction_id"] == want["txn"], (line, want)
        else:
            assert len(line["transaction_id"]) == 20, line
    # Grouped by thread; each thread's records in the order it finished them.
    seen, last = [], None
    for line in lines:
        if line["tid"] != last:
            assert line["tid"] not in seen, "a thread's records are together"
            seen.append(line["tid"])
            last = line["tid"]
    print("recorder_check: jsonl: %d lines, ids, transaction ids and failures as recorded"
          % len(lines))


def no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def crash_env():
    """The sanitizers' own SIGSEGV and SIGABRT handling off: the child must die of
    the signal, after the recorder's handler, as it would without them."""
    env = dict(os.environ)
    for key, extra in (("ASAN_OPTIONS", "handle_segv=0:handle_abort=0:detect_leaks=0"),
                       ("TSAN_OPTIONS", "handle_segv=0:handle_abort=0")):
        env[key] = (env[key] + ":" if env.get(key) else "") + extra
    return env


def check_crash(binary, tmp, how, fmt):
    path = os.path.join(tmp, "crash-%s.%s" % (how, fmt))
    proc = subprocess.run([binary, "crash", how, path, fmt], stdout=subprocess.PIPE,
                          preexec_fn=no_core, env=crash_env())
    signo = signal.SIGSEGV if how == "segv" else signal.SIGABRT
    assert proc.returncode == -signo, "exit status %d, want killed by %s" % (proc.returncode, signo)
    want = json.loads(proc.stdout)
    if fmt == "chrome":
        doc = trace_check.load(path)
        trace_check.check_format(doc)
        summary = doc["otherData"]["recorder"]
        records = [(ev["name"], ev["tid"], ev["args"]) for ev in doc["traceEvents"]]
    else:
        lines, summary = load_jsonl(path)
        records = [(line["name"], line["tid"], line["payload"]) for line in lines]
    check_summary(summary, "crash", len(records))
    assert summary["signal"] == signo, summary
    # The event the crashing thread was in had not finished: it is not recorded.
    assert all(name == "crash.work" for name, _, _ in records), {n for n, _, _ in records}
    by_thread = {}
    for name, tid, args in records:
        assert args["x"] == args["i"] + 0.25, args  # a double, in a crash dump
        by_thread.setdefault(args["t"], []).append((tid, args["i"]))
    assert sorted(by_thread) == list(range(want["threads"])), sorted(by_thread)
    for t, recs in by_thread.items():
        assert len({tid for tid, _ in recs}) == 1, "one thread, one tid"
        seq = [i for _, i in recs]
        assert seq == sorted(seq) and len(set(seq)) == len(seq), "in the order recorded"
        # Exactly the last ones: the newest is the last recorded, and the tail runs
        # back without a gap.
        assert seq[-1] == want["events"] - 1, (t, seq[-5:])
        tail = 1
        while tail < len(seq) and seq[-tail - 1] == seq[-tail] - 1:
            tail += 1
        assert tail >= 100, (t, tail)
    assert summary["recorded"] == want["threads"] * want["events"], summary
    assert summary["events"] + summary["overwritten"] == summary["recorded"], summary
    print("recorder_check: crash %s (%s): killed by signal %d, %d events of %d threads, each "
          "ending with its last" % (how, fmt, signo, len(records), want["threads"]))


def check_running(binary, tmp):
    """One thread crashes while 3 others go on recording. The dump goes to a FIFO
    read only once the dump has begun (something is in the pipe) and the 3 threads
    have since made more events than the whole recorder could hold: whatever the
    threads do meanwhile, every thread's last events must be in the dump, without a
    gap, and any event the dump kept them from recording counted as such."""
    import fcntl
    import mmap
    import select
    import struct
    proc = subprocess.Popen([binary, "running", tmp], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, preexec_fn=no_core, env=crash_env())
    want = json.loads(proc.stdout.readline())
    threads, crasher = want["threads"], want["crasher"]
    fifo = os.path.join(tmp, "crash-%d.jsonl" % want["pid"])
    os.mkfifo(fifo)
    rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    fcntl.fcntl(rfd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 4096)
    proc.stdin.write(b"go\n")
    proc.stdin.flush()
    with open(os.path.join(tmp, "counts"), "r+b") as f:
        shared = mmap.mmap(f.fileno(), 8 * (2 * threads + 1))

    def counts(base):
        return struct.unpack_from("<%dq" % threads, shared, base * 8 * threads)

    # The dump has begun once it has written: from then on, nothing it holds may be
    # overwritten. Records take at least 64 bytes.
    poller = select.poll()
    poller.register(rfd, select.POLLIN)
    while not poller.poll(100):
        assert proc.poll() is None, "died before its dump began"
    start = counts(0)
    bound = want["bytes"] // 64
    while sum(c - s for c, s, k in zip(counts(0), start, range(threads)) if k != crasher) <= bound:
        assert proc.poll() is None, "died while its dump was held"
        time.sleep(0.01)
    fcntl.fcntl(rfd, fcntl.F_SETFL, 0)  # blocking: read the dump to its end
    raw = b""
    while True:
        chunk = os.read(rfd, 65536)
        if not chunk:
            break
        raw += chunk
    os.close(rfd)
    assert proc.wait() == -signal.SIGSEGV, proc.returncode
    at_crash = counts(1)
    shared.close()
    path = os.path.join(tmp, "running.jsonl")
    with open(path, "wb") as f:
        f.write(raw)
    lines, summary = load_jsonl(path)
    check_summary(summary, "crash", len(lines))
    assert summary["signal"] == signal.SIGSEGV, summary
    assert summary["threads"] == threads, summary
    # Every thread held memory all along: an event dropped was one the dump kept
    # from overwriting what it had not read, counted as such. (Whether any is
    # dropped depends on the chunks the dump has read by then, which the threads
    # may take back: test_export_recorder_fork.c makes it certain.)
    assert summary["dump_dropped"] == summary["dropped"], summary
    by_thread = {}
    for line in lines:
        assert line["name"] == "run.work", line
        by_thread.setdefault(line["payload"]["t"], []).append((line["tid"], line["payload"]["i"]))
    assert sorted(by_thread) == list(range(threads)), sorted(by_thread)
    for t, recs in by_thread.items():
        assert len({tid for tid, _ in recs}) == 1, "one thread, one tid"
        seq = [i for _, i in recs]
        assert all(a < b for a, b in zip(seq, seq[1:])), (t, "in the order recorded")
        tail = 1
        while tail < len(seq) and seq[-tail - 1] == seq[-tail] - 1:
            tail += 1
        if t == crasher:
            # Exactly its last: it recorded nothing after them.
            assert seq[-1] == want["events"] - 1, (t, seq[-5:])
            assert tail >= 100, (t, tail)
        else:
            # Its last events before the crash, and its newest chunk before them.
            assert seq[-1] >= at_crash[t] - 1, (t, seq[-1], at_crash[t])
            assert tail >= 64, (t, tail)
    print("recorder_check: running: a crash while 3 threads record: %d events of %d threads, "
          "each ending at or past its last before the crash; %d events dropped during the dump"
          % (len(lines), threads, summary["dump_dropped"]))


def check_slow(binary, tmp):
    tmpl = os.path.join(tmp, "slow-%n.jsonl")
    want = run(binary, "slow", tmpl)
    files = sorted(glob.glob(os.path.join(tmp, "slow-*.jsonl")))
    assert len(files) == want["dumps"] == want["triggered"], (files, want)
    assert want["rate_limited"] == 3, want
    for k, fired in enumerate(want["fired_at"]):
        lines, summary = load_jsonl(os.path.join(tmp, "slow-%d.jsonl" % (k + 1)))
        check_summary(summary, "trigger", len(lines))
        ends = [line["end_ns"] for line in lines if line["name"] == "request.slow"]
        assert any(abs(e - fired * 1e9) < 1000 for e in ends), (k, fired, ends)
    print("recorder_check: slow: %d dumps for 6 slow events in 3 windows, each holding its event"
          % len(files))


def scale():
    for key in ("HARK_TEST_SCALE", "HARK_TEST_SCALE_FAST"):
        if key in os.environ:
            return max(0.001, min(100.0, float(os.environ[key])))
    return 1.0


def check_soak_dump(path, floor, threads):
    lines, summary = load_jsonl(path)
    check_summary(summary, "dump", len(lines))
    last = {}
    for line in lines:
        p = line["payload"]
        t, i = p["t"], p["i"]
        assert p["k"] == ("%d.%d;" % (t, i)) * (1 + i % 5), line  # not torn
        assert line["name"] == "soak.event", line
        assert i > last.get(t, -1), (t, i, last.get(t))
        last[t] = i
    # Every event recorded before the dump began is in it unless it was overwritten
    # by the time it ended (a thread's event counted but not yet published: 1 each).
    assert summary["events"] + summary["overwritten"] >= floor - threads, (summary, floor)
    return summary, last


def check_soak(binary, tmp):
    seconds = 10.0 * scale()
    want = run(binary, "soak", tmp, "%.3f" % seconds)
    threads = want["threads"]
    n = 0
    with open(os.path.join(tmp, "index.txt")) as f:
        for row in f:
            k, floor = map(int, row.split())
            check_soak_dump(os.path.join(tmp, "dump-%d.jsonl" % k), floor, threads)
            n += 1
    assert n == want["dumps"] and n >= 1, (n, want)
    summary, last = check_soak_dump(os.path.join(tmp, "final.jsonl"), 0, threads)
    counts = want["counts"]
    # Every event was recorded or dropped; a thread that held memory all along drops
    # only while a dump reads what it would have taken.
    assert summary["recorded"] + summary["dropped"] == sum(counts), (summary, counts)
    assert summary["dump_dropped"] == summary["dropped"], summary
    assert summary["events"] + summary["overwritten"] == summary["recorded"], summary
    for t in range(threads):
        assert last[t] == counts[t] - 1, (t, last.get(t), counts[t])
    print("recorder_check: soak: %.1f s, %d dumps of %d events recorded by %d threads, all whole"
          % (seconds, n, summary["recorded"], threads))


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        if sys.argv[2:] == ["soak"]:
            check_soak(binary, tmp)
            return
        check_nest(binary, tmp)
        check_jsonl(binary, tmp)
        for how in ("segv", "abort"):
            for fmt in ("chrome", "jsonl"):
                check_crash(binary, tmp, how, fmt)
        check_running(binary, tmp)
        check_slow(binary, tmp)


if __name__ == "__main__":
    main()
