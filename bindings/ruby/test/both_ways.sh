#!/usr/bin/env bash
# Runs Rails 7.2 test files twice -- on Rails' own fanout and with hark/rails loaded,
# from a private copy of the tree -- and lists the files whose
# summaries differ (every hark run must also prove, through
# rails_proof.rb, that the fanout under test was hark's).
#   both_ways.sh as   [RAILS72_DIR [TEST_FILE...]]  ActiveSupport (run-tests.sh; files
#                     relative to activesupport/; default: every test file)
#   both_ways.sh ar   [RAILS72_DIR [TEST_FILE...]]  ActiveRecord on SQLite (run-ar-tests.sh;
#                     files relative to activerecord/; default: every file that subscribes,
#                     asserts queries or uses log subscribers)
#   both_ways.sh pack [RAILS72_DIR [TEST_FILE...]]  ActionPack, ActionView, railties
#                     (run-pack-tests.sh; files relative to RAILS72_DIR; default: every
#                     test file of the three)
# RAILS72_DIR defaults to ../shared/rails-7.2 beside the repository. Slow (minutes to
# tens of minutes on 2 cores): not part of make ruby-test, which runs a selection.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/../.." && pwd)
suite=${1:-}
[ $# -gt 0 ] && shift
case "$suite" in
  as) runner=run-tests.sh; need=activesupport ;;
  ar) runner=run-ar-tests.sh; need=activerecord ;;
  pack) runner=run-pack-tests.sh; need=actionpack ;;
  *) echo "usage: both_ways.sh as|ar|pack [RAILS72_DIR [TEST_FILE...]]" >&2; exit 2 ;;
esac
rails=${1:-}
[ $# -gt 0 ] && shift
if [ -z "$rails" ]; then
  for d in "$root/../shared/rails-7.2" "$root/../../shared/rails-7.2"; do
    [ -d "$d/$need" ] && rails=$(cd "$d" && pwd) && break
  done
fi
[ -d "$rails/$need/test" ] || { echo "no Rails 7.2 tree with $need"; exit 1; }
tests=("$@")
if [ "${#tests[@]}" -eq 0 ]; then
  if [ "$suite" = as ]; then
    mapfile -t tests < <(cd "$rails/activesupport" && find test -name '*_test.rb' | sort)
  elif [ "$suite" = ar ]; then
    # Files of the other adapters (MySQL, PostgreSQL, Trilogy) do not run on SQLite.
    mapfile -t tests < <(cd "$rails/activerecord" &&
      grep -rlE 'Notifications|assert_queries|assert_no_queries|capture_sql|LogSubscriber|capture_log_output|SQLCounter|subscribe' \
        test/cases --include='*_test.rb' | grep -vE 'adapters/(mysql2|postgresql|trilogy|abstract_mysql)' | sort)
  else
    mapfile -t tests < <(cd "$rails" && find actionpack/test actionview/test railties/test -name '*_test.rb' | sort)
  fi
fi
. "$here/test/copy_rails.sh"
copy=$(mktemp -d "${TMPDIR:-/tmp}/hark-rails.XXXXXX") && trap 'rm -rf "$copy"' EXIT &&
  copy_rails "$rails" "$copy" && rails=$copy || exit 1
out=$(mktemp)
for t in "${tests[@]}"; do
  for side in rails hark; do
    opts=""
    [ "$side" = hark ] && opts="-I $here/lib -r hark/rails -r $here/test/rails_proof.rb"
    t0=$(date +%s)
    log=$(RAILS_TEST_RUBYOPTS="$opts" timeout 600 "$rails/$runner" "$t" 2>&1 </dev/null)
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
