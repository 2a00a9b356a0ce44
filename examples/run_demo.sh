#!/bin/sh
# What `make demo` runs, after the Makefile has built everything into the build
# directory given as $1 (default: build). Extra arguments go to the demo.
set -eu
build=${1:-build}
[ $# -gt 0 ] && shift
demo="$build/examples/hark-demo"
if [ ! -x "$demo" ]; then
    echo "run_demo.sh: $demo was not built; is libsqlite3-dev installed?" >&2
    exit 1
fi
exec "$demo" --database "$build/demo.db" "$@"
