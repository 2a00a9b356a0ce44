#!/usr/bin/env bash
# The Debian packages (debian/), built and used as a user of them would:
#
#   1. the tracked files copied into WORK/hark-VERSION (nothing of the checkout's own
#      build trees), and `dpkg-buildpackage -us -uc -b` run there: the libraries
#      alone, parallel=JOBS; dpkg-gensymbols fails the build on a symbol that is
#      missing from the libraries, or missing from debian/*.symbols (check level 4);
#   2. the package version's upstream part is hark's version (include/hark/version.h),
#      and the symbols check is shown to bite: a symbols file listing a symbol the
#      library lacks, or lacking one it has, fails dpkg-gensymbols;
#   3. lintian on the packages: no error (the warnings it prints are listed in
#      debian/README.source, each with why it stays);
#   4. every .deb unpacked with `dpkg -x` into a fresh root, nothing installed on the
#      machine; each library package holds its library and nothing else;
#   5. examples/quickstart.c (libhark) and examples/recorder.c (libhark-export)
#      compiled against that root through pkg-config and through CMake's
#      find_package(hark), and run.
#
#   tests/tools/deb_check.sh WORK [JOBS]
# Needs dpkg-dev, debhelper, lintian and the Build-Depends of debian/control (the
# Makefile's CHECK_PKGS).
set -uo pipefail
work=${1:?usage: deb_check.sh WORK [JOBS]}
jobs=${2:-2}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
fail() { echo "deb: $*"; exit 1; }
# WORK made absolute (relative to the tree), as the paths pkg-config and CMake give back are.
case $work in /*) ;; *) work="$root/$work" ;; esac

for tool in dpkg-buildpackage dh lintian pkg-config cmake; do
  command -v "$tool" >/dev/null || fail "$tool is missing (make check installs CHECK_PKGS)"
done
version=$(sed -n 's/^#define HARK_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' include/hark/version.h |
          paste -sd.)
deb_version=$(dpkg-parsechangelog -l debian/changelog -S Version)
[ "${deb_version%-*}" = "$version" ] ||
  fail "debian/changelog says $deb_version, include/hark/version.h $version: add a changelog entry"

# 1. The source tree: tracked files only, as a release tarball holds them.
rm -rf "$work"
src="$work/hark-$version"
mkdir -p "$src"
git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$src" || fail "cannot copy the tracked files"
echo "deb: dpkg-buildpackage -us -uc -b in $src (log: $work/build.log)"
(cd "$src" && DEB_BUILD_OPTIONS="parallel=$jobs" dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1 ||
  { tail -n 80 "$work/build.log"; fail "dpkg-buildpackage failed (the symbols are checked there: see above)"; }
changes=$(ls "$work"/hark_*.changes) || fail "no .changes written"
debs=("$work"/*.deb)

# 2. The symbols check bites: a symbol the library lost, and one it gained that the
# symbols file does not list, each fail dpkg-gensymbols as the build runs it.
gensymbols() { # template file
  (cd "$src" && dpkg-gensymbols -plibhark1 -Pdebian/libhark1 -v"$deb_version" -I"$1" \
    -O/dev/null -c4) >"$work/gensymbols.log" 2>&1
}
gensymbols debian/libhark1.symbols || { cat "$work/gensymbols.log"; fail "the symbols file does not match"; }
cp "$src/debian/libhark1.symbols" "$work/lost.symbols"
echo " hark_lost_function@HARK_1.0 1.0.0" >>"$work/lost.symbols"
! gensymbols "$work/lost.symbols" || fail "dpkg-gensymbols passed a symbol missing from libhark"
grep -v ' hark_version_string@' "$src/debian/libhark1.symbols" >"$work/gained.symbols"
! gensymbols "$work/gained.symbols" || fail "dpkg-gensymbols passed a symbol its file does not list"
echo "deb: dpkg-gensymbols fails on a symbol lost and on one not listed"

# 3. lintian: errors fail; warnings are printed (and listed in debian/README.source).
lintian --fail-on error --suppress-tags-from-file /dev/null "$changes" >"$work/lintian.log" 2>&1
lintian_status=$?
cat "$work/lintian.log"
[ "$lintian_status" = 0 ] || fail "lintian reports errors (above)"

# 4. Unpacked, not installed.
dest="$work/root"
mkdir -p "$dest"
for deb in "${debs[@]}"; do
  dpkg -x "$deb" "$dest" || fail "dpkg -x $deb failed"
done
for lib in libhark libhark-export libhark-lttng; do
  pkg=$(ls "$work/${lib}1_"*.deb) || fail "no ${lib}1 package"
  files=$(dpkg-deb -c "$pkg" | awk '{ print $6 }' | grep -v '/$' | grep -v '^./usr/share/doc/')
  grep -q "/$lib\.so\.1$" <<<"$files" || fail "${lib}1 has no $lib.so.1"
  other=$(echo "$files" | grep -v "/$lib\.so\.1\(\.[0-9.]*\)\?$")
  [ -z "$other" ] || fail "${lib}1 holds more than its library: $other"
done
libdir=$(dirname "$(find "$dest" -name hark.pc)")/..
libdir=$(cd "$libdir" && pwd)
export PKG_CONFIG_PATH="$libdir/pkgconfig"
pkg-config --exists hark hark-export hark-lttng || fail "pkg-config does not find the unpacked modules"
includedir=$(pkg-config --variable=includedir hark)
[ "$(cd "$includedir" 2>/dev/null && pwd)" = "$dest/usr/include" ] ||
  fail "hark.pc's includedir is $includedir, not $dest/usr/include (is the .pc relocatable?)"

# 5. The programs, through pkg-config and through find_package, run against the
# unpacked libraries (an rpath: nothing is installed where the loader looks).
out="$work/programs"
mkdir -p "$out"
runs() { # pattern, program, arguments...
  local pattern=$1 said; shift
  said=$("$@") || { echo "$said"; return 1; }
  grep -q -- "$pattern" <<<"$said" || { echo "$said"; return 1; }
}
# shellcheck disable=SC2046 # pkg-config's words are meant to split
cc examples/quickstart.c $(pkg-config --cflags --libs hark) -Wl,-rpath,"$libdir" -o "$out/quickstart-pc" &&
  runs "^sql.db (" "$out/quickstart-pc" || fail "quickstart.c through pkg-config hark"
# shellcheck disable=SC2046
cc examples/recorder.c $(pkg-config --cflags --libs hark-export) -Wl,-rpath,"$libdir" \
  -o "$out/recorder-pc" &&
  runs "^recorded 100 events" "$out/recorder-pc" "$out/recorder-pc.json" ||
  fail "recorder.c through pkg-config hark-export"
python3 - "$out/recorder-pc.json" <<'PY' || fail "the recorder's dump is not the Chrome trace it should be"
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
sql = [e for e in events if e.get("name") == "sql.db"]
assert len(sql) == 100, len(sql)
assert any("exception" in e.get("args", {}) for e in sql), "the failed event has no exception"
PY
# Both loaded from the unpacked root, not from anywhere else on the machine.
# (ldd's output read whole first: under pipefail, `ldd | grep -q` fails when grep stops
# reading before ldd has finished writing.)
loads=$(ldd "$out/recorder-pc")
grep -q "libhark-export.so.1 => $libdir/" <<<"$loads" ||
  fail "recorder-pc does not load the unpacked libhark-export: $loads"
consumer="$out/consumer"
mkdir -p "$consumer"
printf '%s\n' 'cmake_minimum_required(VERSION 3.20)' 'project(consumer C)' \
  'find_package(hark 1.0 REQUIRED)' \
  "add_executable(quickstart $root/examples/quickstart.c)" \
  'target_link_libraries(quickstart PRIVATE hark::hark)' \
  "add_executable(recorder $root/examples/recorder.c)" \
  'target_link_libraries(recorder PRIVATE hark::export)' >"$consumer/CMakeLists.txt"
cmake -S "$consumer" -B "$consumer/build" -DCMAKE_PREFIX_PATH="$dest/usr" \
  -DCMAKE_BUILD_RPATH="$libdir" >"$consumer/cmake.log" 2>&1 &&
  cmake --build "$consumer/build" >>"$consumer/cmake.log" 2>&1 ||
  { cat "$consumer/cmake.log"; fail "find_package(hark) against the unpacked packages"; }
runs "^sql.db (" "$consumer/build/quickstart" || fail "quickstart through find_package(hark)"
runs "^recorded 100 events" "$consumer/build/recorder" "$out/recorder-cmake.json" ||
  fail "recorder through find_package(hark) hark::export"
echo "deb: ${#debs[@]} packages built ($(cd "$work" && ls ./*.deb | sed 's|^\./||' | paste -sd' ')),"
echo "deb: symbols checked, lintian without errors, quickstart and recorder built against them"
echo "deb: (dpkg -x) through pkg-config and find_package(hark), and run"
