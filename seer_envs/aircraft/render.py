# SPDX-License-Identifier: BSD-3-Clause
"""Frames of the Aircraft env: UAVs (with heading and sensor range),
targets, the arena border, a scale bar, a legend and the time."""

import sys

import numpy as np

from seer_envs.scenario.render import figure, figure_rgb

BARE_SIZE = 512


def _bare(env):
    """Without matplotlib: dots on a plain square (UAVs blue, dead grey, targets red)."""
    cfg, m = env.config, env.model
    nu, size = cfg.num_uavs, BARE_SIZE
    scale = (size - 1) / cfg.arena_size
    img = np.full((size, size, 3), (236, 240, 228), np.uint8)
    img[[0, -1], :] = img[:, [0, -1]] = 0

    def px(x, y):
        return (np.clip(np.rint(np.asarray(x) * scale), 0, size - 1).astype(np.int64),
                np.clip(np.rint((cfg.arena_size - np.asarray(y)) * scale), 0, size - 1).astype(np.int64))
    alive = m.salive.astype(bool)
    for xs, ys, colour in ((m.sx[nu:], m.sy[nu:], (220, 40, 40)),
                           (m.sx[:nu][alive], m.sy[:nu][alive], (40, 90, 230)),
                           (m.sx[:nu][~alive], m.sy[:nu][~alive], (120, 120, 120))):
        c, r = px(xs, ys)
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                img[np.clip(r + dr, 0, size - 1), np.clip(c + dc, 0, size - 1)] = colour
    return img


def _scale_bar(size):
    """A round length near a fifth of the arena."""
    raw = size / 5
    mag = 10 ** np.floor(np.log10(raw))
    return float(max(k * mag for k in (1, 2, 5) if k * mag <= raw))


def image(env):
    """H x W x 3 uint8 frame (same size every step of an episode)."""
    fig = figure((6.4, 6.4), 80)
    if fig is None:
        return _bare(env)
    from matplotlib.patches import Circle, Rectangle
    cfg, m = env.config, env.model
    nu, a = cfg.num_uavs, cfg.arena_size
    alive = m.salive.astype(bool)
    ux, uy, vx, vy = m.sx[:nu], m.sy[:nu], m.svx[:nu], m.svy[:nu]
    ax = fig.subplots()
    ax.add_patch(Rectangle((0, 0), a, a, fill=False, edgecolor="black", linewidth=1.5, label="arena border"))
    if nu <= 512:                       # sensor discs stay readable
        # Agg's cost grows with a disc's size, not the frame's (sensor_range
        # = 1e9 in a 1 m arena took minutes per frame): a disc that covers
        # the whole frame (the limits set below) is drawn as its alpha over
        # the frame, all of them as one patch; every other disc is smaller
        # than the frame's diagonal.
        r, alpha = cfg.sensor_range, 0.07
        cx, cy = (-0.02 * a, 1.02 * a), (-0.14 * a, 1.02 * a)
        far = np.hypot(np.maximum(ux - cx[0], cx[1] - ux), np.maximum(uy - cy[0], cy[1] - uy))
        covers = alive & (r >= far)
        if covers.any():
            ax.add_patch(Rectangle((-a, -a), 3 * a, 3 * a, color="tab:blue", linewidth=0,
                                   alpha=1.0 - (1.0 - alpha) ** int(covers.sum())))
        for x, y in zip(ux[alive & ~covers], uy[alive & ~covers]):
            ax.add_patch(Circle((x, y), r, color="tab:blue", alpha=alpha, linewidth=0))
    ax.scatter(m.sx[nu:], m.sy[nu:], marker="*", s=90, color="tab:red", label="target", zorder=3)
    ax.scatter(ux[alive], uy[alive], s=14, color="tab:blue", label="UAV (line: heading)", zorder=4)
    if (~alive).any():
        ax.scatter(ux[~alive], uy[~alive], s=14, marker="x", color="0.45", label="UAV out of battery", zorder=4)
    sp = np.hypot(vx, vy)
    mv = alive & (sp > 1e-9)
    if mv.any():
        ln = 0.03 * a
        ax.quiver(ux[mv], uy[mv], vx[mv] / sp[mv] * ln, vy[mv] / sp[mv] * ln, angles="xy", scale_units="xy",
                  scale=1, width=0.003, color="navy", zorder=5)
    bar = _scale_bar(a)
    ax.plot([0.05 * a, 0.05 * a + bar], [-0.05 * a] * 2, color="black", linewidth=3, clip_on=False)
    ax.text(0.05 * a + bar / 2, -0.085 * a, f"{bar:g} m", ha="center", va="top", fontsize=9)
    ax.plot([], [], color="tab:blue", alpha=0.3, linewidth=6, label=f"sensor range {cfg.sensor_range:g} m")
    ax.set_xlim(-0.02 * a, 1.02 * a)
    ax.set_ylim(-0.14 * a, 1.02 * a)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.0), ncol=3, fontsize=8, frameon=False)
    t = env._cycle * cfg.dt
    ax.set_title(f"Aircraft  step {env._cycle}/{env.max_cycles}  t = {t:g} s  "
                 f"UAVs flying {int(alive.sum())}/{nu}  arena {a:g} m", fontsize=10)
    fig.tight_layout()
    return figure_rgb(fig)


def print_map(env, file=None):
    """The ``human`` frame: a 64 x 32 text map."""
    cfg, m = env.config, env.model
    nu, w, h = cfg.num_uavs, 64, 32
    grid = [["." for _ in range(w)] for _ in range(h)]

    def cell(x, y):
        return (min(h - 1, max(0, int((cfg.arena_size - y) / cfg.arena_size * h))),
                min(w - 1, max(0, int(x / cfg.arena_size * w))))
    for t in range(cfg.num_targets):
        r, c = cell(m.sx[nu + t], m.sy[nu + t])
        grid[r][c] = "T"
    arrows = ">^<v"
    for i in range(nu):
        r, c = cell(m.sx[i], m.sy[i])
        if not m.salive[i]:
            ch = "x"
        elif m.svx[i] == 0.0 and m.svy[i] == 0.0:
            ch = "o"
        else:
            # Quadrant index mod 4: (a + pi/4) % 2pi can round up to 2pi itself.
            ch = arrows[int(np.floor((np.arctan2(m.svy[i], m.svx[i]) + np.pi / 4) / (np.pi / 2))) % 4]
        grid[r][c] = ch
    out = file or sys.stdout
    print(f"Aircraft step {env._cycle}/{env.max_cycles}  t={env._cycle * cfg.dt:g} s  UAVs flying "
          f"{int(m.salive.sum())}/{nu}, targets {cfg.num_targets}, arena {cfg.arena_size:g} m "
          f"(one character = {cfg.arena_size / w:g} x {cfg.arena_size / h:g} m; arrows: UAV headings, "
          f"o: hovering, x: out of battery, T: target)", file=out)
    border = "+" + "-" * w + "+"
    print("\n".join([border] + ["|" + "".join(row) + "|" for row in grid] + [border]), file=out)
