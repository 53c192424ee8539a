# SPDX-License-Identifier: BSD-3-Clause
"""Dependencies point one way: seer_runtime <- seer_envs -> stpa, with the
``seer`` CLI on top.  Each layer is imported (and its registry read) in a
fresh interpreter, and sys.modules must hold nothing from a layer above."""

import ast
import json
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# layer -> (code run in a fresh interpreter, packages it must not load)
CASES = {
    "seer_runtime": ("import seer_runtime, seer_runtime.spec; from seer_runtime.models import phold;"
                     "phold.run(num_lps=16, end_time=2.0, num_threads='auto');"
                     "seer_runtime.Engine(phold.PholdModel(8, 1.0, 1.0, 0.5, 1, 0), num_threads='auto');"
                     "seer_runtime.registry()", ("seer_envs", "stpa", "seer")),
    "stpa": ("import stpa, stpa.cli, stpa.model, stpa.features, stpa.preflight, stpa.select,"
             " stpa.probe, seer_runtime; stpa.thread_caps();"
             "s = seer_runtime.registry()['phold'];"
             "stpa.choose(s.stpa_key({'num_lps': 64}), s.opener({'num_lps': 64}))",
             ("seer_envs", "seer")),
    "seer_envs": ("import seer_envs; seer_envs.registry(); seer_envs.make('pcs_v0')", ("seer",)),
}


@pytest.mark.parametrize("layer", list(CASES))
def test_no_upward_import(layer):
    code, banned = CASES[layer]
    probe = (f"{code}\nimport sys, json\n"
             "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert layer in loaded
    assert not loaded & set(banned), f"{layer} imports {sorted(loaded & set(banned))}"


def test_stpa_imports_no_scenario_by_name():
    """STPA's sources name no scenario (they would need the registry)."""
    names = ("seer_envs", "pcs_v0", "aircraft_v0", "phold", "pcs_env", "aircraft_env")
    for f in sorted(os.listdir(os.path.join(ROOT, "stpa"))):
        if f.endswith(".py"):
            text = open(os.path.join(ROOT, "stpa", f)).read()
            assert not [n for n in names if n in text], f


BANNED = {"seer_runtime": ("seer_envs", "stpa", "seer"), "stpa": ("seer_envs", "seer"),
          "seer_envs": ("seer",)}


def _imports(path):
    text = open(path).read()
    if path.endswith(".py"):
        out = set()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                out |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                out.add(node.module.split(".")[0])
        return out
    # Cython: (c)import / from ... (c)import lines, wherever they are
    return {m.group(1) for m in re.finditer(r"^\s*(?:from|c?import)\s+([A-Za-z_]\w*)", text, re.M)}


@pytest.mark.parametrize("layer", list(BANNED))
def test_no_upward_import_anywhere_in_the_sources(layer):
    """Also the lazy imports inside functions, which a fresh import misses."""
    bad = []
    for d, _, files in os.walk(os.path.join(ROOT, layer)):
        for f in files:
            if f.endswith((".py", ".pyx", ".pxd")):
                hit = _imports(os.path.join(d, f)) & set(BANNED[layer])
                if hit:
                    bad.append((os.path.relpath(os.path.join(d, f), ROOT), sorted(hit)))
    assert not bad


# Modules holding data about several scenarios: STPA's training sweep (which
# configurations `stpa collect` measures).  PettingZoo's version modules
# (seer_envs.pcs_v0, ...) are made from the registry (seer_envs/_moved.py).
_NAMED_BY_DESIGN = {"seer/stpa_sweep.py"}


# seer_envs' generic layers (issue 53): each a subpackage, none naming a scenario.
GENERIC_PACKAGES = ("episode", "layout", "snapshot", "views", "scenario")


def test_generic_layers_name_no_scenario():
    """Scenario knowledge lives in the scenario's folder (its copies, spec,
    env): no string constant in the generic modules of seer_envs or in seer/
    names a scenario id (docstrings may show one as an example)."""
    sys.path.insert(0, ROOT)
    import seer_envs
    ids = set(seer_envs.envs())
    found = []
    for folder in ("seer_envs", "seer") + tuple(f"seer_envs/{p}" for p in GENERIC_PACKAGES):
        for name in sorted(os.listdir(os.path.join(ROOT, folder))):
            rel = f"{folder}/{name}"
            if not name.endswith(".py") or rel in _NAMED_BY_DESIGN:
                continue
            tree = ast.parse(open(os.path.join(ROOT, rel)).read())
            docs = {id(n.body[0].value) for n in ast.walk(tree)
                    if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                    and n.body and isinstance(n.body[0], ast.Expr)
                    and isinstance(n.body[0].value, ast.Constant)}
            for node in ast.walk(tree):
                if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
                        and any(i in node.value for i in ids)):
                    found.append(f"{rel}:{node.lineno}: {node.value[:60]!r}")
    assert not found, "\n".join(found)


def test_the_top_level_is_small():
    """seer_envs' top level holds the package and the deprecated paths'
    finder (and the snapshot kernel): every layer is a subpackage, every
    scenario a folder, and the version modules are made from the registry."""
    top = sorted(f for f in os.listdir(os.path.join(ROOT, "seer_envs")) if f.endswith(".py"))
    assert top == ["__init__.py", "_moved.py"], top
    for p in GENERIC_PACKAGES:
        assert os.path.exists(os.path.join(ROOT, "seer_envs", p, "__init__.py")), p


@pytest.mark.parametrize("package", GENERIC_PACKAGES)
def test_no_generic_layer_imports_a_scenario(package):
    """The layers below the scenarios import none of them, nor an old
    (deprecated) module path."""
    sys.path.insert(0, ROOT)
    from seer_envs._moved import MOVED
    import seer_envs
    scenarios = {n for n in os.listdir(os.path.join(ROOT, "seer_envs"))
                 if os.path.exists(os.path.join(ROOT, "seer_envs", n, "spec.py"))}
    assert scenarios and not scenarios & set(GENERIC_PACKAGES)
    from seer_test_helpers import imported_modules
    bad = []
    for f, m in imported_modules(os.path.join(ROOT, "seer_envs", package)):
        parts = m.split(".")
        if parts[0] == "seer_envs" and len(parts) > 1 and (
                parts[1] in scenarios or (parts[1] in MOVED and len(parts) == 2)):
            bad.append(f"{package}/{f}: {m}")
    assert not bad, bad
    assert seer_envs


@pytest.mark.parametrize("package", ("episode", "layout"))
def test_the_core_imports_no_view(package):
    """The episode core and the layouts sit below the views and the
    integrations: no import of theirs, lazy ones included."""
    from seer_test_helpers import imported_modules
    bad = [f"{package}/{f}: {m}" for f, m in imported_modules(os.path.join(ROOT, "seer_envs", package))
           if m.split(".")[:2] in (["seer_envs", "views"], ["seer_envs", "integrations"])]
    assert not bad, bad


def test_no_isinstance_on_a_layout_outside_the_layouts():
    """The two layouts (Batch, Groups) share one protocol: no code outside
    seer_envs/layout/ tells them apart by class."""
    bad = []
    for d, _, files in os.walk(os.path.join(ROOT, "seer_envs")):
        if os.path.relpath(d, ROOT).startswith(os.path.join("seer_envs", "layout")):
            continue
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(d, f)
            for node in ast.walk(ast.parse(open(path).read())):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                        and node.func.id == "isinstance" and len(node.args) == 2
                        and {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
                        & {"Batch", "Groups"}):
                    bad.append(f"{os.path.relpath(path, ROOT)}:{node.lineno}")
    assert not bad, bad


def test_no_scenario_imports_a_private_module():
    """A scenario builds on the public kit only: no import (or cimport) of
    a private module or name of SEER's packages, ``_``-prefixed, from any
    scenario folder (the out-of-tree guide, docs/new_scenario.md, relies on it)."""
    from seer_test_helpers import imported_modules
    scenarios = [n for n in sorted(os.listdir(os.path.join(ROOT, "seer_envs")))
                 if os.path.exists(os.path.join(ROOT, "seer_envs", n, "spec.py"))]
    assert {"pcs", "aircraft", "gossip"} <= set(scenarios)
    pyx = re.compile(r"^\s*(?:from\s+([\w.]+)\s+c?import\s+([\w, ]+)|c?import\s+([\w.]+))", re.M)
    bad = []
    for name in scenarios:
        folder = os.path.join(ROOT, "seer_envs", name)
        found = list(imported_modules(folder))
        for f in sorted(os.listdir(folder)):
            if f.endswith((".pyx", ".pxd")):
                for m in pyx.finditer(open(os.path.join(folder, f)).read()):
                    mods = ([m.group(1)] + [f"{m.group(1)}.{n.strip()}" for n in m.group(2).split(",")]
                            if m.group(1) else [m.group(3)])
                    found += [(f, x) for x in mods]
        for f, m in found:
            parts = m.split(".")
            if parts[0] in ("seer_runtime", "seer_envs", "stpa") and any(p.startswith("_") for p in parts[1:]):
                bad.append(f"{name}/{f}: {m}")
    assert not bad, bad
