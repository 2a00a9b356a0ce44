#!/usr/bin/env python3
"""The documents name what exists.

- Every path of the tree that README.md or a page of docs/ names (src/..., tests/...,
  include/..., a glob such as tests/*/test_*.c) exists: a file moved or renamed
  must take its mentions along.
- Every page of docs/ is listed in README.md's "Layout" section.

Usage: doc_paths.py SRC_DIR. Exit status 0, or 1 with one line per problem.
"""
import pathlib
import re
import sys

# Paths the documents name that a run makes, not the tree.
GENERATED = ("fuzz/out/",)

PATH = re.compile(r"(?<![\w./-])((?:src|tests|include|examples|bench|fuzz|bindings|docs|cmake)"
                  r"/[A-Za-z0-9_.*/-]*[A-Za-z0-9_*/])")


def main(argv):
    root = pathlib.Path(argv[1])
    pages = sorted((root / "docs").glob("*.md"))
    problems = []
    for page in [root / "README.md"] + pages:
        for n, line in enumerate(page.read_text().splitlines(), 1):
            for m in PATH.finditer(line):
                path = m.group(1)
                if path.startswith(GENERATED):
                    continue
                found = any(root.glob(path)) if "*" in path else (root / path).exists()
                if not found:
                    problems.append(f"{page.relative_to(root)}:{n}: names {path}, "
                                    f"which is not in the tree")
    readme = (root / "README.md").read_text()
    layout = readme.split("\n## Layout", 1)[1].split("\n## ", 1)[0] if "\n## Layout" in readme \
        else ""
    for page in pages:
        if not re.search(r"(?<![\w-])" + re.escape(page.name) + r"\b", layout):
            problems.append(f"README.md: the Layout section does not list docs/{page.name}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
