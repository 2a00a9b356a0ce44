#!/usr/bin/env bash
# bench/run.sh -- what `make bench` runs.
#
# Configures a Release (-O2) build of its own (build-bench/), builds the benchmark
# programs, runs every case with hark linked statically, the key cases again against
# the shared library (rows suffixed @shared), and the Rails anchor benchmark when
# Ruby with ActiveSupport and benchmark-ips is available; then prints the table,
# the ratios and one PASS/MISS/SKIP line per budget, and writes
# build/bench/results.json (and budgets.json, report.txt, the raw rows).
#
# Environment:
#   ONLY              comma-separated case filter (substring; a trailing $ = exact name).
#                     Ruby rows follow it: ONLY=hark/timed also runs ruby/timed.
#   BENCH_TARGET_MS   length of one calibrated run (default 100)
#   BENCH_ROUNDS      passes over the case list (default 3); samples of a case are
#                     spread over the rounds so that noise hits cases and baselines alike
#   BENCH_REPEAT      measured runs per case per round (default 3)
#   TIME, WARMUP      benchmark-ips seconds per Ruby case (defaults 2 and 1)
#   RUBY_BENCH=0      skip the Ruby rows
#   RUBY_ROUNDS       rounds of the Rails 7.2 own-fanout / hark_rb pairs (default 3)
#   AR_ROUNDS         rounds of the ActiveRecord 7.2 rows, ar72 / hark_ar / ar72_noop
#                     (default 9); AR_TIME, AR_WARMUP: CPU seconds per case (2 and 0.5)
#   APP_ROUNDS        rounds of the Rails application rows (examples/rails), rails_app /
#                     hark_app / rails_app_noop (default 5); APP_TIME: CPU seconds per
#                     process (2)
#   APP_IR=0          skip the application's callgrind rows (@ir); APP_IR_REQUESTS:
#                     requests counted per process (default 40)
#   TELEMETRY_BENCH=0 skip the telemetry rows (otel_app, hark_otlp_app, prom_app,
#                     hark_metrics_app: @ir rows beside the application's)
#   SHARED_BENCH=0    skip the @shared rows
#   CLOCK_BENCH=0     skip the @tsc and @vdso rows (the key rows with each clock source)
#   BENCH_BUILD_DIR   build directory (default build-bench)
#
# The script never fails because a budget is missed; it fails only when it cannot
# build or run the benchmark at all.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BENCH_BUILD_DIR:-$ROOT/build-bench}
OUT_DIR=$ROOT/build/bench
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
ONLY=${ONLY:-}
export ONLY
export BENCH_TARGET_MS=${BENCH_TARGET_MS:-100}
export BENCH_REPEAT=${BENCH_REPEAT:-3}
export BENCH_ROUNDS=${BENCH_ROUNDS:-3}
RUBY_TIME=${TIME:-2}
RUBY_WARMUP=${WARMUP:-1}
START=$(date +%s)

mkdir -p "$OUT_DIR"
rm -f "$OUT_DIR"/rows-*.tsv

note() { printf 'bench: %s\n' "$*"; }

# One round of a Ruby benchmark side: runs the command (its output to LOG) and
# appends its RESULT lines to RESULTS as side, case, ns, mode, round; on failure
# shows the log's tail and says so.
#   ruby_round RESULTS LOG ROUND WHAT command...
ruby_round() {
  local results=$1 log=$2 round=$3 what=$4
  shift 4
  if "$@" >"$log" 2>&1; then
    awk -F'\t' -v r="$round" '$1 == "RESULT" { print $2 "\t" $4 "\t" $6 "\t" $3 "\t" r }' \
      "$log" >>"$results"
  else
    tail -5 "$log"
    note "ruby $what failed (round $round)"
  fi
}

# The rows of ruby_round's results: per side and case, the min and the median of the
# rounds, described by DESC (an awk expression of key_side, mode and n). A side
# named ALSO_SIDE is written a second time as ruby/<case> (the C cases' reference).
#   ruby_rows RESULTS DESC [ALSO_SIDE]
ruby_rows() {
  sort -t$'\t' -k1,1 -k2,2 -k3,3g "$1" | awk -F'\t' -v also="${3:-}" '
    function flush() {
      if (n == 0) return
      med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
      desc = '"$2"'
      printf "%s/%s\truby\tok\t%s\t%s\t\t\t\t%d\truby\t%s\t\n", key_side, key_case, v[1], med, n, desc
      if (key_side == also)
        printf "ruby/%s\truby\tok\t%s\t%s\t\t\t\t%d\truby\t%s\t\n", key_case, v[1], med, n, desc
      n = 0
    }
    { if ($1 != key_side || $2 != key_case) { flush(); key_side = $1; key_case = $2; mode = $4 }
      v[++n] = $3 }
    END { flush() }'
}

# shellcheck source=bench/select.sh
. "$ROOT/bench/select.sh"

# ---- build -------------------------------------------------------------------------
note "configuring $BUILD_DIR (Release, -O2)"
if ! cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
     -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" -DHARK_BUILD_BENCH=ON \
     -DHARK_BUILD_TESTS=OFF -DHARK_BUILD_EXAMPLES=OFF -DHARK_BUILD_FUZZ=OFF \
     >"$OUT_DIR/configure.log" 2>&1; then
  cat "$OUT_DIR/configure.log"
  exit 1
fi
if ! cmake --build "$BUILD_DIR" -j "$JOBS" --target hark_bench_report hark_bench_baselines \
     >"$OUT_DIR/build.log" 2>&1; then
  cat "$OUT_DIR/build.log"
  exit 1
fi
BIN="$BUILD_DIR/bench/hark_bench"
SHARED_BIN="$BUILD_DIR/bench/hark_bench_shared"
if ! cmake --build "$BUILD_DIR" -j "$JOBS" --target hark_bench hark_bench_shared \
     >>"$OUT_DIR/build.log" 2>&1; then
  grep -E 'error|undefined reference' "$OUT_DIR/build.log" | head -20
  note "the library does not build or link yet: running the plain-C baselines only"
  BIN="$BUILD_DIR/bench/hark_bench_baselines"
  SHARED_BIN=""
fi

# ---- what we run on ---------------------------------------------------------------------
note "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//')"
note "$(${CC:-cc} --version | head -1), commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
note "BENCH_TARGET_MS=$BENCH_TARGET_MS BENCH_ROUNDS=$BENCH_ROUNDS BENCH_REPEAT=$BENCH_REPEAT${ONLY:+ ONLY=$ONLY}"

# ---- C cases ------------------------------------------------------------------------------
echo
"$BIN" --tsv "$OUT_DIR/rows-c.tsv" || note "the bench program failed (exit $?)"

# The key cases again against libhark.so, each with the rows its budget compares it
# with (case:reference, and the reference's own when that is a hark row), in the same
# process: a ratio of rows from two processes run one after the other measures the
# machine's load as much as the code (on the 2-vCPU VM the same baseline's median
# moved by a fifth from one such process to the next).
SHARED_ROWS="hark/unsubscribed:baseline/flag_guard hark/silenced:hark/unsubscribed:baseline/flag_guard
hark/by_name_unsubscribed:baseline/flag_guard hark/timed:baseline/naive_timed10
hark/evented:baseline/naive_evented10 hark/event_object:baseline/naive_timed10_cpu"
if [ -n "$SHARED_BIN" ] && [ "${SHARED_BENCH:-1}" != 0 ]; then
  shared_only=""
  for pair in $SHARED_ROWS; do
    c=${pair%%:*}
    if selected "$c" || selected "$c@shared"; then
      IFS=':' read -r -a rows <<<"$pair"
      for r in "${rows[@]}"; do
        [[ ,$shared_only, == *",$r\$,"* ]] || shared_only="$shared_only${shared_only:+,}$r\$"
      done
    fi
  done
  if [ -n "$shared_only" ]; then
    echo
    note "again against libhark.so: $shared_only"
    ONLY="$shared_only" "$SHARED_BIN" --suffix @shared --tsv "$OUT_DIR/rows-shared.tsv" ||
      note "the shared-library bench program failed (exit $?)"
  fi
fi

# ---- the clock sources: key rows with HARK_CLOCK=tsc and =vdso ------------------------------
# Each source in a process of its own (the source is chosen at the first reading),
# the key rows with the baselines they are compared with, so that every ratio of
# a source comes from one process; rows suffixed @tsc and @vdso.
CLOCK_ROWS="baseline/naive_timed10 baseline/naive_timed10_tsc baseline/fprintf_devnull \
hark/timed hark/timed_monotonic hark/logsub_sql_active_async hark/logsub_sql_event_only"
if [ "${CLOCK_BENCH:-1}" != 0 ]; then
  clock_only=""
  for c in $CLOCK_ROWS; do
    if selected "$c" || selected "$c@tsc" || selected "$c@vdso"; then
      clock_only="$clock_only${clock_only:+,}$c\$"
    fi
  done
  if [ -n "$clock_only" ]; then
    for src in tsc vdso; do
      echo
      note "again with HARK_CLOCK=$src: $clock_only"
      HARK_CLOCK=$src ONLY="$clock_only" "$BIN" --suffix "@$src" --tsv "$OUT_DIR/rows-clock-$src.tsv" ||
        note "the HARK_CLOCK=$src bench program failed (exit $?)"
    done
  fi
fi

# ---- Ruby: the anchor benchmark, in the same run ------------------------------------------
# Rails 7.2's activesupport beside the repository, when present.
rails72=""
for d in "$ROOT/../shared/rails-7.2" "$ROOT/../../shared/rails-7.2"; do
  if [ -d "$d/activesupport/lib" ]; then rails72=$(cd "$d" && pwd); break; fi
done
ruby_ready() {
  command -v ruby >/dev/null 2>&1 &&
    ruby ${rails72:+-I "$rails72/activesupport/lib"} -e 'require "set"; require "logger"; require "active_support"; require "active_support/notifications"; require "active_support/log_subscriber"; require "benchmark/ips"' >/dev/null 2>&1
}
ruby_pkgs="ruby ruby-activesupport ruby-benchmark-ips"
[ -n "$rails72" ] && ruby_pkgs="ruby ruby-dev ruby-benchmark-ips ruby-concurrent ruby-i18n ruby-tzinfo ruby-connection-pool ruby-minitest"

RUBY_CASES="baseline_empty timed timed_monotonic event_object evented unsubscribed silenced logsub_sql_silenced logsub_sql_active"
ruby_only=""
for c in $RUBY_CASES; do
  if selected "ruby/$c" || selected "hark/$c" || selected "hark_rb/$c" || selected "rails72/$c"; then
    ruby_only="$ruby_only${ruby_only:+,}$c"
  fi
done

if [ "${RUBY_BENCH:-1}" = 0 ]; then
  note "RUBY_BENCH=0: no ruby rows"
elif [ -z "$ruby_only" ]; then
  :
else
  if ! ruby_ready; then
    if [ "$(id -u)" = 0 ]; then
      note "installing $ruby_pkgs"
      # shellcheck disable=SC2086
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
         $ruby_pkgs) >"$OUT_DIR/apt.log" 2>&1 ||
        note "apt-get failed (see $OUT_DIR/apt.log)"
    else
      note "ruby rows skipped: install $ruby_pkgs (as root) to get them"
    fi
  fi
  if ruby_ready; then
    script=""
    for s in "$ROOT/../shared/anchors/as_notifications_bench.rb" \
             "$ROOT/../../shared/anchors/as_notifications_bench.rb" "$ROOT/bench/rails_bench.rb"; do
      if [ -f "$s" ]; then script=$s; break; fi
    done
    echo
    if [ -z "$rails72" ]; then
      note "ruby: $(basename "$script") on Debian's ActiveSupport, ONLY=$ruby_only TIME=$RUBY_TIME WARMUP=$RUBY_WARMUP"
      if (cd "$OUT_DIR" && ONLY="$ruby_only" TIME="$RUBY_TIME" WARMUP="$RUBY_WARMUP" \
            ruby "$script") >"$OUT_DIR/ruby.log" 2>&1; then
        grep -E '^(RUBY|AS|SANITY|FEATURES) ' "$OUT_DIR/ruby.log"
        awk -F'\t' '$1 == "RESULT" {
            printf "ruby/%s\truby\tok\t%s\t%s\t\t\t\t1\truby\tActiveSupport %s (%s), benchmark-ips mean, error %s%%\t\n",
                   $4, $6, $6, $2, $3, $7 }' "$OUT_DIR/ruby.log" >"$OUT_DIR/rows-ruby.tsv"
      else
        tail -20 "$OUT_DIR/ruby.log"
        note "the ruby benchmark failed; no ruby rows"
      fi
    else
      # Rails 7.2 (the version the seed change shipped in), twice in the same run:
      # its own fanout (rows rails72/<case>, also the ruby/<case> reference of the C
      # cases) and with hark/rails loaded (rows hark_rb/<case>). The two alternate
      # case by case, RUBY_ROUNDS times, so that load on the machine hits both alike;
      # the rows carry the min and median of the rounds.
      RUBY_ROUNDS=${RUBY_ROUNDS:-3}
      note "ruby: $(basename "$script") on Rails 7.2 ($rails72), own fanout vs hark/rails, $RUBY_ROUNDS rounds, TIME=$RUBY_TIME WARMUP=$RUBY_WARMUP"
      if ! make -C "$ROOT" --no-print-directory ruby >"$OUT_DIR/ruby-build.log" 2>&1; then
        tail -20 "$OUT_DIR/ruby-build.log"
        note "the Ruby extension does not build: no hark_rb rows"
      fi
      : >"$OUT_DIR/ruby-results.tsv"
      for round in $(seq 1 "$RUBY_ROUNDS"); do
        for c in ${ruby_only//,/ }; do
          for side in rails72 hark_rb; do
            extra=()
            [ "$side" = hark_rb ] && extra=(-I "$ROOT/bindings/ruby/lib" -r hark/rails)
            ruby_round "$OUT_DIR/ruby-results.tsv" "$OUT_DIR/ruby-$side.log" "$round" "$side/$c" \
              env -C "$OUT_DIR" ONLY="$c" TIME="$RUBY_TIME" WARMUP="$RUBY_WARMUP" LABEL="$side" \
              ruby -I "$rails72/activesupport/lib" "${extra[@]}" "$script"
          done
        done
      done
      grep -E '^(RUBY|AS|SANITY|FEATURES) ' "$OUT_DIR/ruby-hark_rb.log" 2>/dev/null
      ruby_rows "$OUT_DIR/ruby-results.tsv" \
        '"Rails 7.2 " (key_side == "hark_rb" ? "with hark/rails" : "own fanout") " (" mode "), benchmark-ips, " n " rounds"' \
        rails72 >"$OUT_DIR/rows-ruby.tsv"
      cut -f1,4,5 "$OUT_DIR/rows-ruby.tsv" | grep -v '^ruby/' |
        awk -F'\t' '{ printf "%-40s %10.1f %10.1f ns/op (min, median)\n", $1, $2, $3 }'
    fi
  fi
fi

# The CASES (space-separated) that ONLY selects on any of the SIDEs (SIDE/case).
#   selected_cases CASES SIDE...
selected_cases() {
  local cases=$1 c side out=""
  shift
  for c in $cases; do
    for side in "$@"; do
      if selected "$side/$c"; then
        out="$out${out:+ }$c"
        break
      fi
    done
  done
  echo "$out"
}

# Whether READY (a function) holds for the rows WHAT, after installing the Debian
# packages PKGS when it does not and this runs as root; a note saying what to install
# otherwise.
#   ruby_side_ready READY WHAT PKGS
ruby_side_ready() {
  local ready=$1 what=$2 pkgs=$3
  if ! "$ready" && [ "$(id -u)" = 0 ]; then
    note "installing the Debian packages of the $what"
    # shellcheck disable=SC2086
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $pkgs) \
      >>"$OUT_DIR/apt.log" 2>&1 || note "apt-get failed (see $OUT_DIR/apt.log)"
  fi
  "$ready" && return 0
  note "$what skipped: install $pkgs (and Rails 7.2 beside the repository)"
  return 1
}

# The path of bench's libhark_callgrind_marks.so (built on first use), or failure when
# valgrind or its callgrind.h is missing.
callgrind_marks() {
  local lib="$BUILD_DIR/bench/libhark_callgrind_marks.so"
  command -v valgrind >/dev/null 2>&1 &&
    cmake --build "$BUILD_DIR" --target hark_callgrind_marks >>"$OUT_DIR/build.log" 2>&1 &&
    [ -f "$lib" ] && echo "$lib"
}

# One @ir row on stdout: COMMAND (which must honour CALLGRIND_MARKS: only what lies
# between its marks is counted) run under callgrind with env's ENV_ARGS (variables, -C
# dir), the count divided by N, as row NAME described by WHAT (and the objects allocated
# per operation when COMMAND prints an ALLOC line); a note and nothing on stdout when it
# fails.
#   ir_row NAME N WHAT ENV_ARGS... -- COMMAND...
ir_row() {
  local name=$1 n=$2 what=$3 out="$OUT_DIR/ir-${1//\//-}" envs=()
  shift 3
  while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  if ! env "${envs[@]}" valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no \
       --callgrind-out-file="$out.callgrind" "$@" >"$out.log" 2>"$out.err"; then
    tail -5 "$out.err" >&2
    note "$name under callgrind failed" >&2
    return 0
  fi
  awk -v n="$n" -v row="$name" -v what="$what" -v alloc="$(awk -F'\t' '$1 == "ALLOC" { print $4 }' "$out.log")" '
    /^totals:/ { v = $2 / n
                 if (alloc != "") what = what "; " alloc " objects allocated per request"
                 printf "%s\tir\tok\t%.0f\t%.0f\t\t\t\t%d\truby\t%s\t\n", row, v, v, 1, what }' "$out.callgrind"
}

# ---- Ruby: an ActiveRecord 7.2 application, in the same run ------------------------------------
# bench/ar_bench.rb on Rails 7.2's activerecord and SQLite, one process per side and case:
# Rails' own fanout (ar72/<case>), hark/rails loaded (hark_ar/<case>), and for find_info
# ActiveSupport::Notifications' instrument reduced to a bare yield (ar72_noop/find_info,
# what an overhead is measured from). The sides alternate case by case, AR_ROUNDS times;
# rows carry the min and median of the rounds. Nine rounds by default: on a shared host
# a burst of load from elsewhere can slow two or three rounds of one side in a row (seen
# with five rounds: 6.9 against 4.7 us for the same Rails row), and the median of nine
# stays put unless five are hit.
AR_CASES="ar_sql_event_info ar_sql_event_debug find_info find_debug"
ar_only=$(selected_cases "$AR_CASES" ar72 hark_ar ar72_noop)
ar_ready() {
  [ -n "$rails72" ] && [ -d "$rails72/activerecord/lib" ] && command -v ruby >/dev/null 2>&1 &&
    ruby -I "$rails72/shim" -I "$rails72/activesupport/lib" -I "$rails72/activemodel/lib" \
      -I "$rails72/activerecord/lib" -e 'require "set"; require "logger"; require "active_record"; require "sqlite3"' >/dev/null 2>&1
}
if [ "${RUBY_BENCH:-1}" != 0 ] && [ -n "$ar_only" ] && [ -n "$rails72" ]; then
  if ruby_side_ready ar_ready "ActiveRecord rows" "ruby ruby-dev ruby-sqlite3 ruby-concurrent \
       ruby-i18n ruby-tzinfo ruby-connection-pool ruby-minitest"; then
    AR_ROUNDS=${AR_ROUNDS:-9}
    AR_TIME=${AR_TIME:-2}
    AR_WARMUP=${AR_WARMUP:-0.5}
    make -C "$ROOT" --no-print-directory ruby >>"$OUT_DIR/ruby-build.log" 2>&1 ||
      note "the Ruby extension does not build: no hark_ar rows"
    echo
    note "ruby: bench/ar_bench.rb on ActiveRecord 7.2 + SQLite, own fanout vs hark/rails, $AR_ROUNDS rounds, AR_TIME=$AR_TIME AR_WARMUP=$AR_WARMUP (thread CPU time)"
    ar_inc=(-I "$rails72/shim" -I "$rails72/activesupport/lib" -I "$rails72/activemodel/lib" -I "$rails72/activerecord/lib")
    : >"$OUT_DIR/ar-results.tsv"
    for round in $(seq 1 "$AR_ROUNDS"); do
      for c in $ar_only; do
        sides="ar72 hark_ar"
        [ "$c" = find_info ] && sides="ar72 hark_ar ar72_noop"
        for side in $sides; do
          selected "$side/$c" || selected "ar72/$c" || selected "hark_ar/$c" || continue
          extra=()
          noop=0
          [ "$side" = hark_ar ] && extra=(-I "$ROOT/bindings/ruby/lib" -r hark/rails)
          [ "$side" = ar72_noop ] && noop=1
          ruby_round "$OUT_DIR/ar-results.tsv" "$OUT_DIR/ar-$side.log" "$round" "$side/$c" \
            env -C "$OUT_DIR" ONLY="$c" TIME="$AR_TIME" WARMUP="$AR_WARMUP" LABEL="$side" NOOP="$noop" \
            ruby "${ar_inc[@]}" "${extra[@]}" "$ROOT/bench/ar_bench.rb"
        done
      done
    done
    grep -E '^(RUBY|AR) ' "$OUT_DIR/ar-hark_ar.log" 2>/dev/null
    ruby_rows "$OUT_DIR/ar-results.tsv" \
      '"ActiveRecord 7.2 " (key_side == "hark_ar" ? "with hark/rails" : key_side == "ar72_noop" ? "instrument = bare yield" : "own fanout") " (" mode "), thread CPU time, " n " rounds"' \
      >"$OUT_DIR/rows-ar.tsv"
    # find_info in instructions (the budget's figure): callgrind counting AR_IR_OPS finds
    # per side after a warm-up, only them, the garbage collector off while they run.
    if [ "${AR_IR:-1}" != 0 ] && case " $ar_only " in *" find_info "*) true ;; *) false ;; esac; then
      if ! marks=$(callgrind_marks); then
        note "find_info@ir rows skipped: needs valgrind and valgrind/callgrind.h (apt-get install valgrind)"
      else
        AR_IR_OPS=${AR_IR_OPS:-2000}
        note "ruby: find_info under callgrind, $AR_IR_OPS finds per process, GC off while counted"
        for side in ar72 hark_ar ar72_noop; do
          extra=()
          noop=0
          [ "$side" = hark_ar ] && extra=(-I "$ROOT/bindings/ruby/lib" -r hark/rails)
          [ "$side" = ar72_noop ] && noop=1
          ir_row "$side/find_info@ir" "$AR_IR_OPS" "ActiveRecord 7.2 find_info, instructions per find (callgrind, $AR_IR_OPS finds, GC off)" \
            -C "$OUT_DIR" ONLY=find_info OPS="$AR_IR_OPS" LABEL="$side" NOOP="$noop" CALLGRIND_MARKS="$marks" \
            -- ruby "${ar_inc[@]}" "${extra[@]}" "$ROOT/bench/ar_bench.rb" >>"$OUT_DIR/rows-ar.tsv"
        done
      fi
    fi
    cut -f1,4,5 "$OUT_DIR/rows-ar.tsv" |
      awk -F'\t' '{ printf "%-40s %10.1f %10.1f ns/op (min, median)\n", $1, $2, $3 }'
  fi
fi

# ---- Ruby: the Rails application of examples/rails, in the same run -------------------------------
# The application (a copy under build/bench/rails_app, its database made once) booted in
# production by examples/rails/script/request_cost.rb, one process per side, level and
# round: Rails' own fanout (rails_app/index_<level>), hark loaded from config/boot.rb as
# the binding's README says (hark_app/...), and Rails' fanout with instrument reduced to
# a bare yield (rails_app_noop/...: the request with no notification at all). The index
# page: 50 partials and a collection of 50, at :info and :debug.
#   - thread CPU time per request (the median ~50 ms batch of APP_TIME seconds), rows
#     carrying the min and median of APP_ROUNDS rounds;
#   - instructions per request (@ir rows), the figure the budgets are read on: callgrind
#     counting APP_IR_REQUESTS requests after a warm-up, only them (bench's
#     libhark_callgrind_marks.so switches it on and off), the garbage collector off
#     while they run (objects allocated per request go in the row's note).
APP_CASES="index_info index_debug"
app_only=$(selected_cases "$APP_CASES" rails_app hark_app rails_app_noop)
APP_PKGS="ruby ruby-dev ruby-sqlite3 ruby-concurrent ruby-i18n ruby-tzinfo ruby-connection-pool \
ruby-minitest ruby-rack ruby-rack-test ruby-nokogiri ruby-crass ruby-builder ruby-useragent \
ruby-zeitwerk ruby-thor ruby-webrick"
app_ready() {
  [ -n "$rails72" ] && [ -d "$rails72/railties/lib" ] && command -v ruby >/dev/null 2>&1 &&
    RAILS="$rails72" HARK=0 ruby -e 'load ARGV[0]; require "rails"; require "action_controller/railtie"; require "active_record/railtie"; require "sqlite3"' \
      "$ROOT/examples/rails/config/boot.rb" >/dev/null 2>&1
}
if [ "${RUBY_BENCH:-1}" != 0 ] && [ -n "$app_only" ] && [ -n "$rails72" ]; then
  if ruby_side_ready app_ready "Rails application rows" "$APP_PKGS"; then
    APP_ROUNDS=${APP_ROUNDS:-5}
    APP_TIME=${APP_TIME:-2}
    APP_IR_REQUESTS=${APP_IR_REQUESTS:-40}
    make -C "$ROOT" --no-print-directory ruby >>"$OUT_DIR/ruby-build.log" 2>&1 ||
      note "the Ruby extension does not build: no hark_app rows"
    app="$OUT_DIR/rails_app"
    rm -rf "$app" && cp -r "$ROOT/examples/rails" "$app" && rm -rf "$app"/log/* "$app"/storage/* "$app"/tmp/*
    app_env=(env -C "$app" RAILS="$rails72" HARK_LIB="$ROOT/bindings/ruby/lib")
    if ! "${app_env[@]}" RAILS_ENV=production ruby bin/rails db:prepare >"$OUT_DIR/app-setup.log" 2>&1; then
      tail -5 "$OUT_DIR/app-setup.log"
      note "the Rails application's database could not be made: no application rows"
      app_only=""
    fi
    echo
    [ -n "$app_only" ] &&
      note "ruby: examples/rails, index page, Rails' fanout vs hark vs no notifications, $APP_ROUNDS rounds, APP_TIME=$APP_TIME (thread CPU time)"
    side_row() { case $1 in rails) echo rails_app ;; hark) echo hark_app ;; floor) echo rails_app_noop ;; esac; }
    : >"$OUT_DIR/app-results.tsv"
    for round in $(seq 1 "$APP_ROUNDS"); do
      for c in $app_only; do
        for side in rails hark floor; do
          log="$OUT_DIR/app-$side.log"
          if "${app_env[@]}" SIDE="$side" LEVEL="${c#index_}" TIME="$APP_TIME" \
               ruby script/request_cost.rb >"$log" 2>&1; then
            awk -F'\t' -v r="$round" -v row="$(side_row "$side")" -v c="$c" \
              '$1 == "RESULT" { print row "\t" c "\t" $6 "\tthread CPU\t" r }' "$log" >>"$OUT_DIR/app-results.tsv"
          else
            tail -5 "$log"
            note "application $side/$c failed (round $round)"
          fi
        done
      done
    done
    ruby_rows "$OUT_DIR/app-results.tsv" \
      '"Rails 7.2 application (examples/rails), " (key_side == "hark_app" ? "hark/rails from config/boot.rb" : key_side == "rails_app_noop" ? "instrument = bare yield" : "own fanout") ", thread CPU time per request, " n " rounds"' \
      >"$OUT_DIR/rows-app.tsv"
    if [ -n "$app_only" ] && [ "${APP_IR:-1}" != 0 ]; then
      if ! marks=$(callgrind_marks); then
        note "application @ir rows skipped: needs valgrind and valgrind/callgrind.h (apt-get install valgrind)"
      else
        note "ruby: examples/rails under callgrind, $APP_IR_REQUESTS requests per process, GC off while counted"
        for c in $app_only; do
          for side in rails hark floor; do
            ir_row "$(side_row "$side")/$c@ir" "$APP_IR_REQUESTS" \
              "instructions per request (callgrind, $APP_IR_REQUESTS requests, GC off)" \
              "${app_env[@]:1}" SIDE="$side" LEVEL="${c#index_}" REQUESTS="$APP_IR_REQUESTS" \
              CALLGRIND_MARKS="$marks" -- ruby script/request_cost.rb >>"$OUT_DIR/rows-app.tsv"
          done
        done
      fi
    fi
    # Telemetry against the anchors (examples/rails/script/telemetry.rb): the index page
    # at :info with opentelemetry-ruby (otel_app: Rails' fanout, its SDK, Rails
    # instrumentation and OTLP/HTTP exporter), Hark::OTLP (hark_otlp_app: hark's
    # fanout), both exporting to the node receiver of tests/export/otlp;
    # yabeda-rails over prometheus-client (prom_app: Rails' fanout) and Hark::Metrics
    # (hark_metrics_app: hark's fanout), the same request series. @ir rows as above,
    # each against rails_app/index_info@ir, the floor (Rails' fanout, no telemetry);
    # objects allocated per request in the notes. The anchors' gems at pinned versions,
    # installed by bench/telemetry_gems.sh into the build directory (never over Debian's).
    tel_only=$(selected_cases index_info otel_app hark_otlp_app prom_app hark_metrics_app)
    if [ -n "$tel_only" ] && [ "${APP_IR:-1}" != 0 ] && [ "${TELEMETRY_BENCH:-1}" != 0 ] &&
       [[ " $app_only " == *" index_info "* ]] && [ -n "${marks:-}" ]; then
      receiver_dir="$ROOT/tests/export/otlp"
      if ! tel_path=$(bash "$ROOT/bench/telemetry_gems.sh" "$BUILD_DIR/gems" 2>>"$OUT_DIR/telemetry-gems.log"); then
        note "telemetry rows skipped: the anchors' gems could not be installed (see $OUT_DIR/telemetry-gems.log)"
      elif ! command -v node >/dev/null 2>&1 || ! { [ -d "$receiver_dir/node_modules" ] ||
             (cd "$receiver_dir" && npm ci --no-audit --no-fund >>"$OUT_DIR/telemetry-gems.log" 2>&1); }; then
        note "telemetry rows skipped: node and tests/export/otlp's packages are needed (make node-deps)"
      else
        tel_path=$(echo "$tel_path" | sed 's/-I //g; s/ /:/g')
        node "$receiver_dir/receiver.js" >"$OUT_DIR/telemetry-receiver.out" 2>/dev/null &
        receiver_pid=$!
        for _ in $(seq 1 100); do grep -q '^PORT ' "$OUT_DIR/telemetry-receiver.out" && break; sleep 0.1; done
        receiver_port=$(awk '$1 == "PORT" { print $2 }' "$OUT_DIR/telemetry-receiver.out")
        note "ruby: examples/rails with telemetry under callgrind: opentelemetry-ruby, Hark::OTLP (to the node receiver), yabeda/prometheus-client, Hark::Metrics"
        for side in otel hark_otlp prom hark_metrics; do
          ir_row "${side}_app/index_info@ir" "$APP_IR_REQUESTS" \
            "instructions per request (callgrind, $APP_IR_REQUESTS requests, GC off)" \
            "${app_env[@]:1}" SIDE="$side" LEVEL=info REQUESTS="$APP_IR_REQUESTS" \
            TELEMETRY_LOAD_PATH="$tel_path" OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$receiver_port" \
            CALLGRIND_MARKS="$marks" -- ruby script/request_cost.rb >>"$OUT_DIR/rows-app.tsv"
        done
        kill "$receiver_pid" 2>/dev/null
        wait "$receiver_pid" 2>/dev/null
      fi
    fi
    cut -f1,4,5 "$OUT_DIR/rows-app.tsv" |
      awk -F'\t' '{ printf "%-40s %14.1f %14.1f (min, median)\n", $1, $2, $3 }'
  fi
fi

# ---- report -----------------------------------------------------------------------------------
echo
rows=("$OUT_DIR"/rows-*.tsv)
"$BUILD_DIR/bench/hark_bench_report" --json "$OUT_DIR/results.json" \
  --budgets "$OUT_DIR/budgets.json" "${rows[@]}" | tee "$OUT_DIR/report.txt"
echo
note "wrote $OUT_DIR/results.json and budgets.json in $(( $(date +%s) - START )) s"
