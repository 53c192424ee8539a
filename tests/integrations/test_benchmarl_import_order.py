# SPDX-License-Identifier: BSD-3-Clause
"""BenchMARL's Experiment through SEER's module, in any import order."""

import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytest.importorskip("torchrl")
if importlib.util.find_spec("benchmarl") is None:      # found, not imported: importing it alone fails
    pytest.skip("benchmarl is not installed", allow_module_level=True)


def _run(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=ROOT))


def test_experiment_from_seer_module_first():
    r = _run("from seer_envs.integrations.benchmarl import Experiment, ExperimentConfig, DEFAULT_TASK\n"
             "import benchmarl.experiment as e\n"
             "assert Experiment is e.Experiment and ExperimentConfig is e.ExperimentConfig\n"
             "assert DEFAULT_TASK.name == 'PCS_HOTSPOT_V1'\n"
             "assert DEFAULT_TASK.get_task().env_id == 'pcs_hotspot_v1'")
    assert r.returncode == 0, r.stderr[-2000:]


def test_seer_module_after_a_failed_benchmarl_import():
    r = _run("try:\n    from benchmarl.experiment import Experiment\nexcept ImportError:\n    pass\n"
             "from seer_envs.integrations.benchmarl import Experiment, SeerTask\n"
             "from benchmarl.experiment import ExperimentConfig\n"
             "print(Experiment.__name__)")
    assert r.returncode == 0 and "Experiment" in r.stdout, r.stderr[-2000:]
