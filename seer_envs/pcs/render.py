# SPDX-License-Identifier: BSD-3-Clause
"""Frames of the PCS env: a heat map of channel occupancy per cell, with a
colour scale, the simulated time and the cell grid."""

import sys

import numpy as np

from seer_envs.scenario.render import figure, figure_rgb


def load(env):
    """Fraction of each cell's channels in use, (grid_height, grid_width)."""
    cfg = env.config
    busy = 1.0 - env.model.free_channels.reshape(cfg.grid_height, cfg.grid_width) / cfg.channels_per_cell
    return np.clip(busy, 0.0, 1.0)


def _bare(v):
    """Without matplotlib: white (idle) -> red (full) squares."""
    rgb = np.stack([np.full_like(v, 255.0), 255.0 * (1.0 - v), 255.0 * (1.0 - v) ** 2], axis=-1)
    scale = max(1, 256 // max(v.shape))
    return np.repeat(np.repeat(rgb.astype(np.uint8), scale, axis=0), scale, axis=1)


def image(env):
    """H x W x 3 uint8 frame (same size every step of an episode)."""
    cfg = env.config
    v = load(env)
    fig = figure((6.4, 5.6), 80)
    if fig is None:
        return _bare(v)
    ax = fig.subplots()
    im = ax.imshow(v, cmap="YlOrRd", vmin=0.0, vmax=1.0, interpolation="nearest", origin="upper")
    if max(cfg.grid_width, cfg.grid_height) <= 64:        # cell borders where they stay visible
        ax.set_xticks(np.arange(-0.5, cfg.grid_width, 1), minor=True)
        ax.set_yticks(np.arange(-0.5, cfg.grid_height, 1), minor=True)
        ax.grid(which="minor", color="0.55", linewidth=0.4)
        ax.tick_params(which="minor", length=0)
    ax.set_xlabel("cell x (torus: the edges wrap)")
    ax.set_ylabel("cell y")
    cb = fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    cb.set_label(f"channels in use (of {cfg.channels_per_cell} per cell)")
    cb.set_ticks([0, 0.25, 0.5, 0.75, 1.0], labels=["0%", "25%", "50%", "75%", "100%"])
    t = env._cycle * cfg.dt
    ax.set_title(f"PCS  step {env._cycle}/{env.max_cycles}  t = {t:g} min ({t / 1440:.2f} days)  "
                 f"mean load {v.mean():.0%}", fontsize=10)
    fig.tight_layout()
    return figure_rgb(fig)


MAP_ROWS, MAP_COLS = 60, 120      # the text map's largest size (a terminal)


def print_map(env, file=None):
    """The ``human`` frame: the load map as text (at most MAP_COLS x MAP_ROWS
    cells, the top-left ones)."""
    cfg = env.config
    v = load(env)
    shades = " .:-=+*#%@"
    out = file or sys.stdout
    t = env._cycle * cfg.dt
    rows, cols = min(cfg.grid_height, MAP_ROWS), min(cfg.grid_width, MAP_COLS)
    size = f"{cfg.grid_width} x {cfg.grid_height}"
    shown = (f"all {size} cells" if (rows, cols) == (cfg.grid_height, cfg.grid_width)
             else f"the top-left {cols} x {rows} of {size} cells")
    print(f"PCS step {env._cycle}/{env.max_cycles}  t={t:g} min  mean load {v.mean():.0%}  "
          f"(channels in use per cell: ' ' 0% .. '@' 100%; {shown}, width x height)", file=out)
    print("\n".join("".join(shades[min(9, int(x * 10))] for x in row[:cols]) for row in v[:rows]), file=out)
