#!/bin/sh
# The demo exporting to OpenTelemetry: starts the OTLP receiver of the tests
# (tests/export/otlp/receiver.js, OpenTelemetry's own codec in node; `npm ci` in
# that folder first), runs `hark-demo --otlp` against it, and prints every trace it
# receives as a tree of spans while the demo runs.
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
node "$receiver" --tree >"$fifo" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -f "$fifo"' EXIT INT TERM
exec 3<"$fifo"
read -r word port <&3
[ "$word" = PORT ] || { echo "otlp_demo.sh: the receiver did not start" >&2; exit 1; }
sed 's/^/[otlp] /' <&3 &
echo "OTLP receiver on http://127.0.0.1:$port (spans print as [otlp] lines)"
sh "$here/examples/run_demo.sh" "$build" --otlp "http://127.0.0.1:$port" "$@"
sleep 1 # the last trees
