# SPDX-License-Identifier: BSD-3-Clause
"""Sweep plots: units, speedup, error bars over seeds, categorical axes,
symlog without a negative side, machine and load in the caption."""

import subprocess
import sys

import pytest

pytest.importorskip("matplotlib")

from seer import plots  # noqa: E402


def rows(xkey, xs, threads=(1, 2), seeds=(0,), policy=None):
    out = []
    for x in xs:
        for t in threads:
            for s in seeds:
                r = {f"sweep.{xkey}": x, "sweep.num_threads": t, "steps_per_s": 100.0 * t + s,
                     "mean_reward": -1.0, "error": "", "machine": "cpu X, 2 logical CPUs", "load_1m": 0.5 + s}
                if len(seeds) > 1:
                    r["sweep.seeds"] = s
                out.append(r)
    return out


@pytest.fixture
def figs(monkeypatch):
    made = []
    real = plots._figure

    def spy():
        fig, ax = real()
        made.append((fig, ax))
        return fig, ax
    monkeypatch.setattr(plots, "_figure", spy)
    return made


def test_units_speedup_and_caption(tmp_path, figs):
    paths = plots.sweep_plots(rows("power_control_iters", [0, 100, 1000, 5000]),
                              ["power_control_iters", "num_threads"], str(tmp_path),
                              title="t", units={"power_control_iters": "iterations"})
    names = sorted(p.rsplit("/", 1)[1] for p in paths)
    assert names == ["mean_reward.png", "speedup.png", "steps_per_s.png"]
    fig, ax = figs[0]
    assert ax.get_xlabel() == "power_control_iters [iterations]"
    assert ax.get_ylabel() == "env steps per second [steps/s]"
    assert ax.get_xscale() == "symlog"
    lo, hi = ax.get_xlim()
    assert -100 < lo < 0 and hi > 5000            # no negative decade, the last point inside
    assert not [t for t in ax.get_xticks() if t < 0 and lo <= t]
    text = " ".join(t.get_text() for t in fig.texts)
    assert "cpu X, 2 logical CPUs" in text and "load" in text
    sp_ax = figs[-1][1]
    ys = sorted(y for line in sp_ax.get_lines() for y in line.get_ydata() if y != 1.0)
    assert ys and all(abs(y - 2.0) < 1e-9 for y in ys)      # 200 / 100


def test_identical_series_are_told_apart(tmp_path, figs):
    plots.sweep_plots(rows("grid_width", [16, 32, 64]), ["grid_width", "num_threads"], str(tmp_path))
    ax = next(ax for _, ax in figs if "reward" in ax.get_ylabel())
    lines = [ln for ln in ax.get_lines() if len(ln.get_xdata()) == 3]
    assert len(lines) == 2
    assert lines[0].get_marker() != lines[1].get_marker()
    assert lines[0].get_linestyle() != lines[1].get_linestyle()
    # drawn a few points apart on screen although the data are equal
    a = lines[0].get_transform().transform([(16, -1.0)])[0]
    b = lines[1].get_transform().transform([(16, -1.0)])[0]
    assert abs(a[0] - b[0]) > 2


def test_categorical_key_drawn_as_categories_with_seed_error_bars(tmp_path, figs):
    rs = rows("policy", ["random", "heuristic", "fixed"], seeds=(0, 1, 2))
    plots.sweep_plots(rs, ["policy", "num_threads", "seeds"], str(tmp_path))
    fig, ax = figs[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["random", "heuristic", "fixed"]
    assert all(ln.get_linestyle() in ("None", "") for ln in ax.get_lines() if len(ln.get_xdata()) == 3)
    caps = [c for c in ax.collections if c.get_segments()]
    assert caps and any(abs(seg[1][1] - seg[0][1]) > 1.5 for c in caps for seg in c.get_segments())   # +-1 s.d.
    assert "mean +- 1 s.d. over seeds" in " ".join(t.get_text() for t in fig.texts)


def test_log_axis_when_all_positive(tmp_path, figs):
    plots.sweep_plots(rows("num_uavs", [64, 256, 1024, 4096]), ["num_uavs", "num_threads"], str(tmp_path))
    ax = figs[0][1]
    assert ax.get_xscale() == "log"
    lo, hi = ax.get_xlim()
    assert lo < 64 and hi > 4096


def test_plots_leave_the_matplotlib_backend_alone(tmp_path):
    """A sweep run from a notebook keeps its inline plots: no pyplot, no
    matplotlib.use (a fresh interpreter, so no other test's import counts)."""
    code = ("import sys, matplotlib; matplotlib.use('svg'); from seer import plots; "
            "paths = plots.sweep_plots(%r, ['grid_width', 'num_threads'], sys.argv[1]); "
            "print(len(paths), matplotlib.get_backend(), 'matplotlib.pyplot' in sys.modules)"
            % (rows("grid_width", [16, 32]),))
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["3", "svg", "False"]
