#!/usr/bin/env bash
# The extension's own tests on Ruby 3.3 with Rails 8.1's gems, hark's fanout opted in
# (HARK_RAILS_UNTESTED=1): Rails 8 needs Ruby >= 3.2, which Debian 12 does not package.
#   rails8_ruby33.sh BUILD_DIR        (BUILD_DIR holds libhark.a: make build)
# Ruby 3.3 comes from Debian 13's packages, downloaded (apt-get download, from the mirror
# this machine's apt already uses, with a list of its own under BUILD_DIR: the system's
# package state is not touched) and unpacked under BUILD_DIR/ruby33 with the C library
# and the few libraries it needs from the same release; the interpreter is pointed at them
# with patchelf (Debian 12 runs an older C library). Nothing is compiled but hark's own
# extension. The gems are RubyGems', at the versions pinned below, in BUILD_DIR/ruby33/gems.
# Not part of make ruby-test: the proven Rails stays 7.2 (Rails 8.1's own tests are not in
# its gems), this checks hark's tests against Rails 8.1's real code.
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
top=$build/ruby33
root=$top/root deps=$top/deps apt=$top/apt
arch=x86_64-linux-gnu
gems=(minitest:5.27.0 activesupport:8.1.3 activerecord:8.1.3 sqlite3:2.10.2)

command -v patchelf >/dev/null || { echo "rails8_ruby33.sh: needs patchelf (apt-get install patchelf)" >&2; exit 1; }

if [ ! -x "$root/usr/bin/ruby3.3" ]; then
  rm -rf "$top" && mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs" "$root" "$deps"
  # The mirror apt already uses (its deb822 or one-line list), for the next release.
  uri=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -n 1)
  [ -n "$uri" ] || uri=$(awk '$1 == "deb" && $3 !~ /security/ { print $2; exit }' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null)
  [ -n "$uri" ] || { echo "rails8_ruby33.sh: no Debian mirror found in apt's sources" >&2; exit 1; }
  echo "deb $uri trixie main" >"$apt/sources.list"
  a=(-o Dir::Etc::sourcelist="$apt/sources.list" -o Dir::Etc::sourceparts=/nonexistent
     -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache")
  apt-get "${a[@]}" update >"$apt/update.log" 2>&1 || { cat "$apt/update.log"; exit 1; }
  (cd "$apt/debs" && apt-get "${a[@]}" download ruby3.3 libruby3.3 ruby3.3-dev libc6 libcrypt1 libffi8 \
     libgmp10 libssl3t64 libyaml-0-2 zlib1g libzstd1 >"$apt/download.log" 2>&1) || { cat "$apt/download.log"; exit 1; }
  # Ruby's own files in root (its libdir is what mkmf puts on LD_LIBRARY_PATH: only Ruby's
  # library there, so the host's compiler keeps its own C library), the rest in deps.
  for f in "$apt"/debs/*.deb; do
    case $(basename "$f") in *ruby*) dpkg -x "$f" "$root" ;; *) dpkg -x "$f" "$deps" ;; esac
  done
  rpath=$root/usr/lib/$arch:$deps/usr/lib/$arch:$deps/lib/$arch
  patchelf --set-interpreter "$deps/usr/lib/$arch/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$rpath" \
    "$root/usr/bin/ruby3.3"
  patchelf --force-rpath --set-rpath "$deps/usr/lib/$arch:$deps/lib/$arch" "$root"/usr/lib/$arch/libruby-3.3.so.3.3.*
fi
ruby=$root/usr/bin/ruby3.3
export RUBYLIB=$root/usr/lib/ruby/3.3.0:$root/usr/lib/$arch/ruby/3.3.0
export GEM_HOME=$top/gems GEM_PATH=$top/gems
"$ruby" -e 'abort "not Ruby 3.3" unless RUBY_VERSION.start_with?("3.3")'

for g in "${gems[@]}"; do
  "$ruby" -e 'n, v = ARGV[0].split(":"); exit(Gem::Specification.find_all_by_name(n, v).empty? ? 1 : 0)' "$g" ||
    "$ruby" -S "$root/usr/bin/gem3.3" install --no-document --conservative "$g" >>"$top/gems.log" 2>&1 ||
    { tail -n 20 "$top/gems.log"; exit 1; }
done

# hark's Ruby files and the extension built for this Ruby, apart from the repository's
# (whose extension is Debian 12's Ruby's).
rm -rf "$top/ext" "$top/lib" && mkdir -p "$top/ext" "$top/lib"
cp -r "$here/lib/." "$top/lib/" && rm -f "$top/lib/hark/hark_ext.so"
(cd "$top/ext" && HARK_BUILD_DIR=$build "$ruby" "$here/ext/hark/extconf.rb" \
   --with-ldflags=-Wl,--allow-shlib-undefined >/dev/null && make -s V=0 >/dev/null)
cp "$top/ext/hark_ext.so" "$top/lib/hark/hark_ext.so"

cd "$here/.."
HARK_RAILS_UNTESTED=1 exec "$ruby" -I "$top/lib" -I "$here/test" \
  -e 'gem "minitest", "5.27.0"; ARGV.each { |f| require File.expand_path(f) }' "$here"/test/test_*.rb
