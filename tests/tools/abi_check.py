#!/usr/bin/env python3
"""hark's ABI against its baseline (abi/*.xml, docs/abi.md), with libabigail's abidw and
abidiff (Debian: abigail-tools).

  abi_check.py check    [--source-dir DIR] [--build-dir DIR]
      Builds the shared libraries of DIR (only them, -g -Og, in their own build
      directory), writes each one's ABI with abidw and compares it with
      abi/<SONAME>.xml. Fails on a change a program built against the baseline could
      not survive: a function or variable removed, a changed parameter or return type,
      a struct member removed, moved, retyped or inserted before the end, a changed
      SONAME or symbol version. Passes on additions (new functions, variables and
      symbol versions; members appended to a versioned *_options or *_stats struct:
      abi/hark.abignore) and lists them.
  abi_check.py baseline [--source-dir DIR] [--build-dir DIR]
      Writes abi/<SONAME>.xml from the tree as it is (`make abi-baseline`), removing the
      baselines of another major version.

Beside them, abi/versioned-structs.txt records each versioned struct's version and size
(the options structs, hark_log_sink, the stats structs, hark_clock_info: every
HARK_<X>_VERSION with a struct hark_<x>): a struct that grew keeps old programs working
only if its version grew too, so the check fails on a struct larger than its baseline
at the same version, which abidiff, blind to macros, would pass.

abidiff's exit status sets bit 8 only for removals; a changed parameter is bit 4, as an
addition is. The verdict is therefore read from abidiff's report: any function or
variable Removed or Changed (after abi/hark.abignore), any removed symbol, a changed
SONAME, fails.
"""
import argparse
import os
import pathlib
import re
import subprocess
import sys

LIBS = (("hark", "hark"), ("hark-export", "hark_export_shared"), ("hark-lttng", "hark_lttng"))
ABIDW = ["--drop-private-types", "--no-show-locs", "--no-corpus-path", "--no-comp-dir-path",
         "--type-id-style", "hash"]


def run(cmd, **kw):
    return subprocess.run(cmd, text=True, capture_output=True, **kw)


def build(src, out, jobs):
    """Configures and builds the shared libraries of `src` into `out`; returns
    {name: path} of the libraries built."""
    log = out.with_suffix(".log")
    cfg = ["cmake", "-S", str(src), "-B", str(out), "-DCMAKE_BUILD_TYPE=Debug",
           "-DCMAKE_C_FLAGS_DEBUG=-g -Og", "-DHARK_BUILD_TESTS=OFF", "-DHARK_BUILD_BENCH=OFF",
           "-DHARK_BUILD_EXAMPLES=OFF", "-DHARK_BUILD_FUZZ=OFF", "-DHARK_BUILD_EXPORT=ON"]
    r = run(cfg)
    if r.returncode != 0:
        log.write_text(r.stdout + r.stderr)
        sys.exit(f"abi: configuring {src} failed:\n{r.stdout}{r.stderr}")
    # The libraries this configuration builds (the export and LTTng ones need their
    # packages): the targets `help` lists, as Make ("... name") or Ninja ("name: phony").
    listed = run(["cmake", "--build", str(out), "--target", "help"]).stdout
    targets = [target for _, target in LIBS
               if re.search(rf"^(\.\.\. )?{target}(:|\s|$)", listed, re.M)]
    r = run(["cmake", "--build", str(out), "-j", str(jobs), "--target", *targets])
    log.write_text(r.stdout + r.stderr)
    if r.returncode != 0:
        sys.exit(f"abi: building {src} failed (log: {log}):\n{r.stdout[-4000:]}{r.stderr[-4000:]}")
    built = {}
    for name, _ in LIBS:
        path = out / f"lib{name}.so"
        if path.exists():
            built[name] = path.resolve()
    return built


def soname(lib):
    m = re.search(r"\(SONAME\)\s+Library soname: \[(.*)\]", run(["readelf", "-d", "-W", str(lib)]).stdout)
    if not m:
        sys.exit(f"abi: {lib} has no SONAME")
    return m.group(1)


def abidw(src, lib, xml):
    r = run(["abidw", "--headers-dir", str(src / "include"), *ABIDW, "--out-file", str(xml), str(lib)])
    if r.returncode != 0:
        sys.exit(f"abi: abidw {lib} failed:\n{r.stderr}")
    # Translation units are named by their path: made relative to the tree, so that a
    # baseline written from any checkout is the same file.
    xml.write_text(xml.read_text().replace(f"path='{src}/", "path='"))


def versioned_structs(src, work):
    """{struct: (version, size)} of every versioned struct of the public headers,
    compiled from them as a program sees them."""
    headers = sorted(str(p.relative_to(src / "include")) for p in (src / "include").rglob("*.h"))
    text = "".join((src / "include" / h).read_text() for h in headers)
    structs = []
    for m in re.finditer(r"^#define HARK_([A-Z0-9_]+)_VERSION\s+[0-9]+", text, re.M):
        name = "hark_" + m.group(1).lower()
        if re.search(rf"\btypedef struct {name}\b", text):
            structs.append((name, m.group(1)))
    prog = work / "versioned_structs.c"
    prog.write_text("".join(f"#include <{h}>\n" for h in headers if h != "hark/hark.hpp")
                    + "#include <stdio.h>\nint main(void)\n{\n"
                    + "".join(f'    printf("%s %u %zu\\n", "{n}", (unsigned)HARK_{m}_VERSION, sizeof({n}));\n'
                              for n, m in sorted(structs))
                    + "    return 0;\n}\n")
    exe = work / "versioned_structs"
    r = run(["cc", "-std=c11", "-I", str(src / "include"), str(prog), "-o", str(exe)])
    if r.returncode != 0:
        sys.exit(f"abi: compiling {prog} failed:\n{r.stderr}")
    out = run([str(exe)]).stdout
    return {n: (int(v), int(z)) for n, v, z in (line.split() for line in out.splitlines())}


def structs_text(structs):
    return ("# struct version size: each versioned struct as the baseline has it, written by\n"
            "# make abi-baseline (tests/tools/abi_check.py, docs/abi.md).\n"
            + "".join(f"{n} {v} {z}\n" for n, (v, z) in sorted(structs.items())))


def compare_structs(base_file, now):
    """(ok, lines)."""
    base = {}
    for line in base_file.read_text().splitlines():
        if line and not line.startswith("#"):
            n, v, z = line.split()
            base[n] = (int(v), int(z))
    ok, lines = True, []
    for n, (v, z) in sorted(now.items()):
        if n not in base:
            lines.append(f"{n}: new, version {v}, {z} bytes")
            continue
        bv, bz = base[n]
        if (v, z) == (bv, bz):
            continue
        if v < bv or z < bz:
            ok = False
            lines.append(f"{n}: version {bv} -> {v}, {bz} -> {z} bytes: INCOMPATIBLE (a "
                         f"versioned struct only grows)")
        elif z > bz and v == bv:
            ok = False
            lines.append(f"{n}: grew from {bz} to {z} bytes at the same version {v}: "
                         f"INCOMPATIBLE (a program built with version {v} has {bz} bytes): "
                         f"raise HARK_{n[5:].upper()}_VERSION and add the new size to its "
                         f"_DEFINE line (docs/conventions.md)")
        else:
            lines.append(f"{n}: version {bv} -> {v}, {bz} -> {z} bytes")
    for n in sorted(set(base) - set(now)):
        ok = False
        lines.append(f"{n}: gone: INCOMPATIBLE")
    return ok, lines


def counts(report):
    """(removed, changed, added) over abidiff's summary lines."""
    removed = changed = added = 0
    for line in report.splitlines():
        if "changes summary:" not in line:
            continue
        removed += sum(int(n) for n in re.findall(r"(\d+) Removed", line))
        changed += sum(int(n) for n in re.findall(r"(\d+) Changed", line))
        added += sum(int(n) for n in re.findall(r"(\d+) Added", line))
    return removed, changed, added


def compare(base, new, suppressions):
    """Returns (ok, text): the verdict and what to print."""
    strict = run(["abidiff", "--no-show-locs", "--suppressions", str(suppressions), str(base), str(new)])
    if strict.returncode & 3:
        return False, f"abidiff failed (status {strict.returncode}):\n{strict.stdout}{strict.stderr}"
    removed, changed, added = counts(strict.stdout)
    soname_changed = "ELF SONAME changed" in strict.stdout
    ok = not (strict.returncode & 8) and removed == 0 and changed == 0 and not soname_changed
    if ok:
        # What passed: the additions, and what abi/hark.abignore accepted (a second run
        # without it, for the list).
        everything = run(["abidiff", "--no-show-locs", str(base), str(new)])
        if everything.returncode == 0:
            return True, "no change"
        return True, ("compatible changes (additions, and versioned structs grown at their end):\n"
                      + everything.stdout)
    why = []
    if removed:
        why.append(f"{removed} removed")
    if changed:
        why.append(f"{changed} changed")
    if soname_changed:
        why.append("SONAME changed")
    return False, (f"INCOMPATIBLE ({', '.join(why)}; abidiff status {strict.returncode}):\n"
                   + strict.stdout)


def cmd_check(a):
    src, out = a.source_dir.resolve(), a.build_dir.resolve()
    built = build(src, out, a.jobs)
    xml_dir = out / "abi"
    xml_dir.mkdir(exist_ok=True)
    baselines = {p.name for p in (src / "abi").glob("*.xml")}
    failed = False
    for name, lib in built.items():
        so = soname(lib)
        new = xml_dir / f"{so}.xml"
        abidw(src, lib, new)
        base = src / "abi" / f"{so}.xml"
        baselines.discard(base.name)
        if not base.exists():
            failed = True
            print(f"abi: {so}: no baseline abi/{so}.xml. A new major version (SONAME) starts "
                  f"from a new baseline written in the same commit: make abi-baseline "
                  f"(docs/abi.md)")
            continue
        ok, text = compare(base, new, src / "abi" / "hark.abignore")
        print(f"abi: {so} against abi/{base.name}: {'ok' if ok else 'FAILED'}, {text}")
        failed |= not ok
    structs_file = src / "abi" / "versioned-structs.txt"
    if structs_file.exists():
        ok, lines = compare_structs(structs_file, versioned_structs(src, xml_dir))
        print(f"abi: versioned structs against abi/{structs_file.name}: "
              f"{'ok' if ok else 'FAILED'}" + "".join(f"\n  {line}" for line in lines))
        failed |= not ok
    else:
        failed = True
        print(f"abi: no abi/{structs_file.name}: make abi-baseline writes it")
    for stale in sorted(baselines):
        failed = True
        print(f"abi: abi/{stale}: no library built has this SONAME (a library not built here, "
              f"or the baseline of an older major version, which make abi-baseline removes)")
    print("abi: " + ("FAILED: a change a program built against the baseline would not survive. "
                     "Keep the old function and add a new name, append the field, or raise "
                     "HARK_VERSION_MAJOR and run make abi-baseline in the same commit "
                     "(docs/abi.md)" if failed else "compatible with the baseline"))
    return 1 if failed else 0


def cmd_baseline(a):
    src, out = a.source_dir.resolve(), a.build_dir.resolve()
    built = build(src, out, a.jobs)
    abi = src / "abi"
    abi.mkdir(exist_ok=True)
    written = set()
    for name, lib in built.items():
        so = soname(lib)
        abidw(src, lib, abi / f"{so}.xml")
        written.add(f"{so}.xml")
        print(f"abi: wrote abi/{so}.xml")
    (abi / "versioned-structs.txt").write_text(structs_text(versioned_structs(src, out)))
    print("abi: wrote abi/versioned-structs.txt")
    if len(built) < len(LIBS):
        missing = [n for n, _ in LIBS if n not in built]
        print(f"abi: not built here, baseline unchanged: {', '.join(missing)} (install their "
              f"Debian packages: README.md)")
    for old in sorted(abi.glob("*.xml")):
        name = old.name.split(".so.")[0].removeprefix("lib")
        if old.name not in written and name in built:
            old.unlink()
            print(f"abi: removed abi/{old.name} (another major version)")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("check", "baseline"))
    here = pathlib.Path(__file__).resolve().parents[2]
    ap.add_argument("--source-dir", type=pathlib.Path, default=here)
    ap.add_argument("--build-dir", type=pathlib.Path, default=here / "build-abi")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("JOBS", os.cpu_count() or 2)))
    a = ap.parse_args()
    for tool in ("abidw", "abidiff", "readelf", "cmake"):
        if run(["sh", "-c", f"command -v {tool}"]).returncode != 0:
            sys.exit(f"abi: {tool} not found (Debian: apt-get install abigail-tools binutils cmake)")
    return cmd_check(a) if a.command == "check" else cmd_baseline(a)


if __name__ == "__main__":
    sys.exit(main())
