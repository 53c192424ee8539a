# SPDX-License-Identifier: BSD-3-Clause
"""README's "Before you start" works top to bottom on a fresh Debian or
Ubuntu machine: a virtual-environment step comes before the two commands
(which .ci/run still reads as exactly two lines), the guide installs the
same extras, and the disk size README states is the one measured."""

import importlib.metadata as md
import importlib.util
import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV = "python3 -m venv .venv && . .venv/bin/activate"


def _readme():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        return f.read()


def _ci_block():
    """The lines .ci/run takes from README (its own awk program)."""
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as f:
        prog = re.search(r"block=\$\(awk '([^']+)' README\.md\)", f.read()).group(1)
    r = subprocess.run(["awk", prog, "README.md"], cwd=ROOT, capture_output=True, text=True, check=True)
    return r.stdout.splitlines()


def test_a_virtual_environment_comes_before_the_two_commands():
    text = _readme()
    before = text.split("\n## The two commands\n")[0].split("\n## Before you start\n")[1]
    blocks = re.findall(r"^```bash\n(.*?)^```", before, re.S | re.M)
    assert any(VENV in b for b in blocks), "README: a fenced venv step under 'Before you start'"
    install, tests = _ci_block()                     # still exactly the two commands
    assert install.startswith("pip install -e \".[dev,docs]\"") and tests == "pytest -q"


def test_the_guide_installs_what_readme_installs():
    with open(os.path.join(ROOT, "docs", "guide.md"), encoding="utf-8") as f:
        guide = f.read()
    assert VENV in guide
    extras = re.findall(r'pip install -e "\.\[([\w,]+)\]"', guide.split("## ")[1])
    assert extras and set(extras) == {"dev,docs"}, extras


def _closure(name, extras=()):
    from packaging.requirements import Requirement
    seen, stack = set(), [(name, tuple(extras))]
    while stack:
        n, ex = stack.pop()
        key = (n.lower().replace("_", "-"), ex)
        if key in seen:
            continue
        seen.add(key)
        try:
            reqs = md.distribution(n).requires or []
        except md.PackageNotFoundError:
            continue
        for r in map(Requirement, reqs):
            if r.marker is None or any(r.marker.evaluate({"extra": e}) for e in ("",) + ex):
                stack.append((r.name, tuple(r.extras)))
    return {k for k, _ in seen} - {"seer"}


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("packaging") is None,
                    reason='measures the [dev,docs] install: pip install -e ".[dev,docs]"')
def test_the_stated_disk_size_is_the_measured_one():
    stated = int(re.search(r"- Disk: about \d+ MiB for the install below: (\d+) MiB of packages", _readme()).group(1))
    total = 0
    for name in _closure("seer", ("dev", "docs")):
        try:
            d = md.distribution(name)
        except md.PackageNotFoundError:
            continue
        total += sum(os.path.getsize(d.locate_file(f)) for f in d.files or () if os.path.isfile(d.locate_file(f)))
    measured = total / 2**20
    assert 0.75 * measured <= stated <= 1.33 * measured, f"README says {stated} MiB, the packages take {measured:.0f}"
