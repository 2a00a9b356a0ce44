#!/usr/bin/env python3
"""hark's version is written once, in include/hark/version.h; everything that states it
says the same (docs/abi.md):

- the CMake project version (passed as --project-version), hence the SONAMEs;
- hark.pc (and hark-export.pc, hark-lttng.pc when built) and the CMake package's
  version file, harkConfigVersion.cmake, as configured in the build directory;
- the built libhark: hark_version_string() and hark_version();
- the Ruby gemspec (evaluated, when Ruby is installed, on a copy that stages nothing),
  and Hark::VERSION when the extension is built (bindings/ruby/lib/hark/hark_ext.so);
- the demo's banner (--demo, when the demo is built).
Usage: version_check.py --source-dir DIR --build-dir DIR --project-version V
                        --libhark PATH [--demo PATH]
"""
import argparse
import ctypes
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile


def header_version(src):
    text = (src / "include/hark/version.h").read_text()
    parts = []
    for part in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(rf"^#define HARK_VERSION_{part} +([0-9]+)$", text, re.M)
        if not m:
            sys.exit(f"include/hark/version.h: no `#define HARK_VERSION_{part} N` line")
        parts.append(int(m.group(1)))
    return parts


def gemspec_version(src):
    """The gemspec's version, evaluated in a scratch copy of the layout it expects
    (bindings/ruby/ beside include/, no src/): it copies no sources there."""
    if not shutil.which("ruby"):
        return None, "ruby not installed"
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        (root / "bindings/ruby").mkdir(parents=True)
        shutil.copy(src / "bindings/ruby/hark.gemspec", root / "bindings/ruby/hark.gemspec")
        (root / "include").symlink_to(src / "include")
        out = subprocess.run(
            ["ruby", "-e", "print Gem::Specification.load(ARGV[0]).version.to_s",
             str(root / "bindings/ruby/hark.gemspec")],
            capture_output=True, text=True, cwd=tmp)
        if out.returncode != 0 or not out.stdout:
            return f"(error: {out.stderr.strip()})", None
        return out.stdout.strip(), None


def ruby_ext_version(src):
    lib = src / "bindings/ruby/lib"
    if not shutil.which("ruby") or not (lib / "hark/hark_ext.so").exists():
        return None, "the Ruby extension is not built (make ruby)"
    out = subprocess.run(["ruby", "-I", str(lib), "-e", 'require "hark/hark_ext"; print Hark::VERSION'],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return f"(error: {out.stderr.strip()})", None
    return out.stdout, None


def demo_version(demo):
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run([demo, "--requests", "1", "--database", os.path.join(tmp, "v.db")],
                             capture_output=True, text=True, timeout=60)
    m = re.search(r"^hark (\S+) demo:", out.stdout, re.M)
    return m.group(1) if m else f"(no banner; exit {out.returncode}: {out.stderr.strip()})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-dir", required=True, type=pathlib.Path)
    ap.add_argument("--build-dir", required=True, type=pathlib.Path)
    ap.add_argument("--project-version", required=True)
    ap.add_argument("--libhark", required=True)
    ap.add_argument("--demo")
    a = ap.parse_args([arg for arg in sys.argv[1:] if arg])  # "" when there is no demo
    major, minor, patch = header_version(a.source_dir)
    want = f"{major}.{minor}.{patch}"
    said = {"CMake project version": a.project_version}
    for pc in ("hark.pc", "hark-export.pc", "hark-lttng.pc"):
        path = a.build_dir / pc
        if path.exists():
            m = re.search(r"^Version: *(\S+)$", path.read_text(), re.M)
            said[pc] = m.group(1) if m else "(no Version: line)"
    cfg = a.build_dir / "harkConfigVersion.cmake"
    m = re.search(r'set\(PACKAGE_VERSION "([^"]*)"\)', cfg.read_text())
    said["harkConfigVersion.cmake"] = m.group(1) if m else "(no PACKAGE_VERSION)"
    lib = ctypes.CDLL(a.libhark)
    lib.hark_version_string.restype = ctypes.c_char_p
    said["hark_version_string()"] = lib.hark_version_string().decode()
    number = lib.hark_version()
    said["hark_version()"] = f"{number // 10000}.{number // 100 % 100}.{number % 100}"
    skipped = []
    for what, fn in (("hark.gemspec", gemspec_version), ("Hark::VERSION", ruby_ext_version)):
        v, why = fn(a.source_dir)
        if why:
            skipped.append(f"{what}: not checked, {why}")
        else:
            said[what] = v
    if a.demo:
        said["hark-demo banner"] = demo_version(a.demo)
    bad = [f"{what} says {v}, include/hark/version.h says {want}"
           for what, v in said.items() if v != want]
    for line in bad + skipped:
        print(line)
    if bad:
        return 1
    print(f"version {want}: " + ", ".join(said))
    return 0


if __name__ == "__main__":
    sys.exit(main())
