# SPDX-License-Identifier: BSD-3-Clause
"""PNG plots of a sweep's measures against its swept keys (matplotlib,
an optional extra: ``pip install -e ".[plot]"``).

One PNG per measure against the first swept key (``seeds`` aside: swept
seeds are replicates, drawn as the mean with a +-1 standard deviation bar),
one series per value of the other swept keys; ``speedup.png`` when
``num_threads`` is swept.  Axes carry units; a categorical key (``policy``)
is drawn as points at categories, not as a line; series that coincide by
design (1 and 2 threads of a deterministic measure) get distinct markers,
line styles and a small offset; the caption names the machine and its load.
"""

import math
import os
import statistics
import warnings

# measure -> (axis label, unit)
MEASURES = {
    "steps_per_s": ("env steps per second", "steps/s"),
    "events_per_s": ("events per second", "events/s"),
    "mean_reward": ("mean reward per agent per step", ""),
    "blocking_probability": ("blocking probability", "blocked / attempted calls"),
}
PLOTTED = tuple(MEASURES)
RUN_UNITS = {"num_threads": "threads", "steps": "env steps", "end_time": "simulated time", "seeds": "seed"}
REPLICATE = "seeds"
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
STYLES = ("-", "--", ":", "-.")


def _num(v):
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _label(key, units):
    unit = units.get(key) or RUN_UNITS.get(key, "")
    return f"{key} [{unit}]" if unit else key


def caption(rows):
    """Machine and load line for a plot, from the rows' ``machine`` and
    ``load_1m`` columns (written by ``seer sweep``)."""
    machines = sorted({r.get("machine") for r in rows if r.get("machine")})
    loads = [x for x in (_num(r.get("load_1m")) for r in rows) if x is not None]
    if not machines and not loads:
        return "machine and load not recorded in results.csv (written before seer recorded them)"
    s = "machine: " + ("; ".join(machines) if machines else "not recorded")
    if loads:
        s += f"; 1-min load average at the points: {min(loads):.1f}" + \
             (f" to {max(loads):.1f}" if max(loads) > min(loads) else "")
    return s


def _aggregate(rows, measure, x_key, group_keys):
    """{group: {x: [y, ...]}} over the replicate seeds."""
    out = {}
    for r in rows:
        y = _num(r.get(measure))
        if y is None:
            continue
        g = tuple((k, r.get(f"sweep.{k}")) for k in group_keys)
        out.setdefault(g, {}).setdefault(r.get(f"sweep.{x_key}"), []).append(y)
    return out


def _stats(ys):
    return statistics.fmean(ys), (statistics.stdev(ys) if len(ys) > 1 else 0.0)


def _x_scale(ax, xs):
    """Log where positive x spans > 20x; symlog from 0 (no negative side)
    where 0 is one of several spread values; margins so no point is cut."""
    lo, hi = min(xs), max(xs)
    pos = sorted(x for x in set(xs) if x > 0)
    if lo > 0 and hi / lo > 20:
        ax.set_xscale("log")
        ax.set_xlim(lo / 1.5, hi * 1.5)
        return "log"
    if lo == 0 and len(pos) >= 2 and pos[0] / hi < 0.05:
        ax.set_xscale("symlog", linthresh=pos[0], linscale=0.5)
        ax.set_xlim(-0.3 * pos[0], hi * 1.6)       # room for the point at 0, no negative decades
        return "symlog"
    pad = 0.06 * (hi - lo or 1.0)
    ax.set_xlim(lo - pad, hi + pad)
    return "linear"


def _shifted(ax, i, n):
    """A transform drawing series i of n a few points sideways, on any x
    scale, so series equal by design (1 vs 2 threads) stay visible."""
    from matplotlib.transforms import offset_copy
    return offset_copy(ax.transData, fig=ax.figure, x=4.0 * (i - (n - 1) / 2), y=0.0, units="points")


def _draw(ax, data, x_key, units, categorical):
    groups = list(data)
    n = len(groups)
    if categorical:
        cats = []
        for g in groups:
            cats += [c for c in data[g] if c not in cats]
        width = 0.7 / max(1, n)
        for i, g in enumerate(groups):
            pts = [(cats.index(c), *_stats(ys)) for c, ys in data[g].items()]
            ax.errorbar([p + (i - (n - 1) / 2) * width for p, _, _ in pts], [m for _, m, _ in pts],
                        yerr=[s for _, _, s in pts], fmt=MARKERS[i % len(MARKERS)], capsize=3,
                        markersize=7, label=", ".join(f"{k}={v}" for k, v in g) or None)
        ax.set_xticks(range(len(cats)), [str(c) for c in cats])
        ax.set_xlim(-0.6, len(cats) - 0.4)
        return
    _x_scale(ax, [float(x) for g in groups for x in data[g]])
    for i, g in enumerate(groups):
        pts = sorted((float(x), *_stats(ys)) for x, ys in data[g].items())
        # a shifted transform keeps matplotlib from counting these points in its limits
        ax.update_datalim([(x, m + e) for x, m, e in pts] + [(x, m - e) for x, m, e in pts])
        ax.errorbar([x for x, _, _ in pts], [m for _, m, _ in pts], transform=_shifted(ax, i, n),
                    yerr=[s for _, _, s in pts] if any(s for _, _, s in pts) else None,
                    marker=MARKERS[i % len(MARKERS)], linestyle=STYLES[i % len(STYLES)],
                    markersize=7 - min(i, 3), capsize=3, alpha=0.9,
                    markerfacecolor="none" if i % 2 else None,
                    label=", ".join(f"{k}={v}" for k, v in g) or None)


def _y_scale(ax, data):
    ys = [y for g in data.values() for v in g.values() for y in v]
    if ys and min(ys) > 0 and max(ys) / min(ys) > 20:
        ax.set_yscale("log")
    ax.autoscale_view(scalex=False)
    if ys and max(ys) == min(ys):        # one value (equal by design): a narrow band around it
        d = abs(ys[0]) * 0.1 or 1.0
        ax.set_ylim(ys[0] - d, ys[0] + d)


def _finish(fig, ax, path, title, note, legend):
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3, which="both")
    if legend:
        ax.legend(fontsize=8)
    fig.text(0.01, 0.01, note, fontsize=6.5, color="0.35", ha="left", va="bottom", wrap=True)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path)


def _figure():
    """A Figure on its own Agg canvas: no pyplot, so the process's backend
    (a notebook's inline one, when a sweep runs there) is left as it was."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(6.4, 4.4), dpi=110)
    FigureCanvasAgg(fig)
    return fig, fig.subplots()


def sweep_plots(rows, swept_keys, out_dir, title="", units=None):
    """Write the PNGs of a sweep into ``out_dir``; returns their paths.
    ``units`` maps a swept key to its unit (the scenario's Config units)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        warnings.warn('seer: plots need matplotlib (pip install -e ".[plot]"); wrote the CSV only',
                      RuntimeWarning, stacklevel=2)
        return []
    units = units or {}
    ok = [r for r in rows if not r.get("error")]
    keys = [k for k in swept_keys if k != REPLICATE]
    if not ok or not keys:
        return []
    replicated = REPLICATE in swept_keys
    x_key, group_keys = keys[0], keys[1:]
    categorical = any(_num(r.get(f"sweep.{x_key}")) is None for r in ok)
    note = caption(ok) + (f"; mean +- 1 s.d. over {REPLICATE}" if replicated else "")
    paths = []
    for measure, (name, unit) in MEASURES.items():
        data = _aggregate(ok, measure, x_key, group_keys)
        if not data:
            continue
        fig, ax = _figure()
        _draw(ax, data, x_key, units, categorical)
        _y_scale(ax, data)
        ax.set_xlabel(_label(x_key, units))
        ax.set_ylabel(f"{name} [{unit}]" if unit else name)
        path = os.path.join(out_dir, f"{measure}.png")
        _finish(fig, ax, path, f"{title}: {name}", note, bool(group_keys))
        paths.append(path)
    sp = _speedup(ok, keys, out_dir, title, units, note, categorical)
    return paths + ([sp] if sp else [])


def _speedup(rows, keys, out_dir, title, units, note, categorical):
    """speedup.png: throughput at t threads over 1 thread, same other keys."""
    if "num_threads" not in keys:
        return None
    measure = next((m for m in ("steps_per_s", "events_per_s") if any(_num(r.get(m)) for r in rows)), None)
    if measure is None:
        return None
    others = [k for k in keys if k != "num_threads"]
    base = {}
    for r in rows:
        if str(r.get("sweep.num_threads")) == "1" and _num(r.get(measure)):
            base.setdefault(tuple(r.get(f"sweep.{k}") for k in others + [REPLICATE]), []).append(
                _num(r.get(measure)))
    if not base:
        return None
    fig, ax = _figure()
    data = {}
    for r in rows:
        y = _num(r.get(measure))
        b = base.get(tuple(r.get(f"sweep.{k}") for k in others + [REPLICATE]))
        if y is None or not b:
            continue
        t = r.get("sweep.num_threads")
        if others:
            g = (("num_threads", t),) + tuple((k, r.get(f"sweep.{k}")) for k in others[1:])
            x = r.get(f"sweep.{others[0]}")
        else:
            g, x = (), t
        data.setdefault(g, {}).setdefault(x, []).append(y / statistics.fmean(b))
    x_key = others[0] if others else "num_threads"
    cat = categorical if others else False
    _draw(ax, data, x_key, units, cat)
    _y_scale(ax, data)
    ax.axhline(1.0, color="0.4", linewidth=0.8, linestyle=":")
    ax.set_xlabel(_label(x_key, units))
    ax.set_ylabel(f"speedup over 1 thread [x] ({MEASURES[measure][1]})")
    path = os.path.join(out_dir, "speedup.png")
    _finish(fig, ax, path, f"{title}: speedup over one thread", note, bool(others))
    return path
