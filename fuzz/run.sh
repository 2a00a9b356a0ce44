#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer targets with clang, ASan and UBSan, and fuzzes
# each for FUZZ_SECONDS (default 60). New inputs go to fuzz/out/<target>/ (not
# committed); crashes are written there as crash-* files and stop the run. Copy an
# interesting input into fuzz/corpus/<target>/ to keep it as a regression test.
#
#   FUZZ_SECONDS=300 FUZZ_TARGETS="fuzz_names" make fuzz
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
BUILD=${FUZZ_BUILD:-build-fuzz}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
command -v clang >/dev/null || { echo "fuzz: clang is required (apt-get install clang libclang-rt-14-dev)"; exit 1; }

CC=clang cmake -S . -B "$BUILD" -DHARK_BUILD_FUZZ=ON -DHARK_SANITIZE=address,undefined \
  -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link" -DHARK_BUILD_TESTS=OFF \
  -DHARK_BUILD_BENCH=OFF -DHARK_BUILD_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" -j "$JOBS"

targets=${FUZZ_TARGETS:-$(cd fuzz && ls fuzz_*.c | sed 's/\.c$//')}
for t in $targets; do
  [ -x "$BUILD/fuzz/$t" ] || { echo "fuzz: $t not built (skipped)"; continue; }
  mkdir -p "fuzz/out/$t"
  echo "=== fuzz: $t for ${FUZZ_SECONDS}s ==="
  (cd "fuzz/out/$t" && ASAN_OPTIONS=abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$root/$BUILD/fuzz/$t" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
      -max_len=1024 -print_final_stats=1 "$root/fuzz/out/$t" "$root/fuzz/corpus/$t")
done
echo "fuzz: all targets ran without a crash"
