# SPDX-License-Identifier: BSD-3-Clause
"""Every fenced Python and shell snippet of README.md and docs/*.md runs.

A snippet runs as written, in a fresh folder holding links to the
repository's ready files (scenarios/, examples/, benchmarks/, tools/), with a time
limit.  An HTML comment on the line just above a fence changes that:

- ``<!-- doc-test: COMMAND -->`` above a shell block runs COMMAND instead, a
  short form of a long command (the page says how long the full one takes);
- ``<!-- doc-test: OLD => NEW | OLD2 => NEW2 -->`` above a Python block
  replaces text before running it (a smaller world, say);
- ``<!-- skip-doc-test: REASON -->`` does not run it (installs, Ray clusters);
  the reason is required and the list of skips is printed by
  ``test_skips_are_few_and_explained``.

Snippets that import RLlib, SuperSuit, torch or TorchRL (or run a script of
benchmarks/ or examples/ that does) skip when those are not
installed (``pip install -e ".[dev]"`` only); ``.ci/run`` installs them and
runs this file again with no skip allowed.
"""

import glob
import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGES = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
SHELL = {"bash", "sh", "shell", "console"}
TIMEOUT_S = 600
OPTIONAL = {"ray": "ray", "supersuit": "supersuit", "torch": "torch", "torchrl": "torchrl"}   # import name -> extra
MARK = re.compile(r"^<!--\s*(skip-doc-test|doc-test):\s*(.*?)\s*-->\s*$")


def snippets():
    out = []
    for page in PAGES:
        lines = open(page, encoding="utf-8").read().splitlines()
        i = 0
        while i < len(lines):
            m = re.match(r"^```(\w*)\s*$", lines[i])
            if not m:
                i += 1
                continue
            lang, start = m.group(1).lower(), i
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            body = "\n".join(lines[i + 1:j]) + "\n"
            mark = MARK.match(lines[start - 1]) if start > 0 else None
            if lang == "python" or lang in SHELL:
                kind = "python" if lang == "python" else "shell"
                out.append(dict(page=os.path.relpath(page, ROOT), line=start + 1, kind=kind, body=body,
                                mark=mark.group(1) if mark else None, arg=mark.group(2) if mark else None))
            i = j + 1
    return out


ALL = snippets()
RUN = [s for s in ALL if s["mark"] != "skip-doc-test"]


def _prepared(s):
    body, arg = s["body"], s["arg"]
    if s["mark"] == "doc-test":
        if s["kind"] == "python" or "=>" in arg:
            for pair in arg.split("|"):
                old, new = (x.strip() for x in pair.split("=>"))
                assert old in body, f"{s['page']}:{s['line']}: doc-test replaces {old!r}, not in the snippet"
                body = body.replace(old, new)
        else:
            body = arg + "\n"
    return body


def _optional(body):
    # a shell line that runs one of the repository's scripts needs what that script imports
    for script in re.findall(r"\b((?:benchmarks|examples|tools/perf)/\w+\.py)\b", body):
        path = os.path.join(ROOT, script)
        if os.path.exists(path):
            body += open(path, encoding="utf-8").read()
    mods = set(re.findall(r"^\s*(?:import|from)\s+(\w+)", body, re.M))
    return mods & set(OPTIONAL)


def _needs(body):
    return [m for m in _optional(body) if importlib.util.find_spec(m) is None]


def _heavy(s):
    """A snippet that uses an RL library or runs a script of benchmarks/,
    examples/ or tools/perf/ is an integration run (seconds to minutes):
    marked ``heavy``, .ci/run's integration stage runs it."""
    body = _prepared(s)
    return bool(_optional(body) or re.search(r"\b(?:benchmarks|examples|tools/perf)/\w+\.py\b", body))


@pytest.mark.parametrize("s", [pytest.param(s, marks=[pytest.mark.heavy] if _heavy(s) else [],
                                            id=f"{s['page']}:{s['line']}") for s in RUN])
def test_snippet_runs(s, tmp_path):
    body = _prepared(s)
    missing = _needs(body)
    if missing:
        pytest.skip(f"needs {', '.join(missing)}: pip install torch==2.13.0 && pip install -e \".[dev,rllib,train,torchrl]\"")
    for d in ("scenarios", "examples", "benchmarks", "tools"):
        os.symlink(os.path.join(ROOT, d), tmp_path / d)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT] + [p for p in sys.path if p]),
               MPLBACKEND="Agg", PYTHONWARNINGS="ignore::DeprecationWarning")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    cmd = [sys.executable, "-c", body] if s["kind"] == "python" else ["bash", "-euo", "pipefail", "-c", body]
    try:
        r = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{s['page']}:{s['line']}: did not finish in {TIMEOUT_S} s; give it a short form")
    assert r.returncode == 0, f"{s['page']}:{s['line']} failed:\n{body}\n--- stderr ---\n{r.stderr[-3000:]}"
    assert r.stdout.strip() or r.stderr.strip(), f"{s['page']}:{s['line']} ran but printed nothing"


def test_every_page_is_scanned_and_most_snippets_run():
    pages = {s["page"] for s in ALL}
    assert {"README.md", "docs/guide.md", "docs/training.md", "docs/pcs.md", "docs/aircraft.md"} <= pages
    assert len(RUN) >= 10 and len(RUN) >= 2 * (len(ALL) - len(RUN))


def test_skips_are_few_and_explained():
    skips = [s for s in ALL if s["mark"] == "skip-doc-test"]
    for s in skips:
        assert len(s["arg"]) >= 15, f"{s['page']}:{s['line']}: skip-doc-test needs a reason"
        print(f"skipped: {s['page']}:{s['line']}: {s['arg']}")
    assert len(skips) <= 6
