# SPDX-License-Identifier: BSD-3-Clause
"""The docs site (mkdocs.yml: MkDocs, the Material theme, mkdocstrings'
API pages) builds with no warning, and its pages are there."""

import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.heavy
@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None,
                    reason='needs the docs extra: pip install -e ".[dev,docs]"')
def test_site_builds_strict(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT] + [p for p in sys.path if p]),
               NO_MKDOCS_2_WARNING="1")
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "WARNING" not in r.stderr, r.stderr[-3000:]
    site = tmp_path / "site"
    for page in ("index.html", "training/index.html", "api/seer_envs/index.html",
                 "api/seer_runtime/index.html", "api/stpa/index.html", "measurements/index.html"):
        assert (site / page).exists(), page
    api = (site / "api" / "seer_envs" / "index.html").read_text()
    for name in ("vector_env", "Snapshot", "make"):
        assert name in api                 # the reference is generated from the docstrings
    runtime = (site / "api" / "seer_runtime" / "index.html").read_text()
    assert "run_until" in runtime
    stpa_page = (site / "api" / "stpa" / "index.html").read_text()
    for name in ("stpa.choose", "stpa.preflight.preflight", "stpa.probe.probe"):
        assert f'id="{name}"' in stpa_page, name       # every listed member rendered
    text = re.sub(r"<[^>]+>", "", runtime)
    assert re.search(r"Engine\(\s*scenario,\s*num_threads=1,\s*seed=0,\s*max_pending_per_lp=4194304", text)
    assert re.search(r"Scenario\(\s*lps_per_copy,\s*lookahead,\s*num_copies=1\s*\)", text)
    assert "method descriptor" not in runtime and "Scenario(*args" not in text
    home = (site / "index.html").read_text()
    assert 'href="baselines/"' in home                                  # baselines in the nav
    assert 'href="measurements/"' in home and "2026-11-29" not in home  # the dated logs off the nav
    assert (site / "measurements" / "dev2-2026-11-29" / "index.html").exists()   # still built, linked
    import seer_envs
    for sid in seer_envs.envs():                          # one reference page per env, in the nav
        assert (site / "envs" / sid / "index.html").exists(), sid
        assert f'href="envs/{sid}/"' in home, sid
    pcs_page = (site / "envs" / "pcs_v0" / "index.html").read_text()
    assert 'id="parameters"' in pcs_page and "<code>grid_width</code>" in pcs_page
    spec = importlib.util.spec_from_file_location("doc_math", os.path.join(ROOT, "tests", "docs", "test_doc_math.py"))
    doc_math = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(doc_math)                       # 2**14 rendered as "2" and a bold "14"
    mangled = [f"{p.relative_to(site)}: {m}" for p in sorted(site.rglob("*.html"))
               for m in doc_math.mangled_html(p.read_text(encoding="utf-8"))]
    assert not mangled, "math mangled by Markdown in the built site:\n" + "\n".join(mangled[:20])


@pytest.mark.skipif(importlib.util.find_spec("griffe") is None,
                    reason='needs the docs extra: pip install -e ".[dev,docs]"')
def test_docstrings_become_markdown():
    spec = importlib.util.spec_from_file_location("griffe_rst", os.path.join(ROOT, "tools", "griffe_rst.py"))
    g = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(g)
    assert g.markdown("See :class:`seer_runtime.Engine` and :func:`~x.y`.") == "See `seer_runtime.Engine` and `x.y`."
    assert g.markdown("Text.\n\n>>> 1 + 1\n2\n\nMore.") == "Text.\n\n```python\n>>> 1 + 1\n2\n```\n\nMore."
    doc = "Runs it.\n\nParameters\n----------\nn : int\n    How many.\n\nErrors are the same at any count.\n"
    out = g.prose_out_of_sections(doc)
    assert out.index("Errors are the same") < out.index("Parameters") < out.index("n : int")
    assert g.definition_lists("Facade\n------\nEngine\n    The loop.\n") == "**Facade**\n\n- `Engine`: The loop.\n"
