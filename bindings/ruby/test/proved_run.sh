#!/usr/bin/env bash
# Runs one of Rails 7.2's test runners (../shared/rails-7.2/run-*.sh, one process per
# test file, each starting with "== FILE") from a private copy of its tree, with
# hark/rails and rails_proof.rb loaded; writes its output to LOG and prints it, and fails
# unless the runner passed and every file's run ended by proving that the fanout under
# test was hark's.
#   proved_run.sh LABEL LOG RUNNER [TEST_FILE...]
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
label=$1 log=$2 runner=$3
shift 3
t0=$(date +%s)
. "$here/test/copy_rails.sh"
rails=$(mktemp -d "${TMPDIR:-/tmp}/hark-rails.XXXXXX") && trap 'rm -rf "$rails"' EXIT &&
  copy_rails "$(dirname "$runner")" "$rails" || exit 1
runner="$rails/$(basename "$runner")"
RAILS_TEST_RUBYOPTS="-I $here/lib -r hark/rails -r $here/test/rails_proof.rb" "$runner" "$@" >"$log" 2>&1 </dev/null
rc=$?
cat "$log"
files=$(grep -c '^== ' "$log")
proofs=$(grep -c '^HARK-PROOF ok' "$log")
echo "ruby-test: $label: exit $rc, $proofs of $files files proved hark's fanout, $(( $(date +%s) - t0 )) s"
[ "$rc" = 0 ] && [ "$files" -gt 0 ] && [ "$proofs" = "$files" ]
