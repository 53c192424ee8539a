# SPDX-License-Identifier: BSD-3-Clause
"""Speedup models.

``UslModel`` (STPA's model): Gunther's Universal Scalability Law
S(t) = t / (1 + s(t-1) + k t(t-1)) fitted per configuration to the speedups
the preflight measured on this machine (at 2 threads, the cap and one count
between), times a LightGBM residual learned from data for the counts that
were not probed.  The law carries the curve to any count on any machine; the
residual corrects its shape where the law is systematically off.

``AnalyticModel``: a time model from the serial trace alone, for when the
preflight has no probes (the "analytic rule" baseline of the evaluation).

Both predict the speedup of ``t`` threads over one thread; one thread has
speedup 1 by definition.
"""

import math
import os
import warnings

from stpa import features

DEFAULT_MODEL = os.path.join(os.path.dirname(__file__), "default_model.txt")

# Cost of one OpenMP barrier between 2 threads on the development machine
# (from PCS 16x16, where rounds are nearly empty); grows with team size.
BARRIER_NS = 1000.0
# Extra cost of a cross-entity event when sender and receiver run on
# different cores (a cache-line transfer).
CROSS_NS = 40.0
# The residual is clipped to this factor either way: a few hundred training
# rows must not overrule the law by more.
RESIDUAL_CLIP = math.log(1.5)


class AnalyticModel:
    """Time per unit at t threads, from the serial preflight trace:

    ``T(t) = overhead + work / min(t, ready) + t>1 * (cross * CROSS_NS
    + 3 * rounds * BARRIER_NS * (1 + log2 t / 2))``

    where ``work = events * event_ns``; speedup = T(1) / T(t).
    """

    name = "analytic"

    def unit_ns(self, trace, t):
        events = trace.get("events_per_unit", 0.0)
        work = events * trace.get("event_ns", 0.0)
        ready = max(1.0, trace.get("ready_per_round", 1.0))
        over = trace.get("overhead_ns", 0.0)
        if t <= 1:
            return over + work
        par = min(float(t), ready)
        sync = 3.0 * trace.get("rounds_per_unit", 0.0) * BARRIER_NS * (1.0 + math.log2(t) / 2.0)
        cross = events * trace.get("cross_frac", 0.0) * CROSS_NS
        return over + work / par + sync + cross

    def predict(self, trace, hw, candidates):
        base = self.unit_ns(trace, 1)
        return [1.0 if t == 1 else (base / self.unit_ns(trace, t) if base > 0 else 1.0)
                for t in candidates]


def probes_of(trace):
    """The probed speedups ``{t: S}`` (t > 1) in a trace, keys as ints."""
    raw = trace.get("probe_speedup") or {}
    return {int(t): float(v) for t, v in raw.items() if int(t) > 1 and float(v) > 0}


class UslModel:
    """The USL fitted to the probes, times an optional LightGBM residual
    (``booster`` predicts log(measured / law) from ``features.RESIDUAL``).
    Without probes it defers to :class:`AnalyticModel`."""

    def __init__(self, booster=None):
        self.booster = booster
        self.name = "lightgbm" if booster is not None else "usl"

    # --- training -----------------------------------------------------------------

    @staticmethod
    def residual_rows(trace, cap, speedups):
        """(X, y) residual training rows of one configuration: its law is
        fitted on the probe counts of ``cap``, the rows are the other counts."""
        probes = features.probe_view(speedups, cap)
        s, k = features.fit_usl(probes, cap)
        X, y = [], []
        for t, S in sorted(speedups.items()):
            if t <= 1 or t in probes or S <= 0:
                continue
            X.append(features.residual_row(trace, cap, t, s, k))
            y.append(math.log(S / features.usl(t, s, k)))
        return X, y

    @classmethod
    def fit(cls, X, y, seed=0, rounds=150):
        """Fit the residual on rows from :meth:`residual_rows`; with no rows
        (data at 1 and 2 threads only) the model is the law alone."""
        if not X:
            return cls(None)
        import lightgbm as lgb
        import numpy as np
        params = {"objective": "regression", "learning_rate": 0.05, "num_leaves": 7,
                  "min_data_in_leaf": 5, "lambda_l2": 1.0, "feature_fraction": 0.9,
                  "verbose": -1, "seed": seed, "deterministic": True, "num_threads": 1}
        ds = lgb.Dataset(np.asarray(X, dtype=np.float64), label=np.asarray(y, dtype=np.float64),
                         feature_name=features.RESIDUAL, free_raw_data=False)
        return cls(lgb.train(params, ds, num_boost_round=rounds))

    @classmethod
    def load(cls, path):
        import lightgbm as lgb
        booster = lgb.Booster(model_file=path)
        if booster.feature_name() != features.RESIDUAL:
            raise ValueError(f"model {path} was trained on other features")
        return cls(booster)

    def save(self, path):
        """Write the residual as LightGBM text (an unwritable path is an OSError)."""
        if self.booster is None:
            raise ValueError("nothing to save: the model has no residual (no data above 2 threads)")
        text = self.booster.model_to_string()
        with open(path, "w") as f:
            f.write(text)

    # --- prediction ---------------------------------------------------------------

    def curve(self, trace, cap, candidates):
        """{t: predicted speedup} for ``candidates`` from the trace's probes."""
        probes = probes_of(trace)
        s, k = features.fit_usl(probes, cap)
        out = {t: (1.0 if t <= 1 else features.usl(t, s, k)) for t in candidates}
        rest = [t for t in candidates if t > 1 and t not in probes]
        if self.booster is not None and rest:
            import numpy as np
            X = np.asarray([features.residual_row(trace, cap, t, s, k) for t in rest], dtype=np.float64)
            for t, r in zip(rest, self.booster.predict(X, num_threads=1)):
                out[t] *= math.exp(max(-RESIDUAL_CLIP, min(RESIDUAL_CLIP, float(r))))
        return out

    def predict(self, trace, hw, candidates):
        if not probes_of(trace):
            return AnalyticModel().predict(trace, hw, candidates)
        cap = int(trace.get("probe_cap") or max(candidates))
        c = self.curve(trace, cap, candidates)
        return [c[t] for t in candidates]


_loaded = {}


def load_default(path=None):
    """(model, None), or (the law alone, reason) when LightGBM or the model
    file cannot be used; the reason is also warned once."""
    path = path or os.environ.get("STPA_MODEL") or DEFAULT_MODEL
    if path in _loaded:
        return _loaded[path]
    try:
        if not os.path.exists(path):
            raise FileNotFoundError("no such file (run `stpa collect` and `stpa train`)")
        result = (UslModel.load(path), None)
    except ImportError:
        result = (UslModel(None), "lightgbm is not installed")
    except Exception as e:  # a missing, corrupt or foreign model file
        result = (UslModel(None), f"cannot load STPA model {path!r}: {type(e).__name__}: {e}")
    if result[1]:
        warnings.warn(f"stpa: {result[1]}; using the scalability law without its learned residual",
                      RuntimeWarning, stacklevel=3)
    _loaded[path] = result
    return result
