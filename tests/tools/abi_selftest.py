#!/usr/bin/env python3
"""The ABI check (tests/tools/abi_check.py) catches what it is for: run on a copy of the
tree changed in the ways docs/abi.md names, against the tree's own baseline (abi/).

  1. hark_metrics_attach() without its first parameter, as it was before the exporter
     contract gave it one under the same SONAME: fails (abidiff reports a parameter
     change with status 4, not the "incompatible" bit 8);
  2. a member inserted in the middle of hark_trace_options: fails;
  3. a new function (listed in src/libhark.map) and a member appended to the versioned
     hark_trace_options, its version raised: passes, and lists both;
  3b. the member appended without raising the version: fails (a program built with
     version 1 has the smaller struct);
  4. change 1 with HARK_VERSION_MAJOR raised but no new baseline: fails;
  5. change 1 with HARK_VERSION_MAJOR raised and `abi_check.py baseline` run (what
     `make abi-baseline` does): passes, the old major's baseline removed.
Usage: abi_selftest.py [--source-dir DIR] [--work-dir DIR] [--jobs N]
"""
import argparse
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve()


def copy_tree(src, dst):
    """The files git knows of (tracked, and new ones not ignored) as they are now. A file
    already there with the same bytes is left alone, one that differs is rewritten (its
    time now): between scenarios the build recompiles what changed back."""
    names = subprocess.run(["git", "-C", str(src), "ls-files", "-co", "--exclude-standard", "-z"],
                           check=True, capture_output=True, text=True).stdout.split("\0")
    keep = set()
    for name in filter(None, names):
        f, d = src / name, dst / name
        if not f.is_file():
            continue
        keep.add(d)
        data = f.read_bytes()
        if not d.is_file() or d.read_bytes() != data:
            d.parent.mkdir(parents=True, exist_ok=True)
            d.write_bytes(data)
    for d in list(dst.rglob("*")) if dst.exists() else []:
        if d.is_file() and d not in keep:
            d.unlink()  # e.g. a baseline a scenario wrote


def patch(root, path, old, new):
    f = root / path
    text = f.read_text()
    if old not in text:
        sys.exit(f"abi self-test: {path} no longer holds the text its change replaces; "
                 f"update tests/tools/abi_selftest.py:\n{old}")
    f.write_text(text.replace(old, new, 1))


def revert_metrics_attach(root):
    patch(root, "include/hark/metrics.h",
          "HARK_API int hark_metrics_attach(hark_attach_id *out, hark_metrics *m, hark_notifier *n,\n"
          "                                 hark_pattern pattern);",
          "HARK_API int hark_metrics_attach(hark_metrics *m, hark_notifier *n, hark_pattern pattern);")
    patch(root, "src/export/metrics.c",
          "int hark_metrics_attach(hark_attach_id *out, hark_metrics *m, hark_notifier *n,\n"
          "                        hark_pattern pattern)\n{\n",
          "int hark_metrics_attach(hark_metrics *m, hark_notifier *n, hark_pattern pattern)\n{\n"
          "    hark_attach_id *out = NULL;\n")


TRACE_OPTIONS_FIRST = "    unsigned version;           /* HARK_TRACE_OPTIONS_VERSION (or older, hark/common.h) */\n"
TRACE_OPTIONS_END = "    void *write_data;\n} hark_trace_options;"


def insert_member(root):
    patch(root, "include/hark/trace.h", TRACE_OPTIONS_FIRST,
          TRACE_OPTIONS_FIRST + "    unsigned abi_probe_inserted;\n")


def append_member(root):
    patch(root, "include/hark/trace.h", TRACE_OPTIONS_END,
          "    void *write_data;\n    unsigned abi_probe_appended;\n} hark_trace_options;")


def add_function_and_member(root):
    append_member(root)
    text = (root / "include/hark/trace.h").read_text()
    version = int(text.split("#define HARK_TRACE_OPTIONS_VERSION ", 1)[1].split()[0])
    patch(root, "include/hark/trace.h", f"#define HARK_TRACE_OPTIONS_VERSION {version}\n",
          f"#define HARK_TRACE_OPTIONS_VERSION {version + 1}\n")
    patch(root, "src/export/trace_options.c", "                     sizeof(hark_trace_options))",
          "                     offsetof(hark_trace_options, abi_probe_appended),\n"
          "                     sizeof(hark_trace_options))")
    patch(root, "include/hark/version.h", "HARK_API const char *hark_version_string(void);",
          "HARK_API const char *hark_version_string(void);\nHARK_API int hark_abi_probe_added(void);")
    with open(root / "src/util/errors.c", "a") as f:
        f.write("\nint hark_abi_probe_added(void)\n{\n    return 1;\n}\n")
    patch(root, "src/libhark.map", "    hark_version_string;\n",
          "    hark_version_string;\n    hark_abi_probe_added;\n")


def raise_major(root):
    text = (root / "include/hark/version.h").read_text()
    major = int(text.split("#define HARK_VERSION_MAJOR ", 1)[1].split()[0])
    patch(root, "include/hark/version.h", f"#define HARK_VERSION_MAJOR {major}\n",
          f"#define HARK_VERSION_MAJOR {major + 1}\n")
    return major


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-dir", type=pathlib.Path, default=HERE.parents[2])
    ap.add_argument("--work-dir", type=pathlib.Path, default=HERE.parents[2] / "build-abi-selftest")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("JOBS", os.cpu_count() or 2)))
    a = ap.parse_args()
    src, work = a.source_dir.resolve(), a.work_dir.resolve()
    tree, build = work / "src", work / "build"
    work.mkdir(parents=True, exist_ok=True)

    def check(*command):
        r = subprocess.run([sys.executable, str(HERE.parent / "abi_check.py"), *command,
                            "--source-dir", str(tree), "--build-dir", str(build), "--jobs", str(a.jobs)],
                           capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr

    failures = 0

    def scenario(title, change, want_status, want_text, then=None):
        nonlocal failures
        copy_tree(src, tree)
        change(tree)
        if then:
            then()
        status, out = check("check")
        ok = (status == 0) == (want_status == 0) and all(t in out for t in want_text)
        verdict = "passes" if status == 0 else "fails"
        print(f"abi self-test: {title}: the check {verdict}"
              f" ({'as it should' if ok else 'WRONG'})")
        if not ok:
            failures += 1
            print(f"  expected it to {'pass' if want_status == 0 else 'fail'} naming "
                  f"{', '.join(want_text)}; its output:\n{out}")

    scenario("hark_metrics_attach without its first parameter", revert_metrics_attach, 1,
             ["hark_metrics_attach", "INCOMPATIBLE"])
    scenario("a member inserted in the middle of hark_trace_options", insert_member, 1,
             ["abi_probe_inserted", "INCOMPATIBLE"])
    scenario("a new function and a member appended to hark_trace_options, its version raised",
             add_function_and_member, 0,
             ["hark_abi_probe_added", "abi_probe_appended", "hark_trace_options: version "])
    scenario("a member appended to hark_trace_options, its version not raised", append_member, 1,
             ["hark_trace_options: grew from", "at the same version"])

    def revert_and_raise(root):
        revert_metrics_attach(root)
        raise_major(root)

    scenario("the parameter change with the major version raised, the baseline kept",
             revert_and_raise, 1, ["no baseline abi/libhark-export.so.2.xml"])

    def new_baseline():
        status, out = check("baseline")
        if status != 0:
            print(out)

    scenario("the parameter change with the major version raised and a new baseline",
             revert_and_raise, 0, ["compatible with the baseline"], then=new_baseline)
    if (tree / "abi/libhark-export.so.1.xml").exists():
        failures += 1
        print("abi self-test: make abi-baseline left the old major's abi/libhark-export.so.1.xml")
    print(f"abi self-test: {'FAILED' if failures else 'the check caught every change it should'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
