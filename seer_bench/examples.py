# SPDX-License-Identifier: BSD-3-Clause
"""The example trainers (``examples/*.py``) as modules, for the benchmarks
that train with them (``benchmarks/baselines.py``,
``benchmarks/training_speed.py``) and the tests: loaded from their files,
so nothing edits ``sys.path``.  The examples ship with the source tree, not
with an installed wheel."""

import ast
import importlib.util
import os
import sys

#: The source tree's examples folder (an editable install or a clone).
FOLDER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


def load(name, folder=FOLDER):
    """The example ``name`` (e.g. ``"cleanrl_ippo_pcs"``) as a module,
    imported once per process and registered under its name, as ``import``
    would.  FileNotFoundError names the folder when the example is not
    there (an installed wheel has no examples: use a clone)."""
    if name in sys.modules:
        return sys.modules[name]
    path = os.path.join(folder, f"{name}.py")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"example {name!r} not found at {path}: the examples ship with SEER's source "
                                "tree (git clone, then pip install -e .)")
    for sibling in _siblings(path, folder):      # e.g. cleanrl_mappo_pcs takes the task from cleanrl_ippo_pcs
        load(sibling, folder)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules[name]
        raise
    return mod


def _siblings(path, folder):
    """The other examples the file at ``path`` imports at its top level (a
    script's own folder is on ``sys.path`` when it runs; a module loaded
    from its file has them loaded first instead)."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    names = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names += [n.name for n in node.names]
    return [n for n in dict.fromkeys(names) if os.path.isfile(os.path.join(folder, f"{n}.py"))]
