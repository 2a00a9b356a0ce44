#!/usr/bin/env bash
# The Ruby extension's own tests as one CTest (make test), so that a change to hark's
# public API that breaks the extension fails the fast tier:
#   ctest.sh BUILD_DIR     (BUILD_DIR holds libhark.a)
# Exits 77 (skipped) when Ruby's headers are not installed. The Rails-dependent tests
# run when Rails 7.2's activesupport (and activerecord) is found beside the repository.
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/../.." && pwd)
if ! command -v ruby >/dev/null || ! ruby -rmkmf -e 'exit(File.exist?(File.join(RbConfig::CONFIG["rubyhdrdir"], "ruby.h")) ? 0 : 1)' 2>/dev/null; then
  echo "ruby or ruby-dev not installed: skipped"
  exit 77
fi
out=$build/ruby-ctest
mkdir -p "$out/lib/hark"
(cd "$out" && HARK_BUILD_DIR=$build ruby "$here/ext/hark/extconf.rb" >/dev/null && make -s V=0 >/dev/null)
cp "$out/hark_ext.so" "$out/lib/hark/hark_ext.so"
inc=()
for d in "$root/../shared/rails-7.2" "$root/../../shared/rails-7.2"; do
  if [ -d "$d/activesupport/lib" ]; then
    inc=(-I "$d/activesupport/lib")
    # ActiveRecord too, for test_active_record.rb (skipped without the sqlite3 gem).
    [ -d "$d/activerecord/lib" ] && inc+=(-I "$d/activemodel/lib" -I "$d/activerecord/lib")
    break
  fi
done
HARK_RUBY_QUICK=1 exec ruby -I "$out/lib" -I "$here/lib" "${inc[@]}" -e 'ARGV.each { |f| require File.expand_path(f) }' \
  "$here"/test/test_*.rb
