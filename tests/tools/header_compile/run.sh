#!/usr/bin/env bash
# Compiles every public header on its own, and a file that expands the public
# macros, as strict C11 and as C++17 with warnings as errors. Each header must be
# self-contained: it is the first and only include of its translation unit.
#
#   tests/tools/header_compile/run.sh            # uses cc/c++ (or $CC/$CXX), plus clang if present
#
# Exits non-zero at the first header that does not compile.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cflags=(-std=c11 -pedantic -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
        -Wmissing-prototypes -Wformat=2 -Wwrite-strings -Wundef -Wcast-qual -Wvla
        -Wpointer-arith -I"$root/include")
cxxflags=(-std=c++17 -pedantic -Wall -Wextra -Werror -Wshadow -Wundef -Wcast-qual
          -Wpointer-arith -I"$root/include")

compilers_c=("${CC:-cc}")
compilers_cxx=("${CXX:-c++}")
if command -v clang >/dev/null 2>&1 && [ "${compilers_c[0]}" != clang ]; then
  compilers_c+=(clang)
  command -v clang++ >/dev/null 2>&1 && compilers_cxx+=(clang++)
fi

headers=("$root/include/hark.h")
for h in "$root"/include/hark/*.h "$root"/include/hark/sys/*.h; do headers+=("$h"); done

n=0
for h in "${headers[@]}"; do
  rel=${h#"$root/include/"}
  printf '#include <%s>\n#include <%s>\n' "$rel" "$rel" >"$tmp/one.c"   # twice: include guards
  cp "$tmp/one.c" "$tmp/one.cpp"
  for cc in "${compilers_c[@]}"; do
    "$cc" "${cflags[@]}" -fsyntax-only "$tmp/one.c" || { echo "header_compile: $rel fails as C11 with $cc"; exit 1; }
    n=$((n + 1))
  done
  for cxx in "${compilers_cxx[@]}"; do
    "$cxx" "${cxxflags[@]}" -fsyntax-only "$tmp/one.cpp" || { echo "header_compile: $rel fails as C++17 with $cxx"; exit 1; }
    n=$((n + 1))
  done
done

# The C++ header: C++17 only, on its own and twice (include guards).
printf '#include <hark/hark.hpp>\n#include <hark/hark.hpp>\n' >"$tmp/hpp.cpp"
for cxx in "${compilers_cxx[@]}"; do
  "$cxx" "${cxxflags[@]}" -fsyntax-only "$tmp/hpp.cpp" || { echo "header_compile: hark/hark.hpp fails as C++17 with $cxx"; exit 1; }
  n=$((n + 1))
done

# The macros expand into the user's code, so they must be clean there too.
for cc in "${compilers_c[@]}"; do
  "$cc" "${cflags[@]}" -fsyntax-only "$here/macros.c" || { echo "header_compile: macros.c fails with $cc"; exit 1; }
  n=$((n + 1))
done
for cxx in "${compilers_cxx[@]}"; do
  "$cxx" "${cxxflags[@]}" -fsyntax-only -x c++ "$here/macros.c" || { echo "header_compile: macros.c fails as C++ with $cxx"; exit 1; }
  n=$((n + 1))
done
echo "header_compile: ${#headers[@]} headers + macros.c, $n compilations, all clean"
