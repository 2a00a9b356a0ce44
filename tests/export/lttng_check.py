#!/usr/bin/env python3
"""The LTTng-UST bridge against the real tools: starts lttng-sessiond (userspace
only, --no-kernel) unless one already runs, creates a session with its own output
directory, enables hark:*, runs tests/export/lttng_scenario.c, reads the trace back with
babeltrace2 and compares every event and its fields, in order, with what the
program's own subscriber saw. Then checks that hark_listening() follows the
session: false within a second of `lttng stop` and of `lttng disable-event`.
Stops the session daemon it started. Exit 77 (skipped) when the tools are missing.
"""
import fcntl
import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
FOLLOW_TIMEOUT = 1.0  # seconds: hark_listening() must follow the session this fast


def sessiond_pidfiles(home):
    files = [os.path.join(home, ".lttng", "lttng-sessiond.pid")]
    if os.geteuid() == 0:
        files.insert(0, "/var/run/lttng/lttng-sessiond.pid")
    return files


def running_sessiond(home):
    for f in sessiond_pidfiles(home):
        try:
            pid = int(open(f).read().strip())
            os.kill(pid, 0)
            with open("/proc/%d/comm" % pid) as c:
                if "lttng-sessiond" in c.read():
                    return pid
        except (OSError, ValueError):
            continue
    return None


def lttng(env, *args):
    r = subprocess.run(["lttng"] + list(args), env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise RuntimeError("lttng %s failed:\n%s" % (" ".join(args), r.stdout))
    return r.stdout


def bt_unescape(s):
    """babeltrace2's text output escapes strings C-style."""
    table = {"n": "\n", "t": "\t", "r": "\r", "v": "\v", "f": "\f", "b": "\b", "a": "\a",
             "0": "\0", "\\": "\\", '"': '"', "'": "'", "?": "?"}
    return re.sub(r"\\(.)", lambda m: table.get(m.group(1), m.group(0)), s)


def parse_babeltrace(text):
    events = []
    pat = re.compile(r'hark:event: .*\{ name = "(?P<name>.*)", id = (?P<id>\d+), '
                     r'parent_id = (?P<parent>\d+), start_ns = (?P<start>\d+), '
                     r'duration_ns = (?P<dur>\d+), payload = "(?P<payload>.*)" \}$')
    for line in text.splitlines():
        if "hark:event:" not in line:
            continue
        m = pat.search(line)
        assert m, "unexpected babeltrace2 line: " + line
        events.append({"name": m["name"], "id": int(m["id"]), "parent_id": int(m["parent"]),
                       "start_ns": int(m["start"]), "duration_ns": int(m["dur"]),
                       "payload": json.loads(bt_unescape(m["payload"]))})
    return events


def check_trace(scenario, env, tmp, session):
    out = subprocess.run([scenario, "run"], env=env, check=True, stdout=subprocess.PIPE,
                         text=True, timeout=60).stdout
    want = [json.loads(line) for line in out.splitlines()]
    assert len(want) == 21, want
    lttng(env, "stop", session)
    text = subprocess.run(["babeltrace2", os.path.join(tmp, "trace")], check=True,
                          stdout=subprocess.PIPE, text=True).stdout
    if os.environ.get("LTTNG_CHECK_DUMP"):
        print(text)
    got = parse_babeltrace(text)
    assert len(got) == len(want), (len(got), len(want), text[-2000:])
    by_id = {}
    for g, w in zip(got, want):
        assert (g["name"], g["id"], g["parent_id"]) == (w["name"], w["id"], w["parent_id"]), (g, w)
        # The payload field as the bridge built it, read back through LTTng: the
        # hostile payload's too (escapes, U+FFFD, nesting, the cut and its marker).
        assert g["payload"] == w["payload"], (g, w)
        if w["name"] == "hostile.payload":
            assert g["payload"]["_truncated"] is True, g
            assert g["payload"]["nested"]["next"]["next"]["next"]["next"] == "...", g
            continue
        assert g["payload"].get("i") == w["i"], (g, w)
        if w["sql"]:
            assert g["payload"]["sql"] == w["sql"], (g, w)
        else:
            assert "sql" not in g["payload"], g
        by_id[g["id"]] = g
    for g in got:
        if g["parent_id"]:
            p = by_id[g["parent_id"]]
            assert p["start_ns"] <= g["start_ns"], (p, g)
            assert g["start_ns"] + g["duration_ns"] <= p["start_ns"] + p["duration_ns"], (p, g)
    print("lttng_check: %d events read back by babeltrace2, fields and order match" % len(got))


class Watcher:
    def __init__(self, scenario, env):
        self.p = subprocess.Popen([scenario, "watch"], env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.p.stdout, selectors.EVENT_READ)

    def expect(self, line, timeout):
        t0 = time.monotonic()
        while True:
            left = timeout - (time.monotonic() - t0)
            if left <= 0 or not self.sel.select(left):
                raise AssertionError("no %r within %.1f s" % (line, timeout))
            got = self.p.stdout.readline().strip()
            if got == line:
                return time.monotonic() - t0
            if not got:
                raise AssertionError("the program ended before %r" % line)

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=10)


def check_follow(scenario, env, session):
    lttng(env, "start", session)
    w = Watcher(scenario, env)
    try:
        w.expect("listening 1", 10.0)  # start-up includes registering with the daemon
        lttng(env, "stop", session)
        t = w.expect("listening 0", FOLLOW_TIMEOUT)
        print("lttng_check: listening false %.0f ms after lttng stop" % (t * 1e3))
        lttng(env, "start", session)
        w.expect("listening 1", FOLLOW_TIMEOUT)
        lttng(env, "disable-event", "-u", "hark:*", "-s", session)
        t = w.expect("listening 0", FOLLOW_TIMEOUT)
        print("lttng_check: listening false %.0f ms after lttng disable-event" % (t * 1e3))
    finally:
        w.close()


def main():
    scenario = os.path.abspath(sys.argv[1])
    for tool in ("lttng-sessiond", "lttng", "babeltrace2"):
        if not shutil.which(tool):
            print("lttng_check: %s not installed: skipped" % tool)
            return SKIP
    # One session daemon per machine (as root): runs of this test take turns.
    lock = open(os.path.join(tempfile.gettempdir(), "hark-lttng-check.lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    tmp = tempfile.mkdtemp(prefix="hark-lttng-")
    env = dict(os.environ, LTTNG_HOME=os.path.join(tmp, "home"))
    os.makedirs(env["LTTNG_HOME"])
    ours = None
    session = "hark-check-%d" % os.getpid()
    try:
        if running_sessiond(env["LTTNG_HOME"]) is None:
            subprocess.run(["lttng-sessiond", "--daemonize", "--no-kernel"], env=env, check=True)
            ours = running_sessiond(env["LTTNG_HOME"])
            assert ours, "lttng-sessiond started but left no pid file"
        lttng(env, "create", session, "--output=" + os.path.join(tmp, "trace"))
        lttng(env, "enable-event", "-u", "hark:*", "-s", session)
        lttng(env, "start", session)
        check_trace(scenario, env, tmp, session)
        check_follow(scenario, env, session)
    finally:
        subprocess.run(["lttng", "destroy", session], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        if ours:
            os.kill(ours, signal.SIGTERM)
            for _ in range(100):
                if running_sessiond(env["LTTNG_HOME"]) != ours:
                    break
                time.sleep(0.05)
            else:
                os.kill(ours, signal.SIGKILL)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
