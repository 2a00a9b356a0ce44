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
echo "PASS"
