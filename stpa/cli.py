# SPDX-License-Identifier: BSD-3-Clause
"""STPA's scenario-free command-line parts: measuring a run's throughput,
collecting one configuration into dataset rows, training the model.

The ``stpa`` console script (``collect``, ``train``, ``predict``) lives in
:mod:`seer.stpa_cli`, which knows the scenario registry; STPA itself knows
no scenario.  ``python -m stpa.cli train`` works without it.

    stpa train [--data stpa_data.csv ...] [--out model.txt]
"""

import argparse
import json
import math
import os
import statistics
import sys
import time

from stpa import features
from stpa.preflight import preflight
from stpa.probe import cpu_model

# The columns of an ``stpa collect`` dataset (read back by :mod:`stpa.dataset`).
FIELDS = (["config_id", "split", "workload", "params", "threads", "throughput", "speedup", "units",
           "preflight_s"] + features.COLUMNS + ["probe_speedup", "probe_round_ns", "cpu_model"])


def measure_throughput(open_run, threads, seed, units):
    """Units per second of a run opened at ``threads`` (after one warm-up unit)."""
    run = open_run(threads, seed)
    run.advance(1)
    t0 = time.perf_counter()
    run.advance(units)
    return units / (time.perf_counter() - t0)


def collect_config(open_run, candidates, repeats=3, min_seconds=0.12, seed=1):
    """Trace features (with the preflight's own probes at the candidates'
    largest count) and interleaved throughput at each thread count of the
    configuration ``open_run(num_threads, seed)`` opens."""
    cap = max(candidates)
    # The first call pays one-time imports that a user's reset() never does
    # (their env module is loaded); time the second, as reset() would see it.
    preflight(open_run, seed=seed + 7, cap=cap)
    trace = preflight(open_run, seed=seed, cap=cap)
    unit_s = max(trace["unit_ns"] * 1e-9, 1e-6)
    units = int(min(300, max(3, math.ceil(min_seconds / unit_s))))
    thr = {t: [] for t in candidates}
    for _ in range(repeats):
        for t in candidates:
            thr[t].append(measure_throughput(open_run, t, seed, units))
    return trace, {t: statistics.median(v) for t, v in thr.items()}, units


def dataset_rows(config_id, split, workload, params, trace, thr, units, hw):
    """The dataset rows (in ``FIELDS`` order) of one collected configuration:
    one per thread count of ``thr`` ``{t: throughput}``."""
    extra = [json.dumps(trace["probe_speedup"]), json.dumps(trace["probe_round_ns"]), cpu_model()]
    head = [config_id, split, workload, json.dumps(params, sort_keys=True)]
    return [head + [t, thr[t], thr[t] / thr[1], units, trace["preflight_s"]] + features.row(trace, hw, t) + extra
            for t in sorted(thr)]


def default_threads(cap):
    """1, 2, 3, 4, 6, 8, 12, 16, 24, ... up to ``cap``, and ``cap`` and the
    preflight's probe counts (so that a dataset holds what the preflight reads)."""
    out, t = {1, 2, 3, 4}, 4
    while t < cap:
        out |= {t, t * 3 // 2}
        t *= 2
    out |= {cap, *features.probe_counts(cap)}
    return sorted(x for x in out if x <= cap)


def parse_threads(text, cap):
    """``--threads 1,2,4`` -> sorted counts with 1 (the speedup's base);
    SystemExit with one line for bad input, a warning above ``cap``."""
    try:
        ts = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise SystemExit(f"stpa collect: --threads must be comma-separated integers, got {text!r}") from None
    if not ts or ts[0] < 1:
        raise SystemExit(f"stpa collect: --threads must be integers >= 1, got {text!r}")
    if ts[-1] > cap:
        print(f"stpa collect: warning: --threads goes to {ts[-1]} but this machine allows {cap} "
              f"(cores, affinity, OMP_NUM_THREADS); counts above are oversubscribed", file=sys.stderr)
    return sorted({1, *ts})


def add_train_parser(sub):
    """The ``train`` subcommand's parser (shared with :mod:`seer.stpa_cli`)."""
    t = sub.add_parser("train", help="fit the model on one or more datasets and save it")
    t.add_argument("--data", action="append", help="a dataset (repeat for several machines; "
                   "default stpa_data.csv)")
    t.add_argument("--shipped", action="store_true", help="also train on the datasets shipped with "
                   "STPA (a 2-core machine and a 16-core Xeon): the residual needs rows above 2 threads")
    t.add_argument("--out", default="stpa_model.txt")
    return t


def shipped_datasets():
    """Paths of the datasets shipped in ``stpa/data`` (the default model's training data)."""
    d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".csv"))


def cmd_train(a):
    """Fit the residual on ``a.data`` (one or more datasets), report grouped
    k-fold held-out regret and speedup MAE, save to ``a.out``.  Bad input is
    one line on stderr and exit status 2."""
    from stpa import dataset
    from stpa.model import UslModel
    from stpa.select import pick
    paths = list(a.data or ([] if a.shipped else ["stpa_data.csv"]))
    if a.shipped:
        paths += shipped_datasets()
    try:
        configs = dataset.load(paths, split="train")
    except (OSError, ValueError) as e:
        print(f"stpa train: {e}", file=sys.stderr)
        return 2
    X, y = dataset.residual_xy(configs)
    if not X:
        print(f"stpa train: no rows above 2 threads in {', '.join(paths)}: the scalability law alone "
              f"needs no model file (collect on a machine with more cores to learn its residual)",
              file=sys.stderr)
        return 2
    # held-out regret: 5-fold cross-validation grouped by configuration
    k = min(5, len(configs))
    regrets, errs = [], []
    for fold in range(k):
        test = configs[fold::k]
        train = [c for i, c in enumerate(configs) if i % k != fold]
        m = UslModel.fit(*dataset.residual_xy(train))
        for c in test:
            curve = m.curve(c.probe_trace(), c.cap, sorted(c.throughput))
            chosen = pick(curve)
            regrets.append(c.throughput[chosen] / c.throughput[c.best()])
            errs += [abs(curve[t] - c.speedup[t]) for t in c.throughput if t > 1]
    model = UslModel.fit(X, y)
    try:
        model.save(a.out)
    except OSError as e:
        print(f"stpa train: cannot write {a.out}: {e.strerror or e}", file=sys.stderr)
        return 2
    machines = sorted({c.machine for c in configs})
    print(f"trained on {len(configs)} configurations ({', '.join(machines)}; {len(X)} residual rows); "
          f"grouped {k}-fold held-out: mean regret {statistics.fmean(regrets):.3f}, speedup MAE "
          f"{statistics.fmean(errs):.3f}; saved {a.out}")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m stpa.cli",
                                description="Train STPA's model (collect and predict: `stpa ...`).")
    sub = p.add_subparsers(dest="cmd", required=True)
    add_train_parser(sub)
    a = p.parse_args(argv)
    return cmd_train(a)


if __name__ == "__main__":
    sys.exit(main())
