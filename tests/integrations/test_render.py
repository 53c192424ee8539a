# SPDX-License-Identifier: BSD-3-Clause
"""Frames a person can read: PCS with a colour scale, time and grid;
Aircraft with legend, time, border and scale; human mode paced to
render_fps (PettingZoo's convention)."""

import subprocess
import sys
import time

import numpy as np
import pytest

import seer_envs

plt = pytest.importorskip("matplotlib.pyplot")


@pytest.fixture
def figures(monkeypatch):
    """The matplotlib figures the renderers draw, kept for inspection."""
    from seer_envs.scenario import render as _render
    kept = []
    real = _render.figure_rgb

    def keep(fig):
        kept.append(fig)
        fig.canvas.draw()
        return np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()
    monkeypatch.setattr(_render, "figure_rgb", keep)
    for mod in ("seer_envs.pcs.render", "seer_envs.aircraft.render"):
        monkeypatch.setattr(f"{mod}.figure_rgb", keep)
    yield kept
    for f in kept:
        plt.close(f)
    assert real


def texts(fig):
    out = []
    for ax in fig.axes:
        out += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()] + [t.get_text() for t in ax.texts]
        leg = ax.get_legend()
        if leg:
            out += [t.get_text() for t in leg.get_texts()]
    return " | ".join(out)


def test_pcs_frame_has_colour_scale_time_and_grid(figures):
    env = seer_envs.make("pcs_v0", render_mode="rgb_array", grid_width=8, grid_height=4, num_threads=1, dt=30.0)
    env.reset(seed=0)
    for _ in range(3):
        env.step({a: 0 for a in env.agents})
    img = env.render()
    fig = figures[-1]
    assert len(fig.axes) == 2                                   # the map and its colour bar
    s = texts(fig)
    assert "t = 90 min" in s and "step 3/240" in s and "channels in use" in s
    assert fig.axes[0].xaxis.get_gridlines()                    # cell borders
    assert img.shape[2] == 3 and img.dtype == np.uint8


def test_aircraft_frame_has_legend_time_border_and_scale(figures):
    env = seer_envs.make("aircraft_v0", render_mode="rgb_array", num_uavs=9, num_threads=1)
    env.reset(seed=0)
    env.step({a: np.array([1.0, 0.0], np.float32) for a in env.agents})
    env.render()
    fig = figures[-1]
    s = texts(fig)
    assert "target" in s and "UAV" in s and "sensor range" in s and "arena border" in s
    assert "t = 1 s" in s and "step 1/500" in s
    assert any(t.endswith(" m") and t[:-2].replace(".", "").isdigit() for t in
               (x.get_text() for x in fig.axes[0].texts))      # the scale bar's length


@pytest.mark.parametrize("make", [lambda: seer_envs.make("pcs_v0", render_mode="human", grid_width=4, grid_height=4,
                                                              num_threads=1),
                                  lambda: seer_envs.make("aircraft_v0", render_mode="human", num_uavs=4,
                                                                   num_threads=1)])
def test_human_mode_prints_a_frame_paced_to_render_fps(make, capsys):
    env = make()
    env.reset(seed=0)                                           # human mode: reset draws a frame
    assert capsys.readouterr().out.count("step 0/") == 1
    fps = env.metadata["render_fps"]
    t0 = time.monotonic()
    for _ in range(3):
        assert env.render() is None
    assert time.monotonic() - t0 >= 3 / fps * 0.95              # after reset's frame: 3 intervals
    out = capsys.readouterr().out
    assert out.count("step 0/") == 3
    env.step({a: env.action_space(a).sample() for a in env.agents})   # and so does each step
    assert capsys.readouterr().out.count("step 1/") == 1


def test_render_leaves_the_matplotlib_backend_alone():
    """A notebook's inline plots keep working after env.render(): frames are
    drawn without pyplot or matplotlib.use (a fresh interpreter, so no other
    test's import of pyplot counts)."""
    code = ("import sys, matplotlib; matplotlib.use('svg')\n"
            "import seer_envs\n"
            "for env in (seer_envs.make('pcs_v0', render_mode='rgb_array', grid_width=4, grid_height=4, num_threads=1),\n"
            "            seer_envs.make('aircraft_v0', render_mode='rgb_array', num_uavs=4, num_threads=1)):\n"
            "    env.reset(seed=0)\n"
            "    assert env.render().ndim == 3\n"
            "print(matplotlib.get_backend(), 'matplotlib.pyplot' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["svg", "False"]
