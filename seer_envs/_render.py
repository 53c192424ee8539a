# SPDX-License-Identifier: BSD-3-Clause
"""Shared helpers of the envs' render modules: a matplotlib figure drawn
into an RGB array (matplotlib is optional: ``pip install -e ".[plot]"``),
and PettingZoo's ``human``-mode pacing."""

import time
import warnings

_warned = False


def pyplot():
    """matplotlib.pyplot on the Agg backend, or None (warns once)."""
    global _warned
    try:
        import matplotlib
        if matplotlib.get_backend().lower() != "agg":
            matplotlib.use("Agg", force=True)
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        if not _warned:
            _warned = True
            warnings.warn('seer_envs: rgb_array frames with a legend and scale need matplotlib '
                          '(pip install -e ".[plot]"); drawing a bare image instead', RuntimeWarning,
                          stacklevel=3)
        return None


def figure_rgb(fig):
    """The figure's pixels as an H x W x 3 uint8 array (the figure is closed)."""
    import numpy as np
    fig.canvas.draw()
    img = np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()
    import matplotlib.pyplot as plt
    plt.close(fig)
    return img


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
