#!/usr/bin/env bash
# The gem on its own (make ruby-test runs this):
#   gem_check.sh [RAILS72_DIR]
# 1. `gem build bindings/ruby/hark.gemspec`, with no warning; the gem must carry hark's
#    C sources.
# 2. `gem install` of it into a temporary GEM_HOME, from outside the repository, with no
#    HARK_BUILD_DIR: the extension is compiled from the gem's own files (nothing of the
#    repository's build is used), the flight recorder (Hark::Recorder) included.
# 3. extconf.rb of the unpacked gem still finds PCRE2 when pkg-config is not there.
# 4. Rails 7.2's notification, subscriber and log subscriber tests (the 78) and
#    ActiveRecord's log subscriber and instrumentation tests, with `-r hark/rails`
#    resolved through the installed gem and no repository path on the load path; each
#    run must prove that the fanout was hark's, loaded from the gem.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/../.." && pwd)
rails=${1:-}
if [ -z "$rails" ]; then
  for d in "$root/../shared/rails-7.2" "$root/../../shared/rails-7.2"; do
    [ -d "$d/activesupport" ] && rails=$(cd "$d" && pwd) && break
  done
fi
[ -d "$rails/activesupport" ] || { echo "gem_check: no Rails 7.2 tree"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hark-gem.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# hark's version, as the gemspec reads it (include/hark/version.h).
version=$(sed -n 's/^#define HARK_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' "$root/include/hark/version.h" |
  paste -sd.)
gem_file="$here/hark-$version.gem"

echo "gem_check: gem build bindings/ruby/hark.gemspec"
rm -f "$gem_file"
(cd "$root" && gem build bindings/ruby/hark.gemspec >"$tmp/build.log" 2>&1) || { cat "$tmp/build.log"; exit 1; }
# A licence, a homepage and bounded dependencies: gem build has nothing to warn about.
if grep -q 'WARNING' "$tmp/build.log"; then cat "$tmp/build.log"; echo "gem_check: gem build warned"; exit 1; fi
mv "$gem_file" "$tmp/"
gem_file="$tmp/hark-$version.gem"
contents=$(tar -xOf "$gem_file" data.tar.gz | tar -tz)
for f in ext/hark/extconf.rb ext/hark/libhark/include/hark.h ext/hark/libhark/src/core/notifier.c \
         ext/hark/libhark/src/util/alloc.c ext/hark/libhark/src/subscriber/log_subscriber.c lib/hark/rails.rb \
         ext/hark/libhark/src/export/recorder/record.c ext/hark/libhark/src/export/attach.c lib/hark/recorder.rb; do
  grep -qx "$f" <<<"$contents" || { echo "gem_check: the gem lacks $f"; exit 1; }
done
echo "gem_check: $(wc -l <<<"$contents") files, $(grep -c '^ext/hark/libhark/src/.*\.c$' <<<"$contents") of them hark's C sources"

# The default gem path (Debian's gems: minitest, concurrent-ruby, ...) stays reachable.
default_path=$(cd "$tmp" && env -u GEM_HOME -u GEM_PATH ruby -e 'print Gem.path.join(":")')
export GEM_HOME="$tmp/gems" GEM_PATH="$tmp/gems:$default_path"
echo "gem_check: gem install into $GEM_HOME"
(cd "$tmp" && env -u HARK_BUILD_DIR -u RUBYLIB -u RUBYOPT gem install --local --no-document "$gem_file" \
   >"$tmp/install.log" 2>&1) || { cat "$tmp/install.log"; cat "$GEM_HOME"/extensions/*/*/hark-*/gem_make.out 2>/dev/null | tail -40; exit 1; }
installed=$(ls -d "$GEM_HOME"/gems/hark-"$version")
grep -q 'libhark_core_notifier' "$GEM_HOME"/extensions/*/*/hark-"$version"/gem_make.out ||
  { echo "gem_check: the extension was not built from the gem's library sources"; exit 1; }
# The flight recorder comes with it (Hark::Recorder, from the gem's export sources).
grep -q 'libhark_export_recorder_record' "$GEM_HOME"/extensions/*/*/hark-"$version"/gem_make.out &&
  (cd "$tmp" && env -u RUBYLIB -u RUBYOPT ruby -e 'require "hark"; exit(Hark::Recorder::NATIVE ? 0 : 1)') ||
  { echo "gem_check: the gem's extension has no flight recorder"; exit 1; }

echo "gem_check: extconf.rb without pkg-config"
mkdir "$tmp/nopc"
cp -r "$installed/ext" "$tmp/nopc/"
(cd "$tmp/nopc/ext/hark" && env -u HARK_BUILD_DIR ruby extconf.rb --with-pkg-config=/nonexistent/pkg-config \
   >"$tmp/nopc.log" 2>&1 && grep -q -- '-lpcre2-8' Makefile) ||
  { cat "$tmp/nopc.log"; echo "gem_check: PCRE2 not found without pkg-config"; exit 1; }

. "$here/test/copy_rails.sh"
mkdir "$tmp/rails" && copy_rails "$rails" "$tmp/rails" || exit 1
rails=$tmp/rails
cp "$here/test/rails_proof.rb" "$tmp/rails_proof.rb"
export RAILS_TEST_RUBYOPTS="-r hark/rails -r $tmp/rails_proof.rb"
export HARK_PROOF_FROM="$installed" HARK_PROOF_NOT_IN="$root"
rc=0
(cd "$tmp" && "$rails/run-tests.sh") >"$tmp/as.log" 2>&1 || rc=1
(cd "$tmp" && "$rails/run-ar-tests.sh") >"$tmp/ar.log" 2>&1 || rc=1
cat "$tmp/as.log" "$tmp/ar.log"
as_proofs=$(grep -c '^HARK-PROOF ok' "$tmp/as.log" || true)
ar_proofs=$(grep -c '^HARK-PROOF ok' "$tmp/ar.log" || true)
as_runs=$(awk '/^[0-9]+ runs,/ { n += $1 } END { print n + 0 }' "$tmp/as.log")
echo "gem_check: through the installed gem: Rails' tests exit $rc, $as_runs ActiveSupport tests," \
     "$as_proofs of 5 and $ar_proofs of 2 runs proved hark's fanout from $installed"
[ "$rc" = 0 ] && [ "$as_proofs" = 5 ] && [ "$ar_proofs" = 2 ]
