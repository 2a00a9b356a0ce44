#!/usr/bin/env python3
"""libhark's private symbol set (src/util/private.h), checked on the built libraries.

- every function named in src/util/private.map is exported by libhark.so, versioned
  HARK_PRIVATE_0; every exported hark__ symbol not in a public header is too;
- no symbol of the map is declared in a public header;
- every hark__ symbol libhark-export.so (and libhark-lttng.so) takes from libhark
  is bound to HARK_PRIVATE_0 or is public, and each defines none of util's own.
Usage: private_symbols.py SRC_DIR LIBHARK [OTHER_LIB...]
"""
import pathlib
import re
import subprocess
import sys


def dyn_syms(lib):
    out = subprocess.run(["readelf", "--dyn-syms", "-W", lib], check=True,
                         capture_output=True, text=True).stdout
    syms = []
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[0].endswith(":") and f[3] in ("FUNC", "OBJECT"):
            name, _, version = f[7].partition("@")
            syms.append((name, version.lstrip("@"), f[6] != "UND"))
    return syms


def main():
    src, libhark, others = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
    text = (src / "src/util/private.map").read_text()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    private = set(re.findall(r"\b(hark__\w+);", text))
    public_text = "".join(p.read_text() for p in (src / "include").rglob("*.h"))
    public = set(re.findall(r"\b(hark__\w+)\b", public_text))
    bad = []
    for name in sorted(private & public):
        bad.append(f"{name}: in a public header and in the private set")
    exported = {n: v for n, v, d in dyn_syms(libhark) if d}
    for name in sorted(private):
        if exported.get(name) != "HARK_PRIVATE_0":
            bad.append(f"{name}: not exported from libhark as HARK_PRIVATE_0 "
                       f"({exported.get(name)!r})")
    for name, version in sorted(exported.items()):
        if name.startswith("hark__") and name not in public and name not in private:
            bad.append(f"{name}: exported from libhark, neither public nor in private.map")
    for lib in others:
        for name, version, defined in dyn_syms(lib):
            if not name.startswith("hark__"):
                continue
            if defined and name in private:
                bad.append(f"{lib}: defines its own {name}")
            if not defined and name not in public and version != "HARK_PRIVATE_0":
                bad.append(f"{lib}: {name} not bound to HARK_PRIVATE_0 ({version!r})")
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
