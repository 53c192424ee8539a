# SPDX-License-Identifier: BSD-3-Clause
"""The user docs (README.md, docs/*.md) are reference pages: they hold no
commit id, date, issue number or "MET" verdict (a measurement's history goes
to docs/measurements/<machine>-<date>/, which links may name), the run
narratives that remain are under 5% of their lines (tools/doc_narrative.py),
and every table of measured figures names the command that makes them."""

import glob
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGES = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
RECORD_LINK = re.compile(r"\[[^\]]*\]\((?:docs/)?measurements/[^)]*\)")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
COMMIT = re.compile(r"(?<![\w/.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w/.-])")
ISSUE = re.compile(r"\bissues?\s+#?\d+", re.I)
MET = re.compile(r"\b(?:NOT )?MET\b")


def _lines(page):
    for n, line in enumerate(open(page, encoding="utf-8"), 1):
        yield n, RECORD_LINK.sub("", line)


@pytest.mark.parametrize("page", PAGES, ids=[os.path.relpath(p, ROOT) for p in PAGES])
def test_no_history_in_user_docs(page):
    bad = []
    for n, line in _lines(page):
        for what, rx in (("date", DATE), ("commit id", COMMIT), ("issue number", ISSUE), ("verdict", MET)):
            m = rx.search(line)
            if m:
                bad.append(f"{os.path.relpath(page, ROOT)}:{n}: {what} {m.group(0)!r}")
    assert not bad, "history belongs in docs/measurements/:\n" + "\n".join(bad)


def test_the_check_finds_history():
    assert COMMIT.search("at `5cdd3d4` (before)") and not COMMIT.search("seer_envs/_batch.py abcdefg")
    assert DATE.search("on 2026-12-02 at 15:54") and ISSUE.search("(issue 16: bounds)")
    assert MET.search("-> MET") and not MET.search("METHOD, Meta")
    assert not DATE.search(RECORD_LINK.sub("", "[the runs](measurements/dev2-2026-12-02/README.md)"))


def test_narratives_are_few():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "doc_narrative.py")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    share = float(r.stdout.strip().splitlines()[-1].split()[-1].rstrip("%"))
    assert share < 5.0, r.stdout


FIGURE = re.compile(r"\b\d[\d,]*(?:\.\d+)?\s*(?:x|ms|us|ns|M events/s|steps/s|k|M|%)(?![\w/])|\|\s*\d{3,}[\d,.]*\s*\|")
COMMAND = re.compile(r"`(?:PYTHONPATH=\S+ )?(?:python|seer|stpa|pytest|valgrind|perf)\b[^`]*`|\]\((?:\.\./)?(?:docs/)?"
                     r"(?:measurements/|evaluation\.md)|^(?:python|seer) ", re.M)
GENERATED = {"docs/evaluation.md", "docs/bad_input.md", "docs/baselines.md"}      # the command that writes them is on top


def _tables(page):
    lines = open(page, encoding="utf-8").read().splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"^\|\s*-{3}", lines[i + 1]):
            j = i
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            yield i + 1, lines[max(0, i - 14):i], lines[i:j], lines[j:j + 4]
            i = j
        else:
            i += 1


def test_the_table_check_finds_a_table_without_its_command(tmp_path, monkeypatch):
    page = tmp_path / "p.md"
    page.write_text("Speed:\n\n| grid | steps/s |\n| --- | --- |\n| 8x8 | 24254 |\n")
    assert [t for t in _tables(str(page))] and FIGURE.search("| 8x8 | 24254 |")
    assert not COMMAND.search("Speed:\n\n| grid | steps/s |")
    assert COMMAND.search("`python benchmarks/vector_env.py` gives:")


def test_every_table_of_figures_names_its_command():
    missing = []
    for page in PAGES:
        rel = os.path.relpath(page, ROOT)
        if rel in GENERATED:
            continue
        for n, before, table, after in _tables(page):
            if table[0].startswith(("| bound |", "| parameter |")) or not any(
                    FIGURE.search(row) for row in table[2:]):
                continue            # a model's bounds and defaults are a specification, not measurements
            if not COMMAND.search("\n".join(before + table + after)):
                missing.append(f"{rel}:{n}: {table[0][:80]}")
    assert not missing, "tables of figures without their command:\n" + "\n".join(missing)
