# SPDX-License-Identifier: BSD-3-Clause
"""Reading ``stpa collect`` datasets: rows grouped into configurations, the
probe view of each (what the preflight would have measured), and the
residual model's training rows."""

import collections
import csv
import json
import math
import os

from stpa import features
from stpa.model import UslModel


class Config:
    """One configuration of a dataset on one machine: its trace and hardware
    features and the measured throughput at every thread count."""

    def __init__(self, rows, source):
        r0 = rows[0]
        self.source = source
        self.config_id = r0["config_id"]
        self.split = r0.get("split", "train")
        self.workload = r0.get("workload", "")
        self.params = r0.get("params", "")
        self.trace = {k: _num(r0.get(k)) for k in features.TRACE}
        self.hw = {k: _num(r0.get(k)) for k in features.HARDWARE}
        self.preflight_s = _num(r0.get("preflight_s"))
        self.throughput = {int(_num(r["threads"])): _num(r["throughput"]) for r in rows}
        t1 = self.throughput.get(1) or 0.0
        self.speedup = {t: (v / t1 if t1 > 0 else 0.0) for t, v in self.throughput.items()}
        self.cap = max(self.throughput)
        self.measured_probe = _json(r0.get("probe_speedup"))
        self.rows = rows

    @property
    def machine(self):
        return f"{int(self.hw['physical_cores'])} cores"

    def best(self):
        return max(self.throughput, key=self.throughput.get)

    def probes(self, noise=0.0, rng=None):
        """What the preflight measures for this configuration: the speedups
        at ``features.probe_counts(cap)``, taken from the measured curve
        (optionally with multiplicative log-normal noise)."""
        sp = dict(self.speedup)
        if noise and rng is not None:
            sp = {t: s * math.exp(rng.gauss(0.0, noise)) for t, s in sp.items()}
        return features.probe_view(sp, self.cap)

    def probe_trace(self, noise=0.0, rng=None):
        """The trace as the preflight would return it (with probes)."""
        return dict(self.trace, probe_speedup=self.probes(noise, rng), probe_cap=self.cap)

    def preflight_share(self, probe_units=2, episode=1000):
        """Estimated preflight cost over a ``episode``-step episode: the
        measured serial preflight (construction, warm-up, traced units) plus
        the probe units, each at its measured speed (as
        :func:`stpa.preflight.preflight` runs them)."""
        unit_s = self.trace["unit_ns"] * 1e-9
        if unit_s <= 0:
            return 0.0
        from stpa.preflight import UNITS
        serial_s = self.preflight_s - max(0, 3 - UNITS) * unit_s   # datasets traced 3 units
        probed = features.probe_view(self.speedup, self.cap)
        probe_s = sum(probe_units * unit_s / s for s in probed.values() if s > 0)
        return (serial_s + probe_s) / (episode * unit_s)


def _num(v):
    try:
        x = float(v)
    except (TypeError, ValueError):
        return 0.0
    return x if math.isfinite(x) else 0.0


def _json(v):
    if not v:
        return {}
    try:
        d = json.loads(v)
    except ValueError:
        return {}
    return {int(t): float(s) for t, s in d.items()} if isinstance(d, dict) else {}


def load(paths, split=None):
    """[Config] from one or more dataset files (``split`` filters).

    Raises ``FileNotFoundError`` / ``ValueError`` with a one-line message
    for a missing file, a file that is not a dataset, or no rows.
    """
    if isinstance(paths, str):
        paths = [paths]
    out = []
    for p in paths:
        if not os.path.isfile(p):
            raise FileNotFoundError(f"no such dataset file: {p} (write one with `stpa collect --out {p}`)")
        with open(p, newline="") as f:
            reader = csv.DictReader(f)
            missing = {"config_id", "threads", "throughput"} - set(reader.fieldnames or [])
            if missing:
                raise ValueError(f"{p} is not an `stpa collect` dataset (no {', '.join(sorted(missing))} column)")
            groups = collections.OrderedDict()
            for r in reader:
                if split is None or r.get("split") == split:
                    groups.setdefault(r["config_id"], []).append(r)
        out += [Config(rows, p) for rows in groups.values() if any(int(_num(r["threads"])) == 1 for r in rows)]
    if not out:
        raise ValueError(f"no configurations{' in split ' + split if split else ''} in {', '.join(paths)}")
    return out


def residual_xy(configs):
    """Residual training rows (X, y) of ``configs``: the counts that are
    neither 1 nor probed; configurations with 1 and 2 threads give none."""
    X, y = [], []
    for c in configs:
        xs, ys = UslModel.residual_rows(c.trace, c.cap, c.speedup)
        X += xs
        y += ys
    return X, y
