# SPDX-License-Identifier: BSD-3-Clause
"""Speedup models: a LightGBM regressor on (trace, hardware, threads), and
the analytic model used alone as a fallback.

Both predict the speedup of ``t`` threads over one thread; by definition
one thread has speedup 1.
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


class AnalyticModel:
    """Time per unit at t threads, from the preflight trace:

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


class LgbmModel:
    """LightGBM on ``features.COLUMNS`` predicting log speedup."""

    name = "lightgbm"

    def __init__(self, booster):
        self.booster = booster

    @classmethod
    def fit(cls, X, y, seed=0):
        import lightgbm as lgb
        params = {"objective": "regression", "learning_rate": 0.05, "num_leaves": 15,
                  "min_data_in_leaf": 3, "feature_fraction": 0.9, "bagging_fraction": 0.9,
                  "bagging_freq": 1, "lambda_l2": 1.0, "verbose": -1, "seed": seed,
                  "deterministic": True, "num_threads": 1}
        import numpy as np
        ds = lgb.Dataset(np.asarray(X, dtype=np.float64), label=np.asarray(y, dtype=np.float64),
                         feature_name=features.COLUMNS, free_raw_data=False)
        return cls(lgb.train(params, ds, num_boost_round=300))

    @classmethod
    def load(cls, path):
        import lightgbm as lgb
        booster = lgb.Booster(model_file=path)
        if booster.feature_name() != features.COLUMNS:
            raise ValueError(f"model {path} was trained on other features")
        return cls(booster)

    def save(self, path):
        self.booster.save_model(path)

    def predict_rows(self, rows):
        import numpy as np
        return [math.exp(v) for v in self.booster.predict(np.asarray(rows, dtype=np.float64), num_threads=1)]

    def predict(self, trace, hw, candidates):
        rows = [features.row(trace, hw, t) for t in candidates]
        preds = self.predict_rows(rows)
        return [1.0 if t == 1 else p for t, p in zip(candidates, preds)]


_loaded = {}


def load_default(path=None):
    """(model, None) or (AnalyticModel(), reason) when LightGBM or the model
    file cannot be used; the reason is also warned once."""
    path = path or os.environ.get("STPA_MODEL") or DEFAULT_MODEL
    if path in _loaded:
        return _loaded[path]
    try:
        if not os.path.exists(path):
            raise FileNotFoundError("no such file (run `stpa collect` and `stpa train`)")
        result = (LgbmModel.load(path), None)
    except ImportError:
        result = (AnalyticModel(), "lightgbm is not installed")
    except Exception as e:  # a missing, corrupt or foreign model file
        result = (AnalyticModel(), f"cannot load STPA model {path!r}: {type(e).__name__}: {e}")
    if result[1]:
        warnings.warn(f"stpa: {result[1]}; using the analytic fallback model", RuntimeWarning,
                      stacklevel=3)
    _loaded[path] = result
    return result
