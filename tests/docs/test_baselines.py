# SPDX-License-Identifier: BSD-3-Clause
"""``benchmarks/baselines.py --quick`` writes sane CSVs, plots and a report."""

import csv
import math
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytest.importorskip("torch")
pytest.importorskip("supersuit")


def _rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_quick_run_writes_csv_plots_and_report(tmp_path):
    out, report = tmp_path / "out", tmp_path / "docs" / "baselines.md"
    r = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "baselines.py"), "--quick",
                        "--out", str(out), "--report", str(report)],
                       capture_output=True, text=True, timeout=900,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stderr[-3000:]
    curves = _rows(out / "curves.csv")
    evals = _rows(out / "eval.csv")
    speed = _rows(out / "speed.csv")
    assert all(math.isfinite(float(x["episode_return"])) for x in curves + evals)
    # one curve per (task, algorithm, training seed), each with every update
    runs = {}
    for x in curves:
        runs.setdefault((x["task"], x["algo"], x["train_seed"]), []).append(int(x["update"]))
    assert set(runs) == {(t, a, s) for t in ("pcs_hotspot_v0", "aircraft_v0") for a in ("ippo", "mappo")
                         for s in ("1", "2")}
    assert all(u == [1, 2] for u in runs.values())
    # every policy on the 4 held-out seeds
    per = {}
    for x in evals:
        per.setdefault((x["task"], x["policy"], x["train_seed"]), set()).add(int(x["eval_seed"]))
    assert all(s == {10000, 10001, 10002, 10003} for s in per.values())
    assert ("pcs_hotspot_v0", "heuristic (adaptive guard)", "") in per
    assert {x["path"] for x in speed} == {"seer vector env", "supersuit concat_vec_envs_v1"}
    assert all(float(x["sps"]) > 0 for x in speed)
    for task in ("pcs_hotspot_v0", "aircraft_v0"):
        for png in (out / f"{task}.png", report.parent / "plots" / "baselines" / f"{task}.png"):
            assert png.stat().st_size > 10_000
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = report.read_text()
    assert "Budget: `--quick`" in text and "no learning claim" in text
    assert "python benchmarks/baselines.py --quick" in text
    assert "Versions: python" in text and "Machine:" in text
    assert "## pcs_hotspot_v0" in text and "## aircraft_v0" in text and "SuperSuit" in text
    assert "the same on both paths" in text and "NOT the same" not in text


def test_bad_budget_is_refused():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "baselines.py"), "--budget", "0"],
                       capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2 and "--budget" in r.stderr
