#!/bin/sh
# CTest: runs the demo in memory with a few requests and checks what it printed;
# then checks that bad options and an unwritable database exit with status 2.
demo=$1
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; echo "--- demo output:"; cat "$out"; exit 1; }

"$demo" --memory --requests 5 --no-color >"$out" 2>&1 || fail "exit status $? (want 0)"

# The SQL lines ("  User Load (0.02ms)  SELECT ...") of each part of the output.
sql_lines() { awk -v from="$1" -v to="$2" 'index($0, from) { on = 1 } index($0, to) { on = 0 }
              on && /^  [A-Za-z ]+ \([0-9.]+ms\)  [A-Z]/' "$out"; }
phase1=$(sql_lines "== Phase 1" "== Phase 2" | wc -l)
phase2=$(sql_lines "== Phase 2" "== What instrumenting" | wc -l)
[ "$phase1" -ge 20 ] || fail "phase 1 printed $phase1 SQL lines, want at least 20"
[ "$phase2" -eq 0 ] || fail "phase 2 printed $phase2 SQL lines, want none"
sql_lines "== Phase 1" "== Phase 2" | grep -q "SELECT .*FROM users WHERE id = ?" ||
    fail "no indexed SELECT logged in phase 1"
sql_lines "== Phase 1" "== Phase 2" | grep -q "SQLiteError: UNIQUE constraint failed" ||
    fail "the failing INSERT did not log its error"
grep -q "^Completed show_user #3" "$out" || fail "no request line"
[ "$(grep -c '^Failed signup' "$out")" -eq 2 ] || fail "want the failed signup in both phases"
grep -q "no subscribers at all .* ns$" "$out" || fail "no cost line for 'no subscribers'"
grep -q "log subscriber silenced .* ns$" "$out" || fail "no cost line for 'silenced'"
grep -Eq "^  event +count +total ms +mean ms +p50 ms +p95 ms +p99 ms$" "$out" ||
    fail "no metrics table header"
grep -Eq "^  sql\.sqlite +[0-9]+ " "$out" || fail "no sql.sqlite row in the metrics table"
grep -Eq "^  request\.demo +[0-9]+ " "$out" || fail "no request.demo row in the metrics table"
grep -q "(database :memory:, 5 requests per phase)" "$out" || fail "no banner for 5 requests"
"$demo" --memory -n 1 --no-color 2>&1 | grep -q "(database :memory:, 1 request per phase)" ||
    fail "-n 1: the banner does not say \"1 request per phase\""

# --log-format json --async: every SQL line of phase 1 is a JSON object carrying its
# event, parsed back by Python's json module when it is installed.
"$demo" --memory --requests 3 --no-color --log-format json --async >"$out" 2>&1 ||
    fail "json/async: exit status $? (want 0)"
json_sql=$(grep -c '^{"time":"[^"]*","level":"DEBUG","thread":[0-9]*,"event":"sql.sqlite"' "$out")
[ "$json_sql" -ge 10 ] || fail "json/async: $json_sql JSON SQL lines, want at least 10"
if command -v python3 >/dev/null 2>&1; then
    grep '^{' "$out" | python3 -c 'import json, sys
for line in sys.stdin:
    json.loads(line)' || fail "json/async: a line is not valid JSON"
fi
# In a structured format standard output carries the log lines alone (the narrative
# goes to stderr), so that it pipes to jq.
"$demo" --memory --requests 2 --no-color --log-format json 2>/dev/null >"$out" ||
    fail "json: exit status $? (want 0)"
[ -s "$out" ] || fail "json: nothing on stdout"
grep -vq '^{' "$out" && fail "json: stdout has lines that are not JSON objects"
"$demo" --memory --requests 2 --no-color --log-format logfmt >"$out" 2>&1 ||
    fail "logfmt: exit status $? (want 0)"
grep -q '^time=[^ ]* level=debug thread=[0-9]* event=sql.sqlite ' "$out" || fail "no logfmt SQL line"

# --record: the flight recorder's dump at the end, and the one the failing signup
# request made it write, both Chrome traces holding the phases' events; the crash
# file it held ready is gone after a normal run.
rec=$(mktemp -d) || exit 1
"$demo" --memory --requests 3 --no-color --record="$rec/flight.json" >"$out" 2>&1 ||
    fail "record: exit status $? (want 0)"
grep -q "^The last ones are in $rec/flight.json" "$out" || fail "record: no line naming the dump"
[ -s "$rec/flight.json" ] && [ -s "$rec/flight-failed-1.json" ] ||
    fail "record: missing dumps: $(ls "$rec")"
[ ! -e "$rec/flight-crash.json" ] || fail "record: the crash file was left behind"
if command -v python3 >/dev/null 2>&1; then
    python3 - "$rec/flight.json" "$rec/flight-failed-1.json" <<'PY' || fail "record: a dump is wrong"
import json, sys
for path in sys.argv[1:]:
    doc = json.load(open(path))
    names = {ev["name"] for ev in doc["traceEvents"]}
    assert {"request.demo", "sql.sqlite"} <= names, (path, names)
    assert doc["otherData"]["recorder"]["events"] == len(doc["traceEvents"]), path
failed = json.load(open(sys.argv[2]))
assert failed["otherData"]["recorder"]["reason"] == "trigger", failed["otherData"]
assert any("exception" in ev["args"] for ev in failed["traceEvents"]), "no failed request"
PY
fi
rm -rf "$rec"

# Bad input: exit status 2, a message on stderr, nothing on stdout, no file created.
expect2() { # description, arguments...
    what=$1; shift
    "$demo" "$@" >"$out" 2>"$out.err"; status=$?
    [ "$status" -eq 2 ] || { cat "$out.err" >>"$out"; rm -f "$out.err"; fail "$what: status $status, want 2"; }
    [ -s "$out.err" ] || { rm -f "$out.err"; fail "$what: no message on stderr"; }
    [ -s "$out" ] && { rm -f "$out.err"; fail "$what: printed to stdout"; }
    rm -f "$out.err"
}
expect2 "unknown flag" --no-such-flag
expect2 "--otlp without a URL scheme" --memory --otlp 127.0.0.1:4318
# A malformed OTEL_* variable with --otlp: refused with the exporter's message.
(OTEL_EXPORTER_OTLP_PROTOCOL=grpc && export OTEL_EXPORTER_OTLP_PROTOCOL &&
    expect2 "--otlp with a malformed variable" --memory --otlp http://127.0.0.1:4318) || exit 1
expect2 "bad request count" --requests 0
expect2 "non-numeric request count" -n many
expect2 "unknown level" --log-level loud
expect2 "missing value" --database
expect2 "stray argument" extra
expect2 "--record= without a name" --memory --record=
# Where the recorder cannot write: refused before the banner (expect2: nothing on stdout).
if "$demo" --help | grep -q -- "--record"; then
    expect2 "--record into a missing directory" --memory --record=/nonexistent/x.json
fi
# An endpoint given with --otlp is named as such, not as OTEL_EXPORTER_OTLP_ENDPOINT.
if "$demo" --help | grep -q -- "--otlp URL"; then
    "$demo" --memory --otlp http://127.0.0.1:99999 >"$out" 2>&1
    grep -q '^hark-demo: --otlp: "http://127.0.0.1:99999" is not a valid URL: port 99999 is above 65535$' "$out" ||
        fail "--otlp with a bad port: $(cat "$out")"
fi
# --metrics-web-config: only with --metrics; a misspelt key is a bad option, named
# as an unknown key with the one meant.
expect2 "--metrics-web-config without --metrics" --memory --metrics-web-config web.yml
if "$demo" --help | grep -q -- "--metrics-web-config" && "$demo" --help | grep -q -- "--metrics ADDR"; then
    dir=$(mktemp -d) || exit 1
    printf 'tls_server_config:\n  cert_file: server.pem\n  keyfile: server.key\n' >"$dir/web.yml"
    expect2 "a misspelt web configuration key" --memory --metrics 127.0.0.1:0 --metrics-web-config "$dir/web.yml"
    said=$("$demo" --memory --metrics 127.0.0.1:0 --metrics-web-config "$dir/web.yml" 2>&1)
    case $said in
    *"no YAML reader"*) ;; # a build without libyaml: HARK_ENOTSUP, also status 2
    *"tls_server_config.keyfile is an unknown key; did you mean tls_server_config.key_file?"*) ;;
    *) rm -rf "$dir"; fail "the misspelt key is not reported as unknown with its suggestion: $said" ;;
    esac
    rm -rf "$dir"
fi
dir=$(mktemp -d) || exit 1
expect2 "missing directory" --database "$dir/no/such/dir/demo.db"
[ -z "$(ls -A "$dir")" ] || fail "the failed open left files behind: $(ls -A "$dir")"
rmdir "$dir"
"$demo" --help | grep -q "^usage:" || fail "--help printed no usage"
expect2 "metrics address without a port" --metrics nonsense
expect2 "metrics port out of range" --metrics 127.0.0.1:65536
expect2 "metrics port not a number" --metrics 127.0.0.1:http
expect2 "metrics address without a host" --metrics :9464
expect2 "metrics unknown host" --metrics no-such-host.invalid:9464
expect2 "unknown log format" --log-format xml
"$demo" --requests 12x 2>&1 | grep -q 'not "12x"$' || fail "a bad value is not quoted \"...\""

# Runs the demo with the arguments given, its input held open so that it serves its
# metrics until we close it; once it says so, GETs /metrics into $body (with the
# header line $scrape_header, if set), then closes its input and waits for it to end.
serve_and_scrape() {
    fifo=$(mktemp -d) || exit 1
    mkfifo "$fifo/in"
    "$demo" "$@" <"$fifo/in" >"$out" 2>&1 &
    pid=$!
    exec 4>"$fifo/in"
    tries=0
    until grep -q "^Serving metrics until" "$out"; do
        tries=$((tries + 1))
        [ "$tries" -lt 600 ] && kill -0 "$pid" 2>/dev/null || { exec 4>&-; rm -rf "$fifo"; fail "$*: no 'Serving metrics' line"; }
        sleep 0.1
    done
    port=$(sed -n 's|.*curl -s.* http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$out" | tail -1)
    body=$(bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" &&
                    { printf "GET /metrics HTTP/1.0\r\n"; [ -z "$2" ] || printf "%s\r\n" "$2"; printf "\r\n"; } >&3 &&
                    cat <&3' _ "$port" "${scrape_header:-}")
    exec 4>&-
    wait "$pid" || { status=$?; rm -rf "$fifo"; fail "$*: exit status $status"; }
    rm -rf "$fifo"
}

# --metrics: served while the demo runs and after it, until end of input.
if "$demo" --help | grep -q -- "--metrics ADDR" && command -v bash >/dev/null 2>&1 &&
   "$demo" --memory -n 1 --no-color --metrics 127.0.0.1:0 </dev/null 2>&1 | grep -q "curl -s http://127.0.0.1:"; then
    serve_and_scrape --memory --requests 3 --no-color --metrics 127.0.0.1:0
    echo "$body" | grep -q "text/plain; version=0.0.4" || fail "no exposition content type: $body"
    # The served counts are the counts of the demo's own metrics table.
    for event in sql.sqlite request.demo; do
        table=$(awk -v e="$event" '$1 == e { print $2 }' "$out")
        served=$(echo "$body" | sed -n "s/^hark_event_duration_seconds_count{event=\"$event\"} //p" | tr -d '\r')
        [ -n "$table" ] && [ "$table" = "$served" ] ||
            fail "$event: the table says '$table', the exposition '$served'"
    done
    # An address that cannot be bound: a clear message, and the demo runs to the end.
    "$demo" --memory -n 1 --no-color --metrics 192.0.2.1:9464 </dev/null >"$out" 2>"$out.err" ||
        fail "the demo stopped on an unbindable --metrics address"
    grep -q '192.0.2.1:9464" cannot be bound or listened on' "$out.err" ||
        fail "no message saying why the address cannot be bound"
    grep -q "^Done." "$out" || fail "the demo did not finish after an unbindable address"
    rm -f "$out.err"
fi
# --workers 4: a server that forks after setup. Every worker logs (its lines tagged
# with it), writes its own recorder dump, and the master's one /metrics -- served
# after the workers ended -- sums all four.
if "$demo" --help | grep -q -- "--workers N" && command -v bash >/dev/null 2>&1 &&
   "$demo" --help | grep -q -- "--metrics ADDR"; then
    expect2 "--workers 0" --workers 0
    expect2 "--workers 17" --workers 17
    expect2 "--workers x" --workers x
    dir=$(mktemp -d) || exit 1
    serve_and_scrape -d "$dir/demo.db" --workers 4 --requests 2 --no-color --record="$dir/rec.json" \
        --metrics 127.0.0.1:0 --trace "$dir/t.json"
    pids=$(sed -n 's/^\[worker [1-4] pid \([0-9]*\)\] Started migrate #1$/\1/p' "$out" | sort -u)
    [ "$(echo "$pids" | wc -l)" -eq 4 ] || { rm -rf "$dir"; fail "workers: want log lines from 4 workers, got pids: $pids"; }
    for p in $pids; do
        grep -q "^\[worker [1-4] pid $p\]   User Load (" "$out" ||
            { rm -rf "$dir"; fail "workers: no SQL line from pid $p"; }
        [ -s "$dir/rec-failed-$p-1.json" ] ||
            { rm -rf "$dir"; fail "workers: no recorder dump of pid $p: $(ls "$dir")"; }
        if command -v python3 >/dev/null 2>&1; then
            python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); \
r = d["otherData"]["recorder"]; assert r["reason"] == "trigger" and r["pid"] == int(sys.argv[2]), r' \
                "$dir/rec-failed-$p-1.json" "$p" || { rm -rf "$dir"; fail "workers: pid $p's dump is wrong"; }
        fi
    done
    # One trace file, one JSON document, each worker's events in it under its pid.
    if command -v python3 >/dev/null 2>&1; then
        python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); \
pids = {e["pid"] for e in d["traceEvents"] if e.get("name") == "request.demo"}; \
assert pids == {int(p) for p in sys.argv[2:]}, (pids, sys.argv[2:])' "$dir/t.json" $pids ||
            { rm -rf "$dir"; fail "workers: the trace file does not hold every worker's requests"; }
    fi
    [ "$(ls "$dir/demo-metrics" | grep -c '^hark-metrics-.*\.db$')" -eq 4 ] ||
        { rm -rf "$dir"; fail "workers: want 4 metrics files: $(ls "$dir/demo-metrics")"; }
    # One /metrics holds every worker's counts: 4 workers x (2 requests, migrate, seed, signup).
    served=$(echo "$body" | sed -n 's/^hark_event_duration_seconds_count{event="request.demo"} //p' | tr -d '\r')
    [ "$served" = 20 ] || { rm -rf "$dir"; fail "workers: /metrics counts '$served' requests, want 20"; }
    table=$(awk '$1 == "sql.sqlite" { print $2 }' "$out")
    served=$(echo "$body" | sed -n 's/^hark_event_duration_seconds_count{event="sql.sqlite"} //p' | tr -d '\r')
    [ -n "$table" ] && [ "$table" = "$served" ] ||
        { rm -rf "$dir"; fail "workers: sql.sqlite: the table says '$table', /metrics '$served'"; }
    # Checked before the master prints anything, as without --workers: a web
    # configuration refused, a recorder that cannot write.
    printf 'tls_server_config:\n  cert_file: server.pem\n  keyfile: server.key\n' >"$dir/bad.yml"
    expect2 "--workers with a refused web configuration" -d "$dir/demo.db" --workers 2 \
        --metrics 127.0.0.1:0 --metrics-web-config "$dir/bad.yml"
    expect2 "--workers with --record into a missing directory" -d "$dir/demo.db" --workers 2 \
        --record=/nonexistent/x.json
    # --workers with --metrics-web-config: the master serves the workers' sum behind
    # the file's basic auth (a bcrypt hash from libcrypt, through perl's crypt()).
    hash=$(perl -e 'print crypt("secret", "\$2b\$05\$abcdefghijklmnopqrstuu")' 2>/dev/null)
    if [ "${hash#\$2b\$05\$}" != "$hash" ] && [ "${#hash}" -eq 60 ] &&
       ! "$demo" --memory -n 1 --metrics 127.0.0.1:0 --metrics-web-config "$dir/bad.yml" 2>&1 |
           grep -q "no YAML reader"; then
        printf 'basic_auth_users:\n  demo: %s\n' "$hash" >"$dir/web.yml"
        scrape_header="Authorization: Basic $(printf demo:secret | base64)"
        serve_and_scrape -d "$dir/demo.db" --workers 2 --requests 1 --no-color \
            --metrics 127.0.0.1:0 --metrics-web-config "$dir/web.yml"
        scrape_header=
        grep -qF "while the demo runs, with the TLS and authentication of $dir/web.yml:" "$out" &&
            grep -q "curl -s -u USER:PASSWORD http://127.0.0.1:" "$out" ||
            { rm -rf "$dir"; fail "workers+web config: no curl line with basic auth"; }
        served=$(echo "$body" | sed -n 's/^hark_event_duration_seconds_count{event="request.demo"} //p' | tr -d '\r')
        # 2 workers x (1 request, migrate, seed, signup).
        [ "$served" = 8 ] || { rm -rf "$dir"; fail "workers+web config: /metrics counts '$served' requests, want 8: $body"; }
    fi
    rm -rf "$dir"
fi
# --trace FILE: a Chrome trace of both phases, parsed by a real JSON parser when
# python3 is here; an unwritable path is a bad option (status 2, nothing run).
if "$demo" --help | grep -q -- "--trace FILE"; then
    dir=$(mktemp -d) || exit 1
    "$demo" --memory --requests 3 --no-color --trace "$dir/t.json" >"$out" 2>&1 ||
        { rm -rf "$dir"; fail "the demo with --trace exited with $?"; }
    written=$(sed -n 's/^Trace: \([0-9]*\) events written to .*/\1/p' "$out")
    [ -n "$written" ] && [ "$written" -gt 0 ] || { rm -rf "$dir"; fail "no 'Trace:' line"; }
    # Every statement and request of both phases is in the trace.
    for event in sql.sqlite request.demo; do
        table=$(awk -v e="$event" '$1 == e { print $2 }' "$out")
        inside=$(grep -o "\"name\":\"$event\"" "$dir/t.json" | wc -l)
        [ "$table" = "$inside" ] || { rm -rf "$dir"; fail "$event: table $table, trace $inside"; }
    done
    if command -v python3 >/dev/null 2>&1; then
        python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); \
assert len(d["traceEvents"]) == int(sys.argv[2]), len(d["traceEvents"]); \
assert {e["cat"] for e in d["traceEvents"]} >= {"sqlite", "demo"}' "$dir/t.json" "$written" ||
            { rm -rf "$dir"; fail "the trace file is not the JSON it should be"; }
    fi
    expect2 "unwritable trace file" --memory --trace "$dir/no/such/dir/t.json"
    [ ! -e "$dir/no" ] || fail "the failed trace left files behind"
    rm -rf "$dir"
fi
echo "demo output checks passed"
