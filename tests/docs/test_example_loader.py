# SPDX-License-Identifier: BSD-3-Clause
"""``seer_bench.examples.load``: the example trainers as modules, with no
``sys.path`` edit, in a fresh process (as ``baselines.py --jobs`` spawns)."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytest.importorskip("torch")


@pytest.mark.parametrize("name, sibling", [("cleanrl_mappo_pcs", "cleanrl_ippo_pcs"),
                                           ("cleanrl_mappo_aircraft", "cleanrl_ppo_aircraft")])
def test_an_example_that_imports_another_loads_in_a_fresh_process(name, sibling):
    code = (f"import sys; from seer_bench.examples import load; path = list(sys.path); m = load({name!r}); "
            f"assert sys.path == path; assert {sibling!r} in sys.modules; assert m.make_parser(); print('ok')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd="/")
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_a_missing_example_names_the_folder(tmp_path):
    from seer_bench.examples import load
    with pytest.raises(FileNotFoundError, match=str(tmp_path)):
        load("no_such_example", folder=str(tmp_path))
