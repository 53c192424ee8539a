# SPDX-License-Identifier: BSD-3-Clause
"""README's headline table is the one ``benchmarks/run_all.py`` writes from
the CSVs of the run that docs/evaluation.md shows: no figure copied by
hand, none left behind by a later run."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import run_all  # noqa: E402


def _block(page):
    i, j = page.index(run_all.BLOCK[0]), page.index(run_all.BLOCK[1])
    return page[i + len(run_all.BLOCK[0]):j].strip()


def test_readme_headline_is_the_evaluation_runs():
    text = run_all.headline(os.path.join(ROOT, "docs", "evaluation"))
    assert text is not None, "docs/evaluation/ lacks a CSV the headline reads"
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    assert _block(readme) == text, "README's headline differs from docs/evaluation/*.csv: " \
                                   "run python benchmarks/run_all.py"


def test_write_block_replaces_only_the_block(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(f"top\n{run_all.BLOCK[0]}\nold\n{run_all.BLOCK[1]}\nbottom\n")
    assert run_all.write_block(str(page), "| new |")
    assert page.read_text() == f"top\n{run_all.BLOCK[0]}\n| new |\n{run_all.BLOCK[1]}\nbottom\n"
    (tmp_path / "q.md").write_text("no markers\n")
    assert not run_all.write_block(str(tmp_path / "q.md"), "x")
