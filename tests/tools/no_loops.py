#!/usr/bin/env python3
"""No file of src/ depends on itself through others: neither by calls nor by includes.

Calls. A file A depends on a file B when A's object file references a symbol (a
function, a table, a thread-local) that B's object file defines: nm lists what
each object defines and what it leaves undefined, so inline functions count where
they are inlined, and a header that only declares counts for nothing. A loop is a
set of files each of which reaches every other one (a strongly connected
component of more than one file): A calls B and B, directly or through others,
calls A. Such a pair is one concept split across files, or two concepts sharing
one; either way neither can be read, tested or replaced on its own.

Includes. The same for headers of src/: a header that includes itself through
others (an #include "..." resolved against the including file's folder and the
folders above it in src/ -- its layer's -- then src/util/ and include/).

An inline fast path in a header whose slow path lives in a .c file (the clock's
TSC reading, event identities) is no loop: the caller references the slow path,
and the slow path never calls back.

Usage: no_loops.py SRC_DIR BUILD_DIR [--list]
  SRC_DIR    the source tree (its src/ is read for includes)
  BUILD_DIR  a configured and built tree (its src/ holds the object files)
  --list     print every file-level dependency (A -> B: symbols) and exit 0
Exit status 0 when there is no loop, 1 when there is one (each is printed with
the references that close it), 2 when no object file was found.
"""
import collections
import pathlib
import re
import subprocess
import sys

# Loops being removed by work in progress: a loop whose files all lie under one of
# these folders is reported but does not fail. Remove the entry with the loop; an
# entry under which no loop is left fails, so that it cannot linger.
KNOWN = {}


def object_name(path):
    """build/src/CMakeFiles/hark_logger.dir/logger/sinks/fd.c.o -> logger/sinks/fd.c"""
    m = re.search(r"\.dir/(.*)\.o$", str(path))
    return m.group(1) if m else str(path)


def symbol_graph(src, build):
    # Objects of sources that still exist: a build tree keeps the object of a file
    # removed since, which would otherwise still count.
    objects = [o for o in sorted(pathlib.Path(build, "src").rglob("*.c.o"))
               if pathlib.Path(src, "src", object_name(o)).is_file()]
    defined, undefined = {}, collections.defaultdict(set)
    # One nm for all of them: each line is "object:value type symbol".
    out = subprocess.run(["nm", "-A", *map(str, objects)], check=True,
                         capture_output=True, text=True).stdout if objects else ""
    for line in out.splitlines():
        obj, _, rest = line.rpartition(".o:")
        name = object_name(obj + ".o")
        f = rest.split()
        if len(f) == 2 and f[0] == "U":
            undefined[name].add(f[1])
        elif len(f) == 3 and f[1] in "TDBRVWC":
            # A file compiled into two libraries has one name: its copies agree.
            defined.setdefault(f[2], name)
    edges = collections.defaultdict(lambda: collections.defaultdict(set))
    for a, syms in undefined.items():
        for sym in syms:
            b = defined.get(sym)
            if b and b != a:
                edges[a][b].add(sym)
    return objects, edges


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def include_graph(src):
    root = pathlib.Path(src)
    srcdir = root / "src"
    search = [srcdir / "util", root / "include"]
    edges = collections.defaultdict(lambda: collections.defaultdict(set))
    for f in sorted(srcdir.rglob("*.[ch]")):
        for inc in INCLUDE.findall(f.read_text(errors="replace")):
            # The folder of the including file and those above it up to src/ (a
            # layer sees its own folder, OTLP also export/'s), then util and include.
            dirs = [d for d in [f.parent, *f.parent.parents] if srcdir in d.parents]
            for d in dirs + search:
                target = (d / inc).resolve()
                if target.is_file():
                    break
            else:
                continue
            if srcdir.resolve() in target.parents and target.suffix == ".h":
                a = str(f.relative_to(srcdir))
                b = str(target.relative_to(srcdir.resolve()))
                edges[a][b].add("#include")
    return edges


def loops(edges):
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    nodes = sorted(set(edges) | {b for e in edges.values() for b in e})
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, {}))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, {})))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def known_prefix(comp):
    for prefix in KNOWN:
        if all(f.startswith(prefix) for f in comp):
            return prefix
    return None


def report(kind, edges):
    """Prints the loops of one graph; returns (failing loops, known prefixes seen)."""
    failing, seen = 0, set()
    for comp in loops(edges):
        prefix = known_prefix(comp)
        members = set(comp)
        if prefix:
            seen.add(prefix)
            print(f"known {kind} loop of {len(comp)} files under {prefix} ({KNOWN[prefix]}):")
        else:
            failing += 1
            print(f"{kind} loop of {len(comp)} files:")
        for a in comp:
            for b in sorted(edges[a]):
                if b in members:
                    print(f"    {a} -> {b}  ({' '.join(sorted(edges[a][b]))})")
    return failing, seen


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    src, build = argv[1], argv[2]
    objects, calls = symbol_graph(src, build)
    if not objects:
        print(f"no object files under {build}/src: build the tree first")
        return 2
    if "--list" in argv[3:]:
        for a in sorted(calls):
            for b in sorted(calls[a]):
                print(f"{a} -> {b}: {' '.join(sorted(calls[a][b]))}")
        return 0
    failing, seen = report("call", calls)
    f2, s2 = report("include", include_graph(src))
    failing += f2
    seen |= s2
    for prefix in sorted(set(KNOWN) - seen):
        print(f"no loop is left under {prefix}: remove its entry from KNOWN in {argv[0]}")
        failing += 1
    print(f"{len(objects)} object files: {failing} loop(s) to remove")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
