#!/usr/bin/env bash
# `make check`: the slow tiers of the test suite. Each tier builds in its own
# directory and prints one summary line; the script fails if any tier failed.
#
#   werror    -Werror build (with the gcc fuzz replay drivers) + unit tests
#   stress    the concurrency stress and churn tests, full size, plain build
#   asan      ASan+UBSan build (clang) of the whole suite, corpus replays included
#   tsan      ThreadSanitizer build of the whole suite
#   valgrind  memcheck on every test binary of the -Werror build, leaks are errors
#   fuzz      the committed fuzz corpora replayed through the gcc drivers
#   headers   every public header as strict C11 and C++17, -Werror
#
# Environment: JOBS (default nproc), CHECK_TIERS (space-separated subset to run),
# CHECK_BUILD_PREFIX (default build-check), HARK_TEST_SCALE (multiplier for the
# iteration counts of the stress and churn tests; the slow tiers lower it).
set -uo pipefail

cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
PREFIX=${CHECK_BUILD_PREFIX:-build-check}
TIERS=${CHECK_TIERS:-"werror stress asan tsan valgrind fuzz headers"}
SLOW_TESTS='^test_(stress|churn)$'
common=(-DHARK_BUILD_BENCH=OFF -DHARK_BUILD_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo)

summary=()
failed=0

configure_and_build() { # dir, cmake args...
  local dir=$1; shift
  cmake -S . -B "$dir" "${common[@]}" "$@" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; return 1; }
  cmake --build "$dir" -j "$JOBS"
}

ctest_in() { # dir, ctest args...
  local dir=$1; shift
  (cd "$dir" && ctest --output-on-failure -j "$JOBS" "$@")
}

tier_werror() {
  configure_and_build "$PREFIX-werror" -DHARK_WERROR=ON -DHARK_BUILD_FUZZ=ON &&
    ctest_in "$PREFIX-werror" -E "$SLOW_TESTS|^fuzz_"
}

tier_stress() {
  [ -d "$PREFIX-werror" ] || configure_and_build "$PREFIX-werror" -DHARK_WERROR=ON -DHARK_BUILD_FUZZ=ON || return 1
  cmake --build "$PREFIX-werror" -j "$JOBS" && ctest_in "$PREFIX-werror" -j 1 -R "$SLOW_TESTS"
}

tier_asan() {
  # Built with clang: gcc 12's UBSan null check on the address of an initial-exec
  # TLS variable branches on flags that the linker's IE->LE relaxation (add -> lea)
  # no longer sets, and reports a null pointer that is not there. Clang's check does
  # not have this problem; gcc still builds every other tier.
  local cc=clang
  command -v clang >/dev/null 2>&1 || cc=${CC:-cc}
  CC=$cc configure_and_build "$PREFIX-asan" -DHARK_SANITIZE=address,undefined -DHARK_BUILD_FUZZ=ON &&
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    HARK_TEST_SCALE=${HARK_TEST_SCALE:-0.25} ctest_in "$PREFIX-asan"
}

tier_tsan() {
  # setarch -R: TSan in gcc 12 cannot map its shadow with a high-entropy ASLR layout.
  local run=()
  setarch "$(uname -m)" -R true 2>/dev/null && run=(setarch "$(uname -m)" -R)
  configure_and_build "$PREFIX-tsan" -DHARK_SANITIZE=thread &&
    (cd "$PREFIX-tsan" && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
      HARK_TEST_SCALE=${HARK_TEST_SCALE:-0.1} "${run[@]}" ctest --output-on-failure -j "$JOBS")
}

tier_valgrind() {
  [ -d "$PREFIX-werror" ] || configure_and_build "$PREFIX-werror" -DHARK_WERROR=ON -DHARK_BUILD_FUZZ=ON || return 1
  local t rc=0 n=0
  for t in "$PREFIX-werror"/tests/test_*; do
    [ -x "$t" ] && [ -f "$t" ] || continue
    n=$((n + 1))
    echo "valgrind: $(basename "$t")"
    HARK_TEST_SCALE=${HARK_TEST_SCALE:-0.02} valgrind -q --error-exitcode=99 --leak-check=full \
      --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible \
      --track-origins=yes --fair-sched=yes "$t" >"$t.valgrind.log" 2>&1 ||
      { rc=1; echo "valgrind: $(basename "$t") FAILED"; cat "$t.valgrind.log"; }
  done
  [ "$n" -gt 0 ] || { echo "valgrind: no test binaries found"; return 1; }
  return $rc
}

tier_fuzz() {
  [ -d "$PREFIX-werror" ] || configure_and_build "$PREFIX-werror" -DHARK_WERROR=ON -DHARK_BUILD_FUZZ=ON || return 1
  local n
  n=$(cd "$PREFIX-werror" && ctest -N -R '^fuzz_' | grep -c 'Test *#') || true
  [ "${n:-0}" -gt 0 ] || { echo "fuzz: no replay tests registered"; return 1; }
  ctest_in "$PREFIX-werror" -R '^fuzz_'
}

tier_headers() {
  bash tests/header_compile/run.sh
}

for tier in $TIERS; do
  echo
  echo "=================== check: $tier ==================="
  t0=$(date +%s)
  if "tier_$tier"; then status=PASS; else status=FAIL; failed=1; fi
  secs=$(( $(date +%s) - t0 ))
  line=$(printf 'check: %-9s %s  (%d s)' "$tier" "$status" "$secs")
  echo "$line"
  summary+=("$line")
done

echo
echo "=================== check: summary ==================="
printf '%s\n' "${summary[@]}"
if [ "$failed" -ne 0 ]; then echo "check: FAILED"; exit 1; fi
echo "check: all tiers passed"
