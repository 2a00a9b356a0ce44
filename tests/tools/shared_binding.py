#!/usr/bin/env python3
"""hark's shared libraries call their own functions directly and read their
thread-locals without a call (CMakeLists.txt, HARK_SO_LINK_OPTIONS; src/util/tls.h).

For each library given:
- no PLT slot (a JUMP_SLOT relocation) names a function the library defines itself:
  calls between its own functions are bound at link time, not through the PLT;
- no reference to __tls_get_addr: every thread-local is declared with HARK__TLS
  (initial-exec), none left in the default model.
Usage: shared_binding.py LIB...
"""
import subprocess
import sys


def readelf(*args):
    return subprocess.run(["readelf", "-W", *args], check=True, capture_output=True,
                          text=True).stdout


def defined_functions(lib):
    names = set()
    for line in readelf("--dyn-syms", lib).splitlines():
        f = line.split()
        if len(f) >= 8 and f[0].endswith(":") and f[3] == "FUNC" and f[6] != "UND":
            names.add(f[7].split("@")[0])
    return names


def plt_symbols(lib):
    names = []
    for line in readelf("-r", lib).splitlines():
        f = line.split()
        if len(f) >= 5 and "JUMP_SLO" in f[2]:  # readelf cuts the name to R_X86_64_JUMP_SLO
            names.append(f[4].split("@")[0])
    return names


def main():
    libs = sys.argv[1:]
    if not libs:
        print(__doc__)
        return 2
    bad = []
    for lib in libs:
        own = defined_functions(lib)
        if not own:
            bad.append(f"{lib}: no functions found (not a shared library?)")
        for name in plt_symbols(lib):
            if name in own:
                bad.append(f"{lib}: calls its own {name} through the PLT")
        if "__tls_get_addr" in readelf("--dyn-syms", lib):
            bad.append(f"{lib}: calls __tls_get_addr (a thread-local without HARK__TLS)")
    for b in bad:
        print(b)
    if not bad:
        print(f"{len(libs)} libraries: no PLT slot for their own functions, no __tls_get_addr")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
