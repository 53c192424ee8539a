# SPDX-License-Identifier: BSD-3-Clause
"""PNG plots of a sweep's measures against its swept keys (matplotlib,
an optional extra: ``pip install -e ".[plot]"``)."""

import math
import os
import warnings

PLOTTED = ("steps_per_s", "events_per_s", "mean_reward", "blocking_probability")


def _num(v):
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def sweep_plots(rows, swept_keys, out_dir, title=""):
    """One PNG per measure: the measure against the first swept key, one
    line per value of the other swept keys.  Returns the PNG paths."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        warnings.warn('seer: plots need matplotlib (pip install -e ".[plot]"); wrote the CSV only',
                      RuntimeWarning, stacklevel=2)
        return []
    ok = [r for r in rows if not r.get("error")]
    if not ok or not swept_keys:
        return []
    x_key, group_keys = swept_keys[0], swept_keys[1:]
    paths = []
    for measure in PLOTTED:
        if not any(_num(r.get(measure)) is not None for r in ok):
            continue
        fig, ax = plt.subplots(figsize=(6, 4), dpi=110)
        groups = {}
        for r in ok:
            g = tuple((k, r.get(f"sweep.{k}")) for k in group_keys)
            groups.setdefault(g, []).append(r)
        categorical = any(_num(r.get(f"sweep.{x_key}")) is None for r in ok)
        for g, rs in groups.items():
            pts = [(r.get(f"sweep.{x_key}"), _num(r.get(measure))) for r in rs]
            pts = [(x, y) for x, y in pts if y is not None]
            if not categorical:
                pts.sort(key=lambda p: float(p[0]))
                xs = [float(x) for x, _ in pts]
            else:
                xs = [str(x) for x, _ in pts]
            label = ", ".join(f"{k}={v}" for k, v in g) or None
            ax.plot(xs, [y for _, y in pts], marker="o", label=label)
        _maybe_log(ax, ok, x_key, measure, categorical)
        ax.set_xlabel(x_key)
        ax.set_ylabel(measure)
        ax.set_title(f"{title}: {measure}")
        ax.grid(alpha=0.3)
        if group_keys:
            ax.legend(fontsize=8)
        fig.tight_layout()
        path = os.path.join(out_dir, f"{measure}.png")
        fig.savefig(path)
        plt.close(fig)
        paths.append(path)
    return paths


def _maybe_log(ax, rows, x_key, measure, categorical):
    """Log axes where positive values span more than 20x (they often do)."""
    ys = [y for y in (_num(r.get(measure)) for r in rows) if y is not None]
    if ys and min(ys) > 0 and max(ys) / min(ys) > 20:
        ax.set_yscale("log")
    if not categorical:
        xs = [float(r.get(f"sweep.{x_key}")) for r in rows]
        if min(xs) > 0 and max(xs) / min(xs) > 20:
            ax.set_xscale("log")
        elif min(xs) == 0 and max(xs) > 0 and len(set(xs)) > 2 and sorted(set(xs))[1] / max(xs) < 0.05:
            ax.set_xscale("symlog", linthresh=sorted(set(xs))[1])
