# SPDX-License-Identifier: BSD-3-Clause
"""An example run without the library it needs says in one line what to
install and exits 2, whether or not that library is installed here (the
test hides it)."""

import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
NEEDS = {"cleanrl_ippo_pcs.py": ("torch",), "cleanrl_mappo_pcs.py": ("torch",),
         "cleanrl_ppo_aircraft.py": ("torch",), "cleanrl_mappo_aircraft.py": ("torch",),
         "rllib_ppo.py": ("torch", "ray"), "rllib_tune_checkpoint.py": ("torch", "ray"),
         "benchmarl_mappo_pcs.py": ("torch", "benchmarl")}


def test_every_example_is_listed():
    found = {f for f in os.listdir(EXAMPLES) if f.endswith(".py") and not f.startswith("_")}
    assert found == set(NEEDS)


@pytest.mark.parametrize("script, libs", sorted(NEEDS.items()))
@pytest.mark.parametrize("which", [0, -1])
def test_a_missing_library_is_one_line_and_exit_2(script, libs, which):
    """The script's first or last library hidden (with the ones before it
    present where they are installed): the first missing one is named."""
    hidden = libs[which]
    code = (f"import sys, runpy; sys.modules[{hidden!r}] = None; sys.path.insert(0, {EXAMPLES!r}); "
            f"sys.argv = [{script!r}, '--help']; runpy.run_path({os.path.join(EXAMPLES, script)!r}, "
            "run_name='__main__')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2, r.stderr[-2000:]
    assert "Traceback" not in r.stderr and r.stderr.count("\n") == 1, r.stderr
    missing = next(lib for lib in libs if lib == hidden or importlib.util.find_spec(lib) is None)
    assert f"needs {missing}," in r.stderr and "pip install" in r.stderr
