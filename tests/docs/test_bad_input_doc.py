# SPDX-License-Identifier: BSD-3-Clause
"""docs/bad_input.md is generated from the catalogue the tests run
(scripts/bad_input_doc.py), and no other page states a stale count of it."""

import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "reliability"))
from bad_input_cases import CASES  # noqa: E402

PAGES = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def test_bad_input_page_is_the_generated_one():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bad_input_doc.py")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    with open(os.path.join(ROOT, "docs", "bad_input.md")) as f:
        assert f.read() == r.stdout, "stale: run python scripts/bad_input_doc.py > docs/bad_input.md"


def test_pages_that_count_the_bad_input_cases_count_them_right():
    stated = []
    for page in PAGES:
        with open(page) as f:
            for line in f:
                if "bad_input" in line or "bad input" in line.lower():
                    stated += [(os.path.relpath(page, ROOT), int(n))
                               for n in re.findall(r"\b(\d+) (?:tested )?cases\b", line)]
    assert stated, "docs/bad_input.md states the number of cases"
    assert [s for s in stated if s[1] != len(CASES)] == []
