# SPDX-License-Identifier: BSD-3-Clause
"""BenchMARL's Experiment through SEER's module, in any import order:
BenchMARL first (``import benchmarl.experiment``, as its scripts start), with
the ``.pth`` SEER installs (seer-torchrl-names.pth, setup.py)."""

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


@pytest.mark.heavy
def test_experiment_from_seer_module_first():
    r = _run("from seer_envs.integrations.benchmarl import Experiment, ExperimentConfig, DEFAULT_TASK\n"
             "import benchmarl.experiment as e\n"
             "assert Experiment is e.Experiment and ExperimentConfig is e.ExperimentConfig\n"
             "assert DEFAULT_TASK.name == 'PCS_HOTSPOT_V1'\n"
             "assert DEFAULT_TASK.get_task().env_id == 'pcs_hotspot_v1'")
    assert r.returncode == 0, r.stderr[-2000:]


@pytest.mark.heavy
def test_seer_module_after_a_failed_benchmarl_import():
    r = _run("try:\n    from benchmarl.experiment import Experiment\nexcept ImportError:\n    pass\n"
             "from seer_envs.integrations.benchmarl import Experiment, SeerTask\n"
             "from benchmarl.experiment import ExperimentConfig\n"
             "print(Experiment.__name__)")
    assert r.returncode == 0 and "Experiment" in r.stdout, r.stderr[-2000:]


def _run_with_pth(code, tmp_path):
    """``code`` in a Python whose site-packages hold SEER's .pth, as an install
    leaves it (a site dir added the way site.py adds site-packages)."""
    import shutil
    site_dir = tmp_path / "site"
    site_dir.mkdir()
    shutil.copy(os.path.join(ROOT, "seer-torchrl-names.pth"), site_dir)
    return _run(f"import site; site.addsitedir({str(site_dir)!r})\n" + code)


@pytest.mark.heavy
def test_benchmarl_first_then_seers_task(tmp_path):
    r = _run_with_pth("import sys\n"
                      "import benchmarl.experiment\n"                  # BenchMARL's usual first line
                      "assert 'seer_envs' not in sys.modules\n"       # the .pth imports no SEER module
                      "from benchmarl.experiment import Experiment, ExperimentConfig\n"
                      "from seer_envs.integrations.benchmarl import SeerTask, Experiment as E\n"
                      "assert E is Experiment\n"
                      "task = SeerTask.PCS_V0.get_task({'grid_width': 2, 'grid_height': 2})\n"
                      "env = task.get_env_fun(num_envs=2, continuous_actions=False, seed=0, device='cpu')()\n"
                      "td = env.rollout(3)\n"
                      "print(tuple(td.batch_size))", tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().endswith("(2, 3)"), r.stdout


def _run_without_pth(code):
    """``code`` in a Python that sees site-packages but runs none of its
    ``.pth`` files (``-S``, then the site dirs put on ``sys.path`` by hand),
    whether or not SEER's .pth is installed there."""
    import site
    head = f"import sys; sys.path.extend({site.getsitepackages()!r})\n"      # this venv's, as the parent sees them
    return subprocess.run([sys.executable, "-S", "-c", head + code], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, PYTHONPATH=ROOT))


@pytest.mark.heavy
def test_without_the_pth_benchmarl_first_fails_as_documented():
    # what the .pth is for: TorchRL 0.14 has no SyncDataCollector of its own
    native = _run_without_pth("import torchrl.collectors as c; print(hasattr(c, 'SyncDataCollector'))")
    assert native.returncode == 0, native.stderr[-2000:]
    r = _run_without_pth("import benchmarl.experiment")
    if native.stdout.strip() == "True":                 # an older TorchRL: nothing to fix
        assert r.returncode == 0, r.stderr[-2000:]
    else:
        assert r.returncode != 0 and "SyncDataCollector" in r.stderr


def test_the_pth_costs_a_python_start_no_import(tmp_path):
    r = _run_with_pth("import sys\n"
                      "print(sorted(m for m in sys.modules if m.split('.')[0] in "
                      "('torch', 'torchrl', 'seer_envs', 'numpy', 'benchmarl')))\n"
                      "print([type(f).__name__ for f in sys.meta_path][0])", tmp_path)
    assert r.returncode == 0 and r.stdout.split() == ["[]", "AliasFinder"], r.stdout + r.stderr[-2000:]


def test_setup_puts_the_pth_beside_the_packages(tmp_path):
    r = subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(tmp_path / "lib")],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert (tmp_path / "lib" / "seer-torchrl-names.pth").read_text() == open(
        os.path.join(ROOT, "seer-torchrl-names.pth")).read()
