# SPDX-License-Identifier: BSD-3-Clause
"""Every registered env has its reference page (docs/envs/<id>.md, written
by scripts/env_reference_doc.py from the spec) with a row for each of its
config fields, per copy or shared as its ``Copies`` declares; the pages are
in the site's nav and index, and equal to what the script writes now.  The
nav holds no dated measurement log (one Measurements page links them)."""

import dataclasses
import importlib.util
import os
import re

import pytest

import seer_envs
from seer_envs.episode.worlds import per_copy_fields

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENVS = seer_envs.envs()
ROW = re.compile(r"^\| `(\w+)` \| [^|]* \| .* \| (per copy|shared) \| .*\|$", re.M)


def page_path(sid):
    return os.path.join(ROOT, "docs", "envs", f"{sid}.md")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def page_problems(spec, text):
    """What a page lacks: a config field with no row in its parameter table,
    a row for no field, a field marked per copy or shared against ``per_copy``."""
    rows = dict(ROW.findall(text))
    per = set(per_copy_fields(spec.copies))
    fields = [f.name for f in dataclasses.fields(spec.config)]
    out = [f"no row for the config field {name!r}" for name in fields if name not in rows]
    out += [f"a row for {name!r}, not a field of {spec.config.__name__}" for name in rows if name not in fields]
    out += [f"{name!r} marked {rows[name]!r}" for name in fields
            if name in rows and (rows[name] == "per copy") != (name in per)]
    return out


def nav_pages():
    """The Markdown files mkdocs.yml's nav lists."""
    text = read(os.path.join(ROOT, "mkdocs.yml"))
    nav = text[text.index("\nnav:"):]
    nav = nav[:re.search(r"\n\S", nav[1:]).start() + 1]
    return re.findall(r"([\w./-]+\.md)\s*$", nav, re.M)


def generator():
    spec = importlib.util.spec_from_file_location("env_reference_doc",
                                                  os.path.join(ROOT, "scripts", "env_reference_doc.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("sid", list(ENVS))
def test_every_env_has_a_page_with_every_config_field(sid):
    path = page_path(sid)
    assert os.path.exists(path), f"{sid} has no reference page: run python scripts/env_reference_doc.py"
    assert page_problems(ENVS[sid], read(path)) == []


def test_the_check_finds_a_missing_field():
    spec = ENVS["gossip_v0"] if "gossip_v0" in ENVS else next(iter(ENVS.values()))
    text = read(page_path(spec.id))
    first = dataclasses.fields(spec.config)[0].name
    lacking = "\n".join(ln for ln in text.split("\n") if not ln.startswith(f"| `{first}` |"))
    assert page_problems(spec, lacking) == [f"no row for the config field {first!r}"]
    assert page_problems(spec, text.replace("| shared |", "| per copy |", 1))


def test_every_page_is_in_the_nav_and_the_index():
    nav = nav_pages()
    index = read(os.path.join(ROOT, "docs", "envs", "README.md"))
    for sid in ENVS:
        assert f"envs/{sid}.md" in nav, f"mkdocs.yml: add envs/{sid}.md under Environments > Reference"
        assert f"]({sid}.md)" in index, sid
    assert "envs/README.md" in nav


def test_pages_are_the_generated_ones():
    want = generator().pages()
    stale = [rel for rel, text in want.items()
             if not os.path.exists(os.path.join(ROOT, rel)) or read(os.path.join(ROOT, rel)) != text]
    assert not stale, f"stale: {stale}; run python scripts/env_reference_doc.py"
    extra = set(os.listdir(os.path.join(ROOT, "docs", "envs"))) - {os.path.basename(r) for r in want}
    assert not extra, f"docs/envs/ holds pages of no registered env: {sorted(extra)}"


def test_the_generator_writes_math_and_bounds_as_the_site_shows_them():
    g = generator()
    assert g.number(2 ** 53) == "2^53" and g.number(2 ** 32 - 3) == "2^32 - 3" and g.number(4096) == "4096"
    assert g.number(60.0) == "60" and g.number(float("inf")) == "inf" and g.number(3.4e37) == "3.4e+37"
    assert g.value_range({"lo": 0.0, "lo_open": True, "allow_inf": True}) == "`(0, inf]`"
    assert g.value_range({"lo": 1, "hi": 4096, "integer": True}) == "integer in `[1, 4096]`"
    assert g.value_range({"choices": (True, False)}) == "one of `True`, `False`"
    assert g.cell("exp(-d**2 / (2 radius**2)), a*b, -drag * |v| * v, `x**2`") == \
        "exp(-d^2 / (2 radius^2)), a x b, -drag * \\|v\\| * v, `x**2`"
    doc = ("Title\n=====\n\nText ``x``.\n\n====  ====\nA     one\n      two\nB     three\n====  ====\n\n"
           "Parameters (all keyword): ``a`` (1).\n\nSee docs/guide.md.")
    assert g.docstring_markdown(doc) == ("Text `x`.\n\n- **A**: one two\n- **B**: three\n\n"
                                         "See [guide.md](../guide.md).")


def test_the_nav_holds_no_dated_measurement_log():
    nav = nav_pages()
    logs = [p for p in nav if p.startswith("measurements/") and p != "measurements/README.md"]
    assert logs == [], "mkdocs.yml: the dated logs belong on measurements/README.md, not in the nav"
    assert "measurements/README.md" in nav
    index = read(os.path.join(ROOT, "docs", "measurements", "README.md"))
    folders = sorted(d for d in os.listdir(os.path.join(ROOT, "docs", "measurements"))
                     if os.path.isdir(os.path.join(ROOT, "docs", "measurements", d)))
    assert [d for d in folders if f"]({d}/README.md)" not in index] == [], "every log linked from its index"
