#!/usr/bin/env python3
"""Symbol versions and SONAMEs of hark's shared libraries, checked on the built files
(docs/abi.md).

For each library and the version scripts it is linked with:
- its SONAME is lib<name>.so.<major>, the major of include/hark/version.h;
- every hark symbol it exports carries a node of its scripts: a function added without
  being listed is reported with the line to add and where;
- every name a public node lists is exported, in that node (the linker ignores a
  listed name that does not exist, e.g. one renamed);
- the public nodes are HARK_<major>.<minor> of this major, none newer than the
  version, each inheriting the one before it.
Usage: symbol_versions.py SRC_DIR LIB=MAP[,MAP...] [LIB=MAP...]   (MAPs relative to
SRC_DIR; the first is the library's public script)
"""
import pathlib
import re
import subprocess
import sys

NODE = re.compile(r"([A-Z][A-Z0-9_]*(?:\.[0-9]+)*)\s*\{(.*?)\}\s*([A-Z][A-Z0-9_.]*)?\s*;", re.S)
PUBLIC_NODE = re.compile(r"HARK_([0-9]+)\.([0-9]+)$")


def version(src):
    text = (src / "include/hark/version.h").read_text()
    parts = [re.search(rf"^#define HARK_VERSION_{p} +([0-9]+)$", text, re.M) for p in
             ("MAJOR", "MINOR", "PATCH")]
    return tuple(int(m.group(1)) for m in parts)


def read_map(path):
    """[(node, names, parent)] in the order written."""
    text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)
    nodes = []
    for m in NODE.finditer(text):
        body = re.sub(r"\b(global|local)\s*:", "", m.group(2))
        names = [n.strip() for n in body.split(";") if n.strip()]
        nodes.append((m.group(1), names, m.group(3)))
    return nodes


def dyn_syms(lib):
    out = subprocess.run(["readelf", "--dyn-syms", "-W", lib], check=True,
                         capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[0].endswith(":") and f[3] in ("FUNC", "OBJECT") and f[6] != "UND":
            name, _, ver = f[7].partition("@")
            syms[name] = ver.lstrip("@")
    return syms


def soname(lib):
    out = subprocess.run(["readelf", "-d", "-W", lib], check=True, capture_output=True,
                         text=True).stdout
    m = re.search(r"\(SONAME\)\s+Library soname: \[(.*)\]", out)
    return m.group(1) if m else None


def check(src, lib, maps, ver):
    bad = []
    major, minor, _ = ver
    libname = pathlib.Path(lib).name
    base = libname.split(".so")[0]
    want = f"{base}.so.{major}"
    if soname(lib) != want:
        bad.append(f"{libname}: SONAME {soname(lib)!r}, expected {want!r} (the major of "
                   f"include/hark/version.h)")
    public_map = maps[0]
    nodes = []
    for m in maps:
        nodes += [(n, names, parent, m) for n, names, parent in read_map(src / m)]
    known = {n for n, _, _, _ in nodes}
    public = [(n, names, parent) for n, names, parent, m in nodes if m == public_map]
    release_node = f"HARK_{major}.{minor}"

    # The public nodes: this major's, none newer than the version, a chain.
    previous = None
    for n, _, parent in public:
        m = PUBLIC_NODE.match(n)
        if not m:
            bad.append(f"{public_map}: node {n}: a public node is named HARK_<major>.<minor>")
        elif int(m.group(1)) != major or int(m.group(2)) > minor:
            bad.append(f"{public_map}: node {n} does not belong to version "
                       f"{major}.{minor}: new symbols go into {release_node}; a new major "
                       f"version starts again from HARK_{major}.0 (docs/abi.md)")
        if parent != previous:
            bad.append(f"{public_map}: node {n} should inherit {previous or 'nothing'} "
                       f"(`{n} {{ ... }} {previous};`), not {parent}")
        previous = n

    exported = dyn_syms(lib)
    for name in sorted(exported):
        if not name.startswith("hark"):
            continue
        if exported[name] not in known:
            where = (f"node {release_node}" if release_node in known else
                     f"a new node `{release_node} {{ global: ...; }} {previous};` at its end")
            bad.append(f"{libname}: exports {name} in no version node of its scripts: add "
                       f"`{name};` to {public_map}, {where} (the release that adds it; "
                       f"docs/abi.md)")
    for n, names, _ in public:
        for name in names:
            if "*" in name or "?" in name:
                bad.append(f"{public_map}: node {n}: {name}: list names, not patterns "
                           f"(docs/abi.md)")
            elif name not in exported:
                bad.append(f"{public_map}: node {n} lists {name}, which {libname} does not "
                           f"export (renamed or removed? within a major version a name "
                           f"stays: docs/abi.md)")
            elif exported[name] != n:
                bad.append(f"{libname}: {name} is in {exported[name]}, the script says {n}")
    return bad


def main():
    src = pathlib.Path(sys.argv[1])
    ver = version(src)
    bad = []
    for arg in sys.argv[2:]:
        lib, _, maps = arg.partition("=")
        bad += check(src, lib, maps.split(","), ver)
    for b in bad:
        print(b)
    if not bad:
        print(f"symbol versions: {len(sys.argv) - 2} libraries, every hark symbol versioned")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
