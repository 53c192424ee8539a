# SPDX-License-Identifier: BSD-3-Clause
"""Every peer row ``benchmarks/vector_env.py`` prints runs to its end: SuperSuit
on PCS, PufferLib's two backends on PCS and on Aircraft, VMAS's ``discovery``
beside Aircraft, each at its smallest settings (a few seconds each).  The
peers are optional (README, "Optional, for RLlib"): each test skips when its
peer is missing, and ``.ci/run`` installs them all and allows no skip here.
What the rows measure is not checked, only that each prints its ratios."""

import os
import subprocess
import sys

import pytest

# whole runs of benchmarks/vector_env.py: .ci/run's integration stage (pytest -m heavy)
pytestmark = pytest.mark.heavy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# the smallest run: 2 copies of a 2x2 PCS grid, 2 steps, 1 round, no calibration
SMALL = ["--copies", "2", "--grid", "2", "--steps", "2", "--rounds", "1", "--no-halves"]


def _run(args):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "vector_env.py")] + SMALL + args,
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    return r.stdout


def test_supersuit_rows():
    pytest.importorskip("supersuit", reason="SuperSuit is not installed (pip install -e '.[train]')")
    out = _run(["--no-pufferlib", "--aircraft-copies", "0"])
    assert "supersuit 1 thr" in out, out[-3000:]
    for t in (1, 2):
        assert f"vector {t} thr / SuperSuit: " in out, out[-3000:]


def test_pufferlib_rows_on_both_scenarios():
    pytest.importorskip("pufferlib.vector",
                        reason="PufferLib is not installed (pip install --no-deps pufferlib-core==3.0.23)")
    out = _run(["--no-supersuit", "--aircraft-copies", "2", "--aircraft-steps", "1"])
    assert "PufferLib " in out, out[-3000:]
    puffer = out[out.index("PufferLib "):]
    for env_id in ("pcs_v0", "aircraft_v0"):
        assert f"\n{env_id} " in puffer, puffer
        part = puffer[puffer.index(f"\n{env_id} "):]
        for row in ("puffer Serial", "puffer MP", "puffer best"):
            assert row in part, part
        for t in (1, 2):
            assert f"vector {t} thr / PufferLib's best backend" in part, part


def test_vmas_row():
    pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    pytest.importorskip("vmas", reason="VMAS is not installed (pip install vmas==1.5.2)")
    out = _run(["--no-supersuit", "--no-pufferlib", "--aircraft-copies", "2", "--aircraft-steps", "1"])
    assert "VMAS discovery" in out, out[-3000:]
    for t in (1, 2):
        assert f"vector {t} thr / VMAS: " in out, out[-3000:]
