#!/bin/sh
# CTest (label integration): runs examples/otlp_demo.sh -- the demo exporting to the
# test receiver in node -- with its output in a file, and checks that each request's
# trace is printed whole, right after the request's own lines, before the cost
# section, and says which spans left an attribute out for size. Skipped (77)
# without node or the receiver's packages (cd tests/export/otlp && npm ci).
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$1
[ -d "$here/tests/export/otlp/node_modules" ] && command -v node >/dev/null 2>&1 || {
    echo "SKIP: node or tests/export/otlp/node_modules missing (npm ci there)"
    exit 77
}
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; echo "--- output:"; cat "$out"; exit 1; }

sh "$here/examples/otlp_demo.sh" "$build" --memory -n 3 --no-color >"$out" 2>&1 ||
    fail "exit status $? (want 0)"

# Every request of both phases has its trace: 2 x (migrate, seed, 3 requests, signup).
traces=$(grep -c '^\[otlp\] trace [0-9a-f]\{32\}  process\.pid=[0-9]*$' "$out")
[ "$traces" -eq 12 ] || fail "$traces traces printed, want 12"
# Whole lines: "[otlp]" only ever starts one (the banner's mention aside).
if grep -v '^OTLP receiver on' "$out" | grep -q '.\[otlp\]'; then
    fail "a receiver line was printed inside another line"
fi
# Each trace right after its request's closing line, its root the request.
awk '/^(Completed|Failed) / { done = NR } /^\[otlp\] trace / { if (done != NR - 1) bad = NR }
     END { exit bad ? 1 : 0 }' "$out" || fail "a trace is not right after its request's line"
grep -A1 '^\[otlp\] trace ' "$out" | grep -q '^\[otlp\]   request\.demo ' ||
    fail "a trace's root is not the request.demo span"
# Nothing from the receiver once the cost section begins.
awk '/^== What instrumenting/ { on = 1 } on && /^\[otlp\]/ { exit 1 }' "$out" ||
    fail "receiver lines inside the cost section"
# The seed's INSERTs of 500 rows have an sql attribute longer than a span record holds.
grep -q '^\[otlp\]     sql\.sqlite .*(1 attribute left out: over span_bytes)$' "$out" ||
    fail "no span says an attribute was left out"
grep -q '^OTLP: [0-9]* spans and [0-9]* metric points exported to .*, 0 spans dropped\.$' "$out" ||
    fail "no final OTLP line without drops"

# --workers 2: each worker's spans, sent by the worker, carry its own process.pid,
# and the workers' traces are all different (2 x (migrate, seed, 1 request, signup)).
dir=$(mktemp -d) || exit 1
sh "$here/examples/otlp_demo.sh" "$build" -d "$dir/demo.db" --workers 2 -n 1 --no-color \
    >"$out" 2>&1 || { rm -rf "$dir"; fail "workers: exit status $? (want 0)"; }
rm -rf "$dir"
ids=$(sed -n 's/^\[otlp\] trace \([0-9a-f]\{32\}\)  process\.pid=[0-9]*$/\1/p' "$out" | sort -u | wc -l)
[ "$ids" -eq 8 ] || fail "workers: $ids different traces printed, want 8"
for pid in $(sed -n 's/^\[worker [12] pid \([0-9]*\)\] Started migrate #1$/\1/p' "$out"); do
    n=$(grep -c "^\[otlp\] trace [0-9a-f]\{32\}  process\.pid=$pid\$" "$out")
    [ "$n" -eq 4 ] || fail "workers: $n traces from pid $pid, want 4"
done
[ "$(grep -c '^\[worker [12] pid [0-9]*\] Started migrate #1$' "$out")" -eq 2 ] ||
    fail "workers: want 2 workers"

# A collector whose certificate the demo does not trust (signed by a CA of the test's
# own, tests/support/make_certs.sh): the demo says so in the exporter's own words
# (hark_otlp_stats.last_error), not "is a collector listening there?".
if command -v openssl >/dev/null 2>&1; then
    certs=$(mktemp -d) || exit 1
    trap 'rm -f "$out"; [ -n "${rpid:-}" ] && kill "$rpid" 2>/dev/null; rm -rf "$certs"' EXIT
    bash "$here/tests/support/make_certs.sh" "$certs" || fail "make_certs.sh failed"
    node "$here/tests/export/otlp/receiver.js" --tls-cert "$certs/server.pem" \
        --tls-key "$certs/server.key" >"$certs/port" 2>/dev/null &
    rpid=$!
    tries=0
    until grep -q '^PORT ' "$certs/port"; do
        tries=$((tries + 1))
        [ "$tries" -lt 300 ] && kill -0 "$rpid" 2>/dev/null || fail "the HTTPS receiver did not start"
        sleep 0.1
    done
    port=$(sed -n 's/^PORT //p' "$certs/port")
    env -u OTEL_EXPORTER_OTLP_CERTIFICATE "$build/examples/hark-demo" --memory -n 1 --no-color \
        --otlp "https://127.0.0.1:$port" >"$out" 2>&1 || fail "untrusted collector: exit status $?"
    grep -q "^OTLP: the last failure: [a-z]* to https://127.0.0.1:$port/v1/[a-z]*: TLS: the server's certificate is not signed by a trusted CA" "$out" ||
        fail "untrusted collector: the exporter's reason is not said"
    if grep -q "collector listening" "$out"; then
        fail "untrusted collector: reported as one that may not be listening"
    fi
fi
echo "PASS"
