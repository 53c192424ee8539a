# SPDX-License-Identifier: BSD-3-Clause
"""STPA's scenario-free command-line parts: measuring a run's throughput,
collecting one configuration, training the model.

The ``stpa`` console script (``collect``, ``train``, ``predict``) lives in
:mod:`seer.stpa_cli`, which knows the scenario registry; STPA itself knows
no scenario.  ``python -m stpa.cli train`` works without it.
"""

import argparse
import csv
import json
import math
import os
import statistics
import sys
import time

from stpa import features
from stpa.preflight import preflight


def measure_throughput(open_run, threads, seed, units):
    """Units per second at ``threads`` (after one warm-up unit)."""
    run = open_run(threads, seed)
    run.advance(1)
    t0 = time.perf_counter()
    run.advance(units)
    return units / (time.perf_counter() - t0)


def collect_config(open_run, candidates, repeats=3, min_seconds=0.12, seed=1):
    """Trace features and interleaved throughput at each thread count of the
    configuration ``open_run(num_threads, seed)`` opens."""
    # The first call pays one-time imports that a user's reset() never does
    # (their env module is loaded); time the second, as reset() would see it.
    preflight(open_run, seed=seed + 7)
    trace = preflight(open_run, seed=seed)
    unit_s = max(trace["unit_ns"] * 1e-9, 1e-6)
    units = int(min(300, max(3, math.ceil(min_seconds / unit_s))))
    thr = {t: [] for t in candidates}
    for _ in range(repeats):
        for t in candidates:
            thr[t].append(measure_throughput(open_run, t, seed, units))
    return trace, {t: statistics.median(v) for t, v in thr.items()}, units


def load_dataset(path, split=None):
    if not os.path.isfile(path):
        raise SystemExit(f"stpa: no dataset file {path} (write one with `stpa collect --out {path}`)")
    with open(path) as f:
        rows = [r for r in csv.DictReader(f) if split is None or r["split"] == split]
    if not rows:
        raise SystemExit(f"stpa: no rows{' for split ' + split if split else ''} in {path}")
    return rows


def xy(rows):
    X = [[float(r[c]) for c in features.COLUMNS] for r in rows if int(float(r["threads"])) > 1]
    y = [math.log(max(1e-3, float(r["speedup"]))) for r in rows if int(float(r["threads"])) > 1]
    return X, y


def cmd_train(a):
    from stpa.model import LgbmModel
    rows = load_dataset(a.data, "train")
    groups = sorted({r["config_id"] for r in rows})
    if len(groups) < 3:
        raise SystemExit(f"stpa train: {a.data} has {len(groups)} training configuration(s); "
                         f"cross-validation needs at least 3")
    # held-out error: 5-fold cross-validation grouped by configuration
    errs = []
    k = min(5, len(groups))
    for fold in range(k):
        test_ids = set(groups[fold::k])
        tr = [r for r in rows if r["config_id"] not in test_ids]
        te = [r for r in rows if r["config_id"] in test_ids and int(float(r["threads"])) > 1]
        m = LgbmModel.fit(*xy(tr))
        pred = m.predict_rows([[float(r[c]) for c in features.COLUMNS] for r in te])
        errs += [abs(p - float(r["speedup"])) for p, r in zip(pred, te)]
    model = LgbmModel.fit(*xy(rows))
    model.save(a.out)
    print(f"trained on {len(groups)} configurations ({len(rows)} rows); "
          f"grouped {k}-fold held-out speedup MAE {statistics.fmean(errs):.3f}; saved {a.out}")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m stpa.cli",
                                description="Train STPA's model (collect and predict: `stpa ...`).")
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train", help="fit the model on a dataset and save it")
    t.add_argument("--data", default="stpa_data.csv")
    t.add_argument("--out", default="stpa_model.txt")
    a = p.parse_args(argv)
    return cmd_train(a)


if __name__ == "__main__":
    sys.exit(main())
