# SPDX-License-Identifier: BSD-3-Clause
"""Count the run narratives in the user docs (README.md, docs/*.md): the
share of non-blank lines that tell a measurement's history rather than what
a thing is, how to use it and why.

    python tools/doc_narrative.py [--show]

A paragraph counts as narrative when one of its lines names a date, a time of day, a commit
id, an issue number, a target "MET", a numbered or ordinal run ("the eighth
run", "run 3"), an A/B, or a profiler transcript (perf, cachegrind), or when
it lies in a section whose heading is one of those ("Measured, ...",
"... A/B").  Fenced code counts like prose.  ``--show`` prints each such line.
History belongs in docs/measurements/<date>-<machine>/, which is not counted.
"""

import argparse
import glob
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORD = "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth"
LINE = re.compile(
    r"\b20\d\d-\d\d-\d\d\b"                       # a date
    r"|\b[0-2]?\d:[0-5]\d(?:-[0-2]?\d:[0-5]\d)?\s*(?:UTC)?\b(?!\s*\w*\])"   # a time of day
    r"|(?<![\w/.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w/.-])"   # a commit id
    r"|\bissues?\s+\d+"                           # an issue number
    r"|\bMET\b"
    rf"|\bthe\s+(?:{ORD})\s+(?:run|round|session)\b|\brun\s+\d+\b"
    r"|(?-i:\bA/B\b)|\bcachegrind\b|\bperf (?:record|report|stat)\b"
    r"|(?-i:\bMeasured\b)", re.I)
HEAD = re.compile(r"^#+ .*(?:\bMeasured\b|\bA/B\b|\b20\d\d-\d\d-\d\d)")
CASE_SENSITIVE = re.compile(r"\bMET\b")


def pages():
    return [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def narrative(line):
    line = re.sub(r"\[[^\]]*\]\((?:docs/)?measurements/[^)]*\)", "", line)   # a link to a record is no narrative
    m = LINE.search(line)
    if not m:
        return False
    if m.group(0).upper() == "MET":
        return bool(CASE_SENSITIVE.search(line))
    return True


def count(path, show=False):
    """(narrative lines, non-blank lines) of one page.  A paragraph (lines
    between blank lines: prose, a table, a list item with its continuation)
    counts whole when one of its lines is narrative: a run's story names its
    date once and runs on for ten lines."""
    total = hits = 0
    level_in = None                     # heading level of the narrative section we are in
    para, para_hit = [], False

    def flush():
        nonlocal hits, para, para_hit
        if para_hit:
            hits += len(para)
            if show:
                for s in para:
                    print(f"{os.path.relpath(path, ROOT)}: {s[:110]}")
        para, para_hit = [], False

    for ln in open(path, encoding="utf-8"):
        s = ln.rstrip("\n")
        h = re.match(r"^(#+) ", s)
        if h:
            flush()
            lvl = len(h.group(1))
            if level_in is not None and lvl <= level_in:
                level_in = None
            if level_in is None and HEAD.match(s):
                level_in = lvl
        if not s.strip() or (re.match(r"^\s*- ", s) and not s.startswith("  ")):
            flush()                         # a blank line or a new top-level list item ends a paragraph
        if not s.strip():
            continue
        total += 1
        para.append(s)
        para_hit = para_hit or level_in is not None or narrative(s)
    flush()
    return hits, total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--show", action="store_true", help="print each narrative line")
    a = ap.parse_args()
    H = T = 0
    rows = []
    for p in pages():
        h, t = count(p, a.show)
        H, T = H + h, T + t
        rows.append((os.path.relpath(p, ROOT), h, t))
    for name, h, t in rows:
        print(f"{name:<24} {h:>5} / {t:<5} {h / max(t, 1):6.1%}")
    print(f"{'all user docs':<24} {H:>5} / {T:<5} {H / max(T, 1):6.1%}")


if __name__ == "__main__":
    main()
