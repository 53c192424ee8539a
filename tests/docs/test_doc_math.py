# SPDX-License-Identifier: BSD-3-Clause
"""Math survives Markdown: a power written ``2**14`` in prose renders as
"2" then a bold "14..." (on the site and on GitHub), so the pages write
powers as ``2^14`` or in code.  The check reads the Markdown sources (the
prose outside code spans and fenced blocks); tests/docs/test_site.py runs
the same check over the built site's HTML, which covers the docstrings."""

import glob
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGES = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "**", "*.md"),
                                                             recursive=True))
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+).+?\1")
# `**` (or a lone `*` for italics) glued on both sides to an operand: 2**14, e**-8, radius**2, a*b*c
POWER = re.compile(r"(?<=[\w).])\*\*(?=[\w(.-])|(?<=[\w)])\*(?=[\w(])")
# in HTML: a <strong>/<em> opened right after an operand, or closed right before one
MANGLED_HTML = re.compile(r"[\w)]<(strong|em)>|</(strong|em)>[\w(]")


def mangled_lines(text):
    """``(line number, line)`` of each prose line whose ``*`` would become markup."""
    out, fenced = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced and POWER.search(CODE_SPAN.sub("``", line)):
            out.append((n, line))
    return out


def mangled_html(html):
    """The places in a built page where emphasis starts or stops inside a word or number."""
    html = re.sub(r"<(code|pre)\b.*?</\1>", "", html, flags=re.S)
    return [html[max(0, m.start() - 40):m.end() + 40] for m in MANGLED_HTML.finditer(html)]


def test_the_check_finds_mangled_math():
    assert mangled_lines("bounds 2**14 and 2**30") and mangled_lines("exp(-d**2 / (2 radius**2))")
    assert mangled_lines("probability e**-8") and mangled_lines("| 64 UAVs x 10**5 substeps |")
    assert not mangled_lines("bounds 2^14 and `2**30`, **bold** text, a * b, `x**2`")
    assert not mangled_lines("```python\nx = 2**14\n```")
    assert mangled_html("<p>the bounds 2<strong>14 and 2</strong>30</p>")
    assert not mangled_html("<p><strong>Facade</strong> and <code>2**14</code></p>")


@pytest.mark.parametrize("page", PAGES, ids=[os.path.relpath(p, ROOT) for p in PAGES])
def test_no_math_mangled_by_markdown(page):
    with open(page, encoding="utf-8") as f:
        bad = mangled_lines(f.read())
    assert not bad, (f"{os.path.relpath(page, ROOT)}: write powers as 2^14 or in code "
                     "(`2**14`), a product as a x b:\n" + "\n".join(f"  {n}: {line[:120]}" for n, line in bad))
