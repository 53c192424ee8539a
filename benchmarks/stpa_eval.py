# SPDX-License-Identifier: BSD-3-Clause
"""Evaluate STPA's thread-count choice beside baselines, on each machine's
data and across machines (the paper's Table 1 layout).

    python benchmarks/stpa_eval.py [--data 2core.csv --data xeon16.csv] [--noise 0.1] [--quick]

Datasets (``stpa collect`` format, one per machine; by default the two
shipped in ``stpa/data/``: this 2-core machine at 1 and 2 threads, and a
16-core Xeon at 1, 2, 3, 4, 6, 8, 12, 16).  Scenarios:

* on each machine: configurations held out of training (the 2-core file's
  ``heldout`` split; leave-one-configuration-out where a file has no such
  split);
* transfer: train on the smaller machine only, test on the bigger one (and
  the reverse).

Each predictor picks a count among those measured for a configuration; the
tables give the thread-count MAE and MSE against the measured best on the
training configurations (in-sample) and on the test ones, and the regret
(throughput at the pick / at the best) on the test ones.  STPA's probes (the
speedups its preflight measures at 2 threads, the cap and one count between)
are read off the measured curve; ``--noise`` also runs STPA with log-normal
noise of that relative size on every probe (5 draws), as a short probe has.

Predictors: STPA (the law fitted to the probes times the LightGBM residual),
the law alone, always one thread, always all cores, the analytic rule (the
serial trace alone), and scikit-learn's gradient boosting and a Gaussian
process on the dataset's feature rows (``pip install -e ".[bench]"``), and
the same gradient boosting given STPA's probes too (a learner on equal
inputs).  Where a dataset holds the probes its preflight measured during
``stpa collect``, STPA also runs on those.
"""

import argparse
import math
import os
import random
import statistics
import sys
import time

import numpy as np

from stpa import dataset, features
from stpa.model import AnalyticModel, UslModel
from stpa.select import pick

HERE = os.path.dirname(os.path.abspath(__file__))
DATA_DIR = os.path.join(HERE, "..", "stpa", "data")
DEFAULT_DATA = [os.path.join(DATA_DIR, "stpa_data.csv"), os.path.join(DATA_DIR, "stpa_data_xeon16.csv")]
TARGET_LOCAL, TARGET_TRANSFER = 0.95, 0.85


# --- predictors: fit(train configs) -> f(config) -> {t: predicted speedup} -----------

def fit_stpa(train, residual=True, measured=False):
    """STPA; ``measured``: with the probes its preflight measured while the
    dataset was collected (columns probe_speedup) instead of the curve's."""
    m = UslModel.fit(*dataset.residual_xy(train)) if residual else UslModel(None)

    def f(c, noise=0.0, rng=None):
        tr = dict(c.trace, probe_speedup=c.measured_probe, probe_cap=c.cap) if measured else c.probe_trace(noise, rng)
        return m.curve(tr, c.cap, sorted(c.throughput))
    return f


def fit_always_one(train):
    return lambda c: {t: (1.0 if t == 1 else 0.0) for t in c.throughput}


def fit_all_cores(train):
    return lambda c: {t: float(t) for t in c.throughput}


def fit_analytic(train):
    a = AnalyticModel()
    return lambda c: dict(zip(sorted(c.throughput), a.predict(c.trace, c.hw, sorted(c.throughput))))


def plain_row(c, t):
    """The dataset's feature row (trace, hardware, candidate)."""
    return features.row(c.trace, c.hw, t)


def probe_row(c, t):
    """The same and what STPA's preflight measures: log speedups at the
    probe counts (log 1e-3 where a probe was skipped) and t / cap."""
    pr = c.probes()
    return plain_row(c, t) + [math.log(pr.get(x, 1e-3)) for x in features.probe_counts(c.cap)[:3]] \
        + [0.0] * (3 - len(features.probe_counts(c.cap)[:3])) + [t / c.cap]


def _rows(configs, rowf):
    X, y = [], []
    for c in configs:
        for t in sorted(c.throughput):
            if t > 1 and c.speedup[t] > 0:
                X.append(rowf(c, t))
                y.append(math.log(c.speedup[t]))
    return np.asarray(X), np.asarray(y)


def _fit_rows(reg, rowf=plain_row):
    def fit(train):
        X, y = _rows(train, rowf)
        r = reg().fit(X, y)

        def f(c):
            ts = sorted(c.throughput)
            p = r.predict(np.asarray([rowf(c, t) for t in ts]))
            return {t: (1.0 if t == 1 else math.exp(v)) for t, v in zip(ts, p)}
        return f
    return fit


def sklearn_predictors():
    try:
        from sklearn.ensemble import GradientBoostingRegressor
        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import RBF, WhiteKernel
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
    except ImportError:
        print('(scikit-learn not installed: pip install -e ".[bench]" for the GBM and GP baselines)')
        return []
    gbm = lambda: GradientBoostingRegressor(random_state=0)  # noqa: E731
    gp = lambda: make_pipeline(StandardScaler(), GaussianProcessRegressor(  # noqa: E731
        kernel=RBF(length_scale=3.0) + WhiteKernel(0.01), normalize_y=True, random_state=0))
    return [("scikit-learn GBM", _fit_rows(gbm)), ("Gaussian process", _fit_rows(gp)),
            ("scikit-learn GBM + STPA's probes", _fit_rows(gbm, probe_row))]


# --- scoring ---------------------------------------------------------------------------

def score(configs, preds):
    """Thread-count MAE and MSE, regrets, best picked; preds[i] is config i's curve."""
    errs, regrets, hits = [], [], 0
    for c, p in zip(configs, preds):
        chosen, best = pick(p), c.best()
        errs.append(chosen - best)
        regrets.append(c.throughput[chosen] / c.throughput[best])
        hits += chosen == best
    return {"mae": statistics.fmean(abs(e) for e in errs), "mse": statistics.fmean(e * e for e in errs),
            "regret": statistics.fmean(regrets), "min_regret": min(regrets), "hits": hits, "n": len(configs)}


def evaluate(fit, train, test, loco):
    """(train score, test score).  ``loco``: test = train, one configuration
    left out at a time; else fit once on ``train``."""
    full = fit(train)
    s_train = score(train, [full(c) for c in train])
    if loco:
        preds = []
        for i, c in enumerate(test):
            preds.append(fit(test[:i] + test[i + 1:])(c))
        return s_train, score(test, preds)
    return s_train, score(test, [full(c) for c in test])


def noisy_stpa(train, test, loco, noise, draws=5):
    """STPA's test score with noisy probes, averaged over ``draws``."""
    rng = random.Random(0)
    fits = [fit_stpa(test[:i] + test[i + 1:]) for i in range(len(test))] if loco else None
    full = fit_stpa(train)
    out = []
    for _ in range(draws):
        preds = [(fits[i] if loco else full)(c, noise, rng) for i, c in enumerate(test)]
        out.append(score(test, preds))
    return {k: statistics.fmean(s[k] for s in out) for k in out[0]}


def table(title, rows, note=""):
    lines = [f"### {title}", ""]
    if note:
        lines += [note, ""]
    lines += ["| predictor | MAE train | MSE train | MAE test | MSE test | mean regret | min regret | best picked |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, tr, te in rows:
        trs = f"{tr['mae']:.2f} | {tr['mse']:.2f}" if tr else "- | -"
        lines.append(f"| {name} | {trs} | {te['mae']:.2f} | {te['mse']:.2f} | {te['regret']:.3f} | "
                     f"{te['min_regret']:.3f} | {te['hits']:.3g}/{te['n']:.0f} |")
    return lines


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", action="append", help="a dataset (repeat: one per machine)")
    p.add_argument("--noise", type=float, default=0.1, help="relative probe noise to test (0: skip)")
    p.add_argument("--quick", action="store_true", help="skip the Gaussian process and the noise runs")
    p.add_argument("--out", help="also write the tables (markdown) to this file")
    a = p.parse_args(argv)
    t_start = time.perf_counter()
    paths = a.data or DEFAULT_DATA
    machines = {}
    for path in paths:
        for c in dataset.load(path):
            machines.setdefault(c.cap, []).append(c)
    caps = sorted(machines)
    predictors = [("STPA (law on probes x LightGBM residual)", fit_stpa),
                  ("law on probes alone (USL)", lambda tr: fit_stpa(tr, residual=False)),
                  ("always one", fit_always_one), ("always all cores", fit_all_cores),
                  ("analytic rule (serial trace)", fit_analytic)]
    extra = sklearn_predictors()
    if a.quick:
        extra = [e for e in extra if e[0] != "Gaussian process"]
    predictors += extra

    scenarios = []
    for cap in caps:
        cs = machines[cap]
        held = [c for c in cs if c.split == "heldout"]
        if held:
            train = [c for c in cs if c.split != "heldout"]
            scenarios.append((f"{cap}-core machine: {len(held)} held-out configurations, trained on "
                              f"{len(train)} others", train, held, False, cap, cap))
        else:
            scenarios.append((f"{cap}-core machine: leave-one-configuration-out over {len(cs)} "
                              f"configurations", cs, cs, True, cap, cap))
    if len(caps) >= 2:
        lo, hi = caps[0], caps[-1]
        scenarios.append((f"transfer: trained on the {lo}-core data only, tested on the {hi}-core data",
                          machines[lo], machines[hi], False, lo, hi))
        scenarios.append((f"transfer: trained on the {hi}-core data only, tested on the {lo}-core data",
                          machines[hi], machines[lo], False, hi, lo))

    out = [f"Data: {', '.join(os.path.relpath(x) for x in paths)}. Thread counts measured: "
           + "; ".join(f"{cap} cores: {sorted(machines[cap][0].throughput)}" for cap in caps) + ".", ""]
    verdicts = []
    for title, train, test, loco, src, dst in scenarios:
        rows, regrets = [], {}
        for name, fit in predictors:
            tr, te = evaluate(fit, train, test, loco)
            rows.append((name, tr, te))
            regrets[name] = te["regret"]
        if all(c.measured_probe for c in test):
            tr, te = evaluate(lambda t: fit_stpa(t, measured=True), train, test, loco)
            rows.insert(1, ("STPA, with its preflight's own measured probes", tr, te))
        if a.noise > 0 and not a.quick:
            te = noisy_stpa(train, test, loco, a.noise)
            rows.insert(1, (f"STPA, probes with {a.noise:.0%} noise (mean of 5)", None, te))
        out += table(title, rows) + [""]
        stpa_r = regrets[predictors[0][0]]
        target = TARGET_LOCAL if src == dst else (TARGET_TRANSFER if src < dst else None)
        if target is not None:
            verdicts.append(f"{title}: STPA mean regret {stpa_r:.3f} (target >= {target}) -> "
                            f"{'MET' if stpa_r >= target else 'NOT MET'}")
        if src == dst == caps[-1]:
            others = {k: v for k, v in regrets.items() if not k.startswith(("STPA", "law"))}
            beat = all(stpa_r > v for v in others.values())
            verdicts.append(f"{dst}-core data: STPA beats every baseline on regret -> "
                            f"{'MET' if beat else 'NOT MET'} (best baseline: "
                            f"{max(others, key=others.get)} {max(others.values()):.3f})")
    out += ["### Preflight cost (share of a 1000-step episode of the same configuration)", "",
            "| machine | mean | median | max | configurations over 1% |", "| --- | --- | --- | --- | --- |"]
    for cap in caps:
        sh = [c.preflight_share() for c in machines[cap]]
        out.append(f"| {cap} cores | {statistics.fmean(sh):.2%} | {statistics.median(sh):.2%} | {max(sh):.2%} | "
                   f"{sum(s > 0.01 for s in sh)}/{len(sh)} |")
        worst = max(machines[cap], key=lambda c: c.preflight_share())
        verdicts.append(f"preflight on {cap} cores: worst {worst.workload} {worst.params} "
                        f"({worst.trace['unit_ns'] / 1e3:.0f} us/step): {worst.preflight_share():.2%}")
    worst = [v for v in verdicts if v.startswith("preflight on")]
    tables = out + ["", "Worst preflight cost:", ""] + [f"- {v[len('preflight on '):]}" for v in worst]
    out += ["", "Targets:", ""] + [f"- {v}" for v in verdicts]
    out.append(f"\n(took {time.perf_counter() - t_start:.0f} s)")
    print("\n".join(out))
    if a.out:               # the tables for a reader (docs/evaluation.md): no verdicts, no timing
        with open(a.out, "w") as f:
            f.write("\n".join(tables) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
