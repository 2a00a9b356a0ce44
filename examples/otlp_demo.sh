#!/bin/sh
# The demo exporting to OpenTelemetry: starts the OTLP receiver of the tests
# (tests/export/otlp/receiver.js: node, with OpenTelemetry's own codec -- it needs
# node and the receiver's packages, `cd tests/export/otlp && npm ci`), runs
# `hark-demo --otlp` against it, and prints each request's trace as a tree of spans
# as it arrives: the demo sends each request's spans when the request ends, and the
# receiver prints the tree ("[otlp]" lines) before it answers, so every tree comes
# right after its request's log lines, whole, on a terminal or in a file alike.
#
#   sh examples/otlp_demo.sh [BUILD_DIR] [demo options...]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
[ $# -gt 0 ] && shift
receiver="$here/tests/export/otlp/receiver.js"
if ! command -v node >/dev/null 2>&1 || [ ! -d "$here/tests/export/otlp/node_modules" ]; then
    echo "otlp_demo.sh: needs node and the receiver's packages: (cd tests/export/otlp && npm ci)" >&2
    exit 1
fi
fifo=$(mktemp -u)
mkfifo "$fifo"
# The receiver's standard output (its port) through the fifo; its trees, on its
# standard error, straight to this script's standard output.
node "$receiver" --tree 2>&1 >"$fifo" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -f "$fifo"' EXIT INT TERM
exec 3<"$fifo"
read -r word port <&3
[ "$word" = PORT ] || { echo "otlp_demo.sh: the receiver did not start" >&2; exit 1; }
echo "OTLP receiver on http://127.0.0.1:$port (each request's trace prints as [otlp] lines)"
sh "$here/examples/run_demo.sh" "$build" --otlp "http://127.0.0.1:$port" "$@"
