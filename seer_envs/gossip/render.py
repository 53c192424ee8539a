# SPDX-License-Identifier: BSD-3-Clause
"""Frames of the gossip env: the ring of agents, each coloured by its share
of the rumours, with a colour scale, the step and the simulated time."""

import numpy as np

from seer_envs.scenario.render import figure, figure_rgb


def image(view):
    """H x W x 3 uint8 frame of ``view`` (``config``, ``model`` with
    ``n_known``, ``_cycle``, ``max_cycles``); the same size every step."""
    cfg = view.config
    share = np.asarray(view.model.n_known, np.float64) / cfg.num_rumours
    fig = figure((6.4, 5.6), 80)
    if fig is None:            # no matplotlib: a strip of squares, dark = knows more
        row = (255 * (1.0 - share)).astype(np.uint8)
        img = np.stack([row, row, np.full_like(row, 255)], axis=-1)[None]
        return np.repeat(np.repeat(img, 16, axis=0), 16, axis=1)
    ax = fig.add_subplot()
    n = len(share)
    angle = np.pi / 2 - 2 * np.pi * np.arange(n) / n          # agent 0 at the top, clockwise
    x, y = np.cos(angle), np.sin(angle)
    ax.plot(np.append(x, x[0]), np.append(y, y[0]), color="0.8", linewidth=0.8, zorder=1)
    size = max(8.0, min(400.0, 12000.0 / n))
    pts = ax.scatter(x, y, c=share, cmap="viridis", vmin=0.0, vmax=1.0, s=size, zorder=2,
                     edgecolors="0.3", linewidths=0.4)
    if n <= 32:
        for i in range(n):
            ax.annotate(str(i), (1.13 * x[i], 1.13 * y[i]), ha="center", va="center", fontsize=7)
    ax.set_aspect("equal")
    ax.set_xlim(-1.3, 1.3)
    ax.set_ylim(-1.3, 1.3)
    ax.axis("off")
    cb = fig.colorbar(pts, ax=ax, fraction=0.046, pad=0.04)
    cb.set_label(f"share of the {cfg.num_rumours} rumours known")
    t = view._cycle * cfg.dt
    ax.set_title(f"gossip  {n} agents on a ring (agent 0 at the top, clockwise)\n"
                 f"step {view._cycle}/{view.max_cycles}  t = {t:g} s  "
                 f"mean known {share.mean():.0%}", fontsize=10)
    fig.tight_layout()
    return figure_rgb(fig)
