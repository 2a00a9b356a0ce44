#!/usr/bin/env bash
# bench/icount.sh -- what `make bench-icount` runs: instructions per operation for the
# key cases, repeatable even on a noisy machine.
#
# Two counts per case:
#   callgrind  valgrind --tool=callgrind, collecting only between the bench program's
#              markers; (Ir(N2) - Ir(N1)) / (N2 - N1). Valgrind disables the vDSO, so
#              a clock read is a real system call here and counts only its user part.
#   cpu        hark_icount: ptrace single-stepping on the real CPU between the same
#              markers, vDSO clock reads included (a system call counts as 1).
# Then, for each hark case, the library functions that cost the most, in callgrind's
# self instructions per operation (inclusive in brackets).
#
# Environment: ONLY (case filter, as for bench/run.sh), N1/N2 (callgrind iteration
# counts, default 2000/12000), CPU_N1/CPU_N2 (single-step counts, default 20/120;
# single-stepping costs tens of microseconds per instruction on these VMs),
# CPU_ICOUNT=0 to skip the single-step column, BENCH_BUILD_DIR.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BENCH_BUILD_DIR:-$ROOT/build-bench}
OUT_DIR=$ROOT/build/bench/icount
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
N1=${N1:-2000}
N2=${N2:-12000}
CPU_N1=${CPU_N1:-20}
CPU_N2=${CPU_N2:-120}
ONLY=${ONLY:-}

note() { printf 'icount: %s\n' "$*"; }

CASES="baseline/empty_loop baseline/flag_guard hark/unsubscribed hark/unsubscribed@shared
hark/silenced hark/silenced_dynamic hark/logsub_sql_silenced hark/by_name_unsubscribed
hark/by_name_lookup_unsubscribed baseline/naive_timed10 hark/timed hark/timed@shared
baseline/naive_timed10_tsc hark/timed_monotonic hark/timed_1sub hark/pattern_timed baseline/naive_evented10
baseline/naive_evented10_noclock hark/evented hark/evented@shared
baseline/naive_timed10_cpu hark/event_object hark/event_object@shared hark/event_object_nocpu hark/nested8
hark/otlp_span hark/otlp_unsampled hark/trace_record
baseline/fprintf_devnull hark/logsub_sql_event_only hark/logsub_sql_active hark/logsub_sql_active_async
hark/logsub_sql_active_async_printf
hark/logsub_sql_active_json baseline/metrics_histogram hark/metrics_histogram
hark/metrics_histogram_shared
hark/lttng_idle baseline/trace_by_hand hark/trace_record_sql hark/recorder hark/recorder_nopayload
hark/recorder_idle"

# shellcheck source=bench/select.sh
. "$ROOT/bench/select.sh"

if ! command -v valgrind >/dev/null 2>&1 || [ ! -f /usr/include/valgrind/callgrind.h ]; then
  if [ "$(id -u)" = 0 ]; then
    note "installing valgrind"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind) \
      >/dev/null 2>&1 || note "apt-get install valgrind failed"
  fi
fi
HAVE_VALGRIND=1
command -v valgrind >/dev/null 2>&1 || { HAVE_VALGRIND=0; note "valgrind missing: callgrind column skipped (apt-get install valgrind)"; }

mkdir -p "$OUT_DIR"
# -U re-checks for valgrind/callgrind.h, in case valgrind was installed since.
cmake -S "$ROOT" -B "$BUILD_DIR" -U HARK_BENCH_HAVE_CALLGRIND -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" -DHARK_BUILD_BENCH=ON -DHARK_BUILD_TESTS=OFF \
  -DHARK_BUILD_EXAMPLES=OFF -DHARK_BUILD_FUZZ=OFF >"$OUT_DIR/configure.log" 2>&1 ||
  { cat "$OUT_DIR/configure.log"; exit 1; }
cmake --build "$BUILD_DIR" -j "$JOBS" --target hark_bench_baselines hark_icount \
  >"$OUT_DIR/build.log" 2>&1 || { grep -E 'error|undefined' "$OUT_DIR/build.log" | head; exit 1; }
HAVE_HARK=1
if ! cmake --build "$BUILD_DIR" -j "$JOBS" --target hark_bench hark_bench_shared \
     >>"$OUT_DIR/build.log" 2>&1; then
  grep -E 'error|undefined reference' "$OUT_DIR/build.log" | head
  note "the library does not build or link yet: baselines only"
  HAVE_HARK=0
fi
if ! grep -q BENCH_HAVE_CALLGRIND "$BUILD_DIR/bench/CMakeFiles/hark_bench_baselines.dir/flags.make" 2>/dev/null; then
  note "built without valgrind/callgrind.h: callgrind would count the whole program; column skipped"
  HAVE_VALGRIND=0
fi

# Ir collected between the markers of one run of CASE for N iterations.
callgrind_ir() {
  local prog=$1 case=$2 n=$3 out=$4
  valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$out" \
    "$prog" "$case" "$n" icount >/dev/null 2>"$out.log" || return 1
  awk '/^(summary|totals):/ { print $2; exit }' "$out"
}

printf '%-36s %12s %12s\n' "case" "callgrind" "cpu" | tee "$OUT_DIR/icount.txt"
json=""
for c in $CASES; do
  selected "$c" || continue
  prog="$BUILD_DIR/bench/hark_bench"
  [ "$HAVE_HARK" = 0 ] && prog="$BUILD_DIR/bench/hark_bench_baselines"
  [ "$HAVE_HARK" = 0 ] && [[ $c == hark/* ]] && continue
  name=$c
  if [[ $c == *@shared ]]; then
    prog="$BUILD_DIR/bench/hark_bench_shared"
    name=${c%@shared}
  fi
  file=$(echo "$c" | tr '/@' '__')
  cg="-"
  if [ "$HAVE_VALGRIND" = 1 ]; then
    a=$(callgrind_ir "$prog" "$name" "$N1" "$OUT_DIR/$file.n1.out")
    b=$(callgrind_ir "$prog" "$name" "$N2" "$OUT_DIR/$file.out")
    if [ -n "$a" ] && [ -n "$b" ]; then
      cg=$(awk -v a="$a" -v b="$b" -v n1="$N1" -v n2="$N2" 'BEGIN { printf "%.1f", (b - a) / (n2 - n1) }')
    fi
  fi
  cpu="-"
  if [ "${CPU_ICOUNT:-1}" != 0 ]; then
    r=$("$BUILD_DIR/bench/hark_icount" "$CPU_N1" "$CPU_N2" "$prog" "$name" 2>/dev/null) &&
      cpu=$(echo "$r" | awk '{ print $(NF-1) }')
  fi
  printf '%-36s %12s %12s\n' "$c" "$cg" "$cpu" | tee -a "$OUT_DIR/icount.txt"
  json="$json${json:+,}
  {\"case\": \"$c\", \"callgrind_ir_per_op\": ${cg/#-/null}, \"cpu_instr_per_op\": ${cpu/#-/null}}"
done
printf '[%s\n]\n' "$json" >"$OUT_DIR/icount.json"

# Function-level breakdown for the hark cases, from the N2 run.
if [ "$HAVE_VALGRIND" = 1 ] && command -v callgrind_annotate >/dev/null 2>&1; then
  echo
  echo "== where the instructions go (callgrind, per operation; self [inclusive]) ==" |
    tee -a "$OUT_DIR/icount.txt"
  for c in $CASES; do
    [[ $c == hark/* ]] || continue
    selected "$c" || continue
    file=$(echo "$c" | tr '/@' '__')
    [ -f "$OUT_DIR/$file.out" ] || continue
    echo "-- $c" | tee -a "$OUT_DIR/icount.txt"
    callgrind_annotate --inclusive=yes "$OUT_DIR/$file.out" 2>/dev/null >"$OUT_DIR/$file.incl.txt"
    callgrind_annotate --inclusive=no "$OUT_DIR/$file.out" 2>/dev/null |
      awk -v n="$N2" -v incl="$OUT_DIR/$file.incl.txt" '
        BEGIN {
          while ((getline line < incl) > 0) {
            if (line ~ /^ *[0-9,]+ .*:/) {
              split(line, f, " "); v = f[1]; gsub(",", "", v)
              fn = line; sub(/^ *[0-9,]+ +(\([^)]*\) +)?/, "", fn); sub(/ \[.*$/, "", fn)
              inclusive[fn] = v
            }
          }
        }
        /^ *[0-9,]+ .*:/ {
          split($0, f, " "); v = f[1]; gsub(",", "", v)
          fn = $0; sub(/^ *[0-9,]+ +(\([^)]*\) +)?/, "", fn); sub(/ \[.*$/, "", fn)
          if (v / n < 0.5) next
          if (shown++ >= 12) next
          short = fn; sub(/^.*:/, "", short)
          printf "   %8.1f  [%8.1f]  %s\n", v / n, (fn in inclusive ? inclusive[fn] / n : 0), short
        }' | tee -a "$OUT_DIR/icount.txt"
  done
fi
note "wrote $OUT_DIR/icount.txt and icount.json"
