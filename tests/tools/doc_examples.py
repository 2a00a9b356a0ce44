#!/usr/bin/env python3
"""Compile the C and C++ examples of the documentation against the current headers.

Every fenced block whose info string starts with `c` or `cpp` (`c++`) in README.md,
docs/*.md and bindings/*/README.md is checked, so that an API change that breaks a
documented example fails the test suite:

  * a block with `int main(` is a complete program: it is compiled as it stands,
    linked with the static libraries when they are given, and run; it must exit 0.
    An HTML comment `<!-- example-output: REGEX -->` on the line just before the
    fence also requires a line of its standard output to match REGEX;
  * any other block is a fragment: its `#include` lines and its definitions that
    start with `static` at column 0 (helper functions, callbacks) go to file scope,
    the rest becomes the body of a function, after PRELUDE below: the declarations
    of the names fragments assume the program around them has (a logger `log`, a
    topic `sql`, ...). Fragments are compiled only (nothing would make them do
    anything meaningful when run);
  * a block marked `sketch` (```` ```c sketch ````: GitHub still highlights it as C)
    is shown for its shape, not meant to compile, and is skipped.

Usage: doc_examples.py --source-dir DIR --cc CC [--cxx CXX] [--link=ARG ...]
                       [--link-export=ARG ...] [--work-dir DIR]
The --link arguments make the link line of programs (libhark.a and what it needs),
the --link-export ones are put before them for programs that include hark/metrics.h,
hark/trace.h, hark/otlp.h or hark/recorder.h. Without --link programs are compiled, not linked or run.
Exit status: 0 all passed, 1 a block failed, 77 no compiler (CTest's skip code).
"""

import argparse
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77

C_FLAGS = ["-std=c11"]
CXX_FLAGS = ["-std=c++17"]
# Callbacks in examples show the full signature of the callback type, used or not,
# and fragments may declare what the elided rest of the program would use.
WARN_FLAGS = ["-Wall", "-Wextra", "-Werror"]

# What fragments may assume the surrounding program declares. Keep it to names the
# text around the examples introduces; a fragment that needs something new either
# declares it itself or this list grows by one line, with the type the text gives.
STD_HEADERS = r"""
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
"""
PRELUDE = r"""
#include <hark.h>

#define UNUSED __attribute__((unused))
static UNUSED hark_notifier *n;            /* a notifier */
static UNUSED hark_subscription_id id;     /* a subscription id */
static UNUSED hark_logger *log;            /* the application's logger */
static UNUSED hark_logger *logger;         /* the same, by its other name */
static UNUSED hark_subscriber *logs;       /* a log subscriber */
static UNUSED hark_topic *sql;             /* the topic "sql.db" */
static UNUSED void *req;                   /* a request of the application */
static UNUSED const char *path = "/";      /* its path */
static UNUSED double ms;                   /* a duration in milliseconds */
static UNUSED const char *path_of(void *r) { return r ? "/users" : "/"; }
static UNUSED void query(hark_topic *t, const char *text)
{
    HARK_PAYLOAD(p, 1);
    HARK_INSTRUMENT(t, &p, { hark_payload_set_str(&p, "sql", text); });
}
"""

FENCE_OPEN = re.compile(r"^(\s*)```\s*([A-Za-z+]+)([^`]*)$")
FENCE_CLOSE = re.compile(r"^\s*```\s*$")
OUTPUT_MARK = re.compile(r"^\s*<!--\s*example-output:\s*(.*?)\s*-->\s*$")


def blocks(path):
    """Yields (line, language, words, expected_output, code) per C or C++ block."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang, rest = len(m.group(1)), m.group(2).lower(), m.group(3).split()
        start = i
        i += 1
        body = []
        while i < len(lines) and not FENCE_CLOSE.match(lines[i]):
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        i += 1
        if lang not in ("c", "cpp", "c++"):
            continue
        prev = OUTPUT_MARK.match(lines[start - 1]) if start > 0 else None
        yield start + 1, ("c" if lang == "c" else "cpp"), rest, prev and prev.group(1), body


def strip_literals(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return re.sub(r"/\*.*?\*/|//.*$", "", line)


def split_fragment(body):
    """File-scope lines (includes, `static` definitions) and statement lines, each
    a list of (line index in the block, text)."""
    top, stmts = [], []
    i = 0
    while i < len(body):
        line = body[i]
        if line.startswith("#"):
            top.append((i, line))
            i += 1
        elif line.startswith("static ") and "(" in line:
            depth, seen = 0, False
            while i < len(body):
                code = strip_literals(body[i])
                depth += code.count("{") - code.count("}")
                seen = seen or "{" in code
                top.append((i, body[i]))
                i += 1
                if seen and depth <= 0:
                    break
        else:
            stmts.append((i, body[i]))
            i += 1
    return top, stmts


def with_lines(path, first, numbered):
    """The lines, each run of consecutive ones headed by a #line directive naming
    its place in the markdown file, so that diagnostics point there."""
    out, last = [], None
    for i, text in numbered:
        if last is None or i != last + 1:
            out.append('#line %d "%s"' % (first + i, path))
        out.append(text)
        last = i
    return "\n".join(out) + "\n"


def translation_unit(where, lang, body):
    """The source to compile and whether it is a complete program."""
    path, first = where[0], where[1] + 1  # the line after the opening fence
    if re.search(r"^\s*int\s+main\s*\(", "\n".join(body), re.M):
        return with_lines(path, first, enumerate(body)), True
    top, stmts = split_fragment(body)
    # A fragment that shows its #include lines must show all it needs, so that it
    # compiles where it is pasted; others get the usual standard headers.
    src = PRELUDE if any(t.startswith("#include") for _, t in top) else STD_HEADERS + PRELUDE
    src += with_lines(path, first, top)
    # Statements go in a block of their own, so that one may declare again a name
    # the prelude declares (`hark_logger *log;`); the function returns int, so that
    # a fragment may `return rc;` on an error.
    src += "int doc_fragment(void);\nint doc_fragment(void)\n{\n{\n"
    src += with_lines(path, first, stmts) + "}\nreturn 0;\n}\n"
    return src, False


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=60, **kw)


def check(job, args, work):
    where, lang, words, expected, body = job
    name = "%s:%d" % (os.path.relpath(where[0], args.source_dir), where[1])
    src, program = translation_unit(where, lang, body)
    compiler = args.cc if lang == "c" else args.cxx
    if not compiler:
        return name, "skipped (no C++ compiler)", True
    stem = os.path.join(work, re.sub(r"[^A-Za-z0-9]+", "_", name))
    ext = ".c" if lang == "c" else ".cpp"
    with open(stem + ext, "w", encoding="utf-8") as f:
        f.write(src)
    flags = (C_FLAGS if lang == "c" else CXX_FLAGS) + WARN_FLAGS
    flags += ["-I", os.path.join(args.source_dir, "include")]
    exports = re.search(r"<hark/(metrics|trace|otlp|recorder)\.h>", src) is not None
    link = args.link and (args.link_export or not exports)
    if not program:
        # A fragment may be just a callback the elided rest of the program uses.
        flags.append("-Wno-unused-function")
    if not program or not link:
        r = run([compiler] + flags + ["-c", "-o", stem + ".o", stem + ext])
        if r.returncode != 0:
            return name, "does not compile:\n" + r.stdout, False
        return name, "compiles" if not program else "compiles (not linked)", True
    libs = (args.link_export if exports else []) + args.link
    r = run([compiler] + flags + ["-o", stem, stem + ext] + libs)
    if r.returncode != 0:
        return name, "does not build:\n" + r.stdout, False
    r = run([stem], cwd=work)
    if r.returncode != 0:
        return name, "exits with status %d:\n%s" % (r.returncode, r.stdout), False
    if expected and not any(re.search(expected, l) for l in r.stdout.splitlines()):
        return name, "prints no line matching %r:\n%s" % (expected, r.stdout), False
    return name, "runs", True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--cc", default="")
    ap.add_argument("--cxx", default="")
    ap.add_argument("--link", action="append", default=[])
    ap.add_argument("--link-export", action="append", default=[])
    ap.add_argument("--work-dir", default="")
    args = ap.parse_args()
    args.cc = shutil.which(args.cc) if args.cc else None
    args.cxx = shutil.which(args.cxx) if args.cxx else None
    if not args.cc:
        print("doc_examples: no C compiler; skipped")
        return SKIP

    root = args.source_dir
    files = [os.path.join(root, "README.md")]
    files += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    files += sorted(glob.glob(os.path.join(root, "bindings", "*", "README.md")))
    jobs = []
    for path in files:
        for line, lang, words, expected, body in blocks(path):
            if "sketch" in words:
                continue
            jobs.append(((path, line), lang, words, expected, body))
    if not jobs:
        print("doc_examples: no C blocks found under %s" % root)
        return 1

    work = args.work_dir or tempfile.mkdtemp(prefix="hark-doc-examples-")
    os.makedirs(work, exist_ok=True)
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for name, what, ok in pool.map(lambda j: check(j, args, work), jobs):
            print("%-28s %s" % (name, what if ok else "FAILED: " + what))
            failed += not ok
    if not args.work_dir:
        shutil.rmtree(work, ignore_errors=True)
    print("doc_examples: %d blocks, %d failed" % (len(jobs), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
