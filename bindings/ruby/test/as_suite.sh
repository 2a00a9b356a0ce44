#!/usr/bin/env bash
# Runs every test file of Rails 7.2's activesupport twice -- on Rails' own fanout and
# with hark/rails loaded -- and lists the files whose summaries differ.
#   as_suite.sh [RAILS72_DIR]     (default: ../shared/rails-7.2 beside the repository)
# Slow (a few minutes); not part of make ruby-test.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/../.." && pwd)
rails=${1:-}
if [ -z "$rails" ]; then
  for d in "$root/../shared/rails-7.2" "$root/../../shared/rails-7.2"; do
    [ -d "$d/activesupport" ] && rails=$(cd "$d" && pwd) && break
  done
fi
[ -d "$rails/activesupport" ] || { echo "no Rails 7.2 tree"; exit 1; }
out=$(mktemp)
cd "$rails/activesupport"
for t in $(find test -name '*_test.rb' | sort); do
  for side in rails hark; do
    extra=()
    [ "$side" = hark ] && extra=(-I "$here/lib" -r hark/rails)
    summary=$(timeout 300 ruby -I "$rails/shim" -I lib -I test "${extra[@]}" "$t" 2>&1 |
              grep -E '^[0-9]+ runs,' | tail -1)
    printf '%s\t%s\t%s\n' "$t" "$side" "${summary:-does not load}" >>"$out"
  done
done
awk -F'\t' '{ s[$1, $2] = $3; f[$1] = 1 }
  END { for (t in f) { n++; if (s[t, "rails"] != s[t, "hark"]) { d++; print "DIFF " t ": " s[t, "rails"] " | hark: " s[t, "hark"] } }
        printf "%d files, %d differ\n", n, d }' "$out"
rm -f "$out"
