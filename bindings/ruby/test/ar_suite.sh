#!/usr/bin/env bash
# Runs ActiveRecord 7.2's test files that use notifications (subscribe, assert_queries,
# capture_sql, log subscribers) twice on SQLite -- on Rails' own fanout and with
# hark/rails loaded -- and lists the files whose summaries differ.
#   ar_suite.sh [RAILS72_DIR [TEST_FILE...]]   (default: ../shared/rails-7.2 beside the
#                                               repository, and every such file)
# Slow (about eight minutes on 2 cores); not part of make ruby-test, which runs
# the few files listed in the Makefile's RUBY_AR_TESTS.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/../.." && pwd)
rails=${1:-}
[ $# -gt 0 ] && shift
if [ -z "$rails" ]; then
  for d in "$root/../shared/rails-7.2" "$root/../../shared/rails-7.2"; do
    [ -d "$d/activerecord" ] && rails=$(cd "$d" && pwd) && break
  done
fi
[ -d "$rails/activerecord/test" ] || { echo "no Rails 7.2 tree with activerecord"; exit 1; }
tests=("$@")
if [ "${#tests[@]}" -eq 0 ]; then
  # Files of the other adapters (MySQL, PostgreSQL, Trilogy) do not run on SQLite.
  mapfile -t tests < <(cd "$rails/activerecord" &&
    grep -rlE 'Notifications|assert_queries|assert_no_queries|capture_sql|LogSubscriber|capture_log_output|SQLCounter|subscribe' \
      test/cases --include='*_test.rb' | grep -vE 'adapters/(mysql2|postgresql|trilogy|abstract_mysql)' | sort)
fi
out=$(mktemp)
for t in "${tests[@]}"; do
  for side in rails hark; do
    opts=""
    [ "$side" = hark ] && opts="-I $here/lib -r hark/rails -r $here/test/rails_proof.rb"
    t0=$(date +%s)
    log=$(RAILS_TEST_RUBYOPTS="$opts" timeout 600 "$rails/run-ar-tests.sh" "$t" 2>&1)
    secs=$(( $(date +%s) - t0 ))
    summary=$(grep -E '^[0-9]+ runs,' <<<"$log" | tail -1)
    if [ "$side" = hark ] && [ -n "$summary" ] && ! grep -q '^HARK-PROOF ok' <<<"$log"; then
      summary="$summary (hark's fanout NOT proved)"
    fi
    printf '%s\t%s\t%s\t%s\n' "$t" "$side" "${summary:-does not load}" "$secs" >>"$out"
  done
done
awk -F'\t' '{ s[$1, $2] = $3; f[$1] = 1; secs[$1] += $4; total += $4 }
  END { for (t in f) { n++; if (s[t, "rails"] != s[t, "hark"]) { d++; print "DIFF " t ": " s[t, "rails"] " | hark: " s[t, "hark"] }
                       else print "same " t ": " s[t, "rails"] " (" secs[t] " s both ways)" }
        printf "~ %d files, %d differ, %d s\n", n, d, total }' "$out" | sort
rm -f "$out"
