# SPDX-License-Identifier: BSD-3-Clause
"""Shared helpers of the envs' render modules: a matplotlib figure drawn
into an RGB array (matplotlib is optional: ``pip install -e ".[plot]"``),
PettingZoo's ``human``-mode pacing, and the render modes a scenario
declares (:func:`render_modes`)."""

import time
import warnings

_warned = False


def figure(figsize, dpi):
    """A matplotlib Figure on its own Agg canvas, or None without matplotlib
    (warns once).  Not pyplot: that would mean switching the process's
    backend to Agg (``matplotlib.use``), which breaks the caller's own plots
    (a notebook's inline backend), and pyplot keeps each figure until closed."""
    global _warned
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        if not _warned:
            _warned = True
            warnings.warn('seer_envs: rgb_array frames with a legend and scale need matplotlib '
                          '(pip install -e ".[plot]"); drawing a bare image instead', RuntimeWarning,
                          stacklevel=3)
        return None
    fig = Figure(figsize=figsize, dpi=dpi)
    FigureCanvasAgg(fig)             # attaches itself as fig.canvas
    return fig


def figure_rgb(fig):
    """The figure's pixels as an H x W x 3 uint8 array."""
    import numpy as np
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()


def pace(env):
    """``human`` mode shows at most ``metadata["render_fps"]`` frames per
    second (PettingZoo's convention), so a rollout can be watched."""
    fps = env.metadata.get("render_fps")
    if not fps:
        return
    last = getattr(env, "_last_human_frame", None)
    now = time.monotonic()
    if last is not None and now - last < 1.0 / fps:
        time.sleep(1.0 / fps - (now - last))
    env._last_human_frame = time.monotonic()


def render_modes(env_cls, copies_cls):
    """The render modes a scenario supports: those of ``env_cls.metadata``
    it declares the means for.  ``"rgb_array"`` needs the ``Copies``
    subclass's ``image``, ``"human"`` its ``print_map`` (the base class has
    neither).  Both are optional: an env is refused a mode it
    lacks at construction, and its ``metadata["render_modes"]`` lists only
    these."""
    from seer_envs.scenario.copies import Copies
    listed = (getattr(env_cls, "metadata", None) or {}).get("render_modes", ("human", "rgb_array"))
    have = {"rgb_array": copies_cls is not None and getattr(copies_cls, "image", None) is not Copies.image,
            "human": copies_cls is not None and getattr(copies_cls, "print_map", None) is not Copies.print_map}
    return [m for m in listed if have.get(m)]
