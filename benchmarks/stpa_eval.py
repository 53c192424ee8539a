# SPDX-License-Identifier: BSD-3-Clause
"""Evaluate STPA on configurations held out of training, beside baselines.

    python benchmarks/stpa_eval.py [--data stpa/data/stpa_data.csv] [--collect] [--quick]

The dataset (from ``stpa collect``) holds, per configuration, the preflight
trace features and the measured throughput at every thread count (medians of
interleaved repeats).  ``--collect`` measures a fresh one on this machine
first (several minutes).  For each held-out configuration every predictor
picks a thread count; the table reports the thread-count MAE against the
measured best and the regret (throughput at the chosen count / at the best).

Predictors: STPA (the shipped LightGBM model), always all cores, always one,
the analytic model alone, and scikit-learn's gradient boosting and a Gaussian
process trained on the same training rows (``pip install -e ".[bench]"``).
Target (issue 5): STPA mean regret >= 0.97 and better than every baseline;
the preflight costs < 1% of a 1000-step episode.
"""

import argparse
import collections
import math
import os
import statistics
import subprocess
import sys

import numpy as np

from stpa import features
from stpa.cli import load_dataset, xy
from stpa.model import AnalyticModel, LgbmModel, load_default
from stpa.select import MARGIN

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.join(HERE, "..", "stpa", "data", "stpa_data.csv")

TRACE_KEYS = features.TRACE


def by_config(rows):
    out = collections.OrderedDict()
    for r in rows:
        out.setdefault(r["config_id"], []).append(r)
    return out


def pick(speedups):
    best, best_s = 1, 1.0
    for t, s in sorted(speedups.items()):
        if s > best_s * MARGIN:
            best, best_s = t, s
    return best


class RowModel:
    """Wraps a regressor on feature rows -> log speedup."""

    def __init__(self, name, reg):
        self.name, self.reg = name, reg

    def speedups(self, group):
        rows = np.asarray([[float(r[c]) for c in features.COLUMNS] for r in group])
        preds = self.reg.predict(rows)
        return {int(float(r["threads"])): (1.0 if int(float(r["threads"])) == 1 else math.exp(p))
                for r, p in zip(group, preds)}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default=DEFAULT_DATA)
    p.add_argument("--collect", action="store_true", help="measure a fresh dataset first")
    p.add_argument("--quick", action="store_true", help="with --collect: half the configurations")
    a = p.parse_args()
    if a.collect:
        os.makedirs(os.path.dirname(os.path.abspath(a.data)), exist_ok=True)
        cmd = [sys.executable, "-m", "seer.stpa_cli", "collect", "--out", a.data] + (["--quick"] if a.quick else [])
        subprocess.run(cmd, check=True)
    train = load_dataset(a.data, "train")
    held = by_config(load_dataset(a.data, "heldout"))
    X, y = xy(train)

    predictors = []
    m, why = load_default()
    if why is None:
        predictors.append(("STPA (LightGBM)", lambda g, m=m: RowModel("", m.booster).speedups(g)))
    else:
        print(f"(no shipped model: {why}; fitting LightGBM on the training rows)")
        fitted = LgbmModel.fit(X, y)
        predictors.append(("STPA (LightGBM)", lambda g: RowModel("", fitted.booster).speedups(g)))
    predictors.append(("always all cores", lambda g: {int(float(r["threads"])): float(int(float(r["threads"]))) for r in g}))
    predictors.append(("always one", lambda g: {int(float(r["threads"])): (1.0 if int(float(r["threads"])) == 1 else 0.0) for r in g}))
    analytic = AnalyticModel()

    def analytic_speedups(g):
        trace = {k: float(g[0][k]) for k in TRACE_KEYS}
        ts = [int(float(r["threads"])) for r in g]
        return dict(zip(ts, analytic.predict(trace, {}, ts)))
    predictors.append(("analytic model", analytic_speedups))
    try:
        from sklearn.ensemble import GradientBoostingRegressor
        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import RBF, WhiteKernel
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
        gbr = GradientBoostingRegressor(random_state=0).fit(X, y)
        gp = make_pipeline(StandardScaler(), GaussianProcessRegressor(
            kernel=RBF(length_scale=3.0) + WhiteKernel(0.01), normalize_y=True, random_state=0)).fit(X, y)
        predictors.append(("sklearn gradient boosting", lambda g: RowModel("", gbr).speedups(g)))
        predictors.append(("Gaussian process", lambda g: RowModel("", gp).speedups(g)))
    except ImportError:
        print("(scikit-learn not installed: pip install -e \".[bench]\" for the GBM and GP baselines)")

    print(f"STPA evaluation: {len(held)} held-out configurations "
          f"({', '.join(f'{k}: {v}' for k, v in collections.Counter(g[0]['workload'] for g in held.values()).items())}); "
          f"trained on {len({r['config_id'] for r in train})} configurations\n")
    print(f"{'predictor':<28} {'thread MAE':>10} {'mean regret':>12} {'min regret':>11} {'best picked':>12}")
    results = {}
    for name, fn in predictors:
        maes, regrets, hits = [], [], 0
        for g in held.values():
            thr = {int(float(r["threads"])): float(r["throughput"]) for r in g}
            best = max(thr, key=thr.get)
            chosen = pick(fn(g))
            maes.append(abs(chosen - best))
            regrets.append(thr[chosen] / thr[best])
            hits += chosen == best
        results[name] = statistics.fmean(regrets)
        print(f"{name:<28} {statistics.fmean(maes):>10.3f} {statistics.fmean(regrets):>12.4f} "
              f"{min(regrets):>11.4f} {hits:>7}/{len(held)}")
    stpa_r = results["STPA (LightGBM)"]
    others = [v for k, v in results.items() if k != "STPA (LightGBM)"]
    print(f"\ntarget: STPA mean regret >= 0.97 -> {'MET' if stpa_r >= 0.97 else 'NOT MET'}; "
          f"better than every baseline -> {'MET' if all(stpa_r > o for o in others) else 'NOT MET'}"
          f" (ties count as not better)")
    # preflight cost against a 1000-unit episode of the same configuration
    ratios = [float(g[0]["preflight_s"]) / (1000 * float(g[0]["unit_ns"]) * 1e-9) for g in held.values()]
    print(f"preflight cost / 1000-step episode: mean {statistics.fmean(ratios):.2%}, max {max(ratios):.2%} "
          f"-> target < 1%: {'MET' if max(ratios) < 0.01 else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
