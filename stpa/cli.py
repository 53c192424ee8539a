# SPDX-License-Identifier: BSD-3-Clause
"""``stpa collect | train | predict`` — re-fit STPA's model on this machine.

    stpa collect [--out stpa_data.csv] [--split train|heldout|both] [--quick]
    stpa train   [--data stpa_data.csv] [--out model.txt]
    stpa predict WORKLOAD [key=value ...]
"""

import argparse
import csv
import json
import math
import os
import statistics
import sys
import time

from stpa import features, sweep, workloads
from tqdm import tqdm
from stpa.preflight import preflight
from stpa.probe import probe, thread_caps


def measure_throughput(workload, params, threads, seed, units):
    """Units per second at ``threads`` (after one warm-up unit)."""
    w = workloads.get(workload)
    runner, _, _, _ = w.open(params, threads, seed)
    runner.advance(1)
    t0 = time.perf_counter()
    runner.advance(units)
    return units / (time.perf_counter() - t0)


def collect_config(workload, params, candidates, repeats=3, min_seconds=0.12, seed=1):
    """Trace features and interleaved throughput at each thread count."""
    # The first call pays one-time imports that a user's reset() never does
    # (their env module is loaded); time the second, as reset() would see it.
    preflight(workload, params, seed=seed + 7)
    trace = preflight(workload, params, seed=seed)
    unit_s = max(trace["unit_ns"] * 1e-9, 1e-6)
    units = int(min(300, max(3, math.ceil(min_seconds / unit_s))))
    thr = {t: [] for t in candidates}
    for _ in range(repeats):
        for t in candidates:
            thr[t].append(measure_throughput(workload, params, t, seed, units))
    return trace, {t: statistics.median(v) for t, v in thr.items()}, units


def available(workload):
    try:
        workloads.get(workload).normalize({})
        return True
    except ImportError:
        return False


def cmd_collect(a):
    hw = probe()
    cap, _ = thread_caps(hw)
    candidates = list(range(1, cap + 1))
    splits = ["train", "heldout"] if a.split == "both" else [a.split]
    todo = []
    for split in splits:
        configs = sweep.configs(split, quick=a.quick, with_aircraft=available("aircraft_env"))
        for w, p in configs[:a.limit] if a.limit else configs:
            todo.append((split, w, p))
    fields = ["config_id", "split", "workload", "params", "threads", "throughput", "speedup",
              "units", "preflight_s"] + features.COLUMNS
    with open(a.out, "w", newline="") as f, tqdm(total=len(todo), desc="stpa collect", unit="config") as bar:
        out = csv.writer(f)
        out.writerow(fields)
        for i, (split, w, p) in enumerate(todo):
            try:
                trace, thr, units = collect_config(w, p, candidates, repeats=a.repeats)
            except Exception as e:  # record and go on: one bad point must not lose the sweep
                tqdm.write(f"stpa collect: {w} {p} failed: {type(e).__name__}: {e}", file=sys.stderr)
                bar.update(1)
                continue
            for t in candidates:
                out.writerow([i, split, w, json.dumps(p, sort_keys=True), t, thr[t], thr[t] / thr[1], units,
                              trace["preflight_s"]] + features.row(trace, hw, t))
            f.flush()
            bar.set_postfix_str(w, refresh=False)
            bar.update(1)
    print(f"wrote {a.out}: {len(todo)} configurations x {len(candidates)} thread counts")
    return 0


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


def _value(text):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def cmd_predict(a):
    from stpa.select import choose
    params = {}
    for kv in a.params:
        if "=" not in kv:
            raise SystemExit(f"stpa predict: expected key=value, got {kv!r}")
        k, v = kv.split("=", 1)
        params[k] = _value(v)
    n, choice = choose(a.workload, params)
    print(f"{a.workload} {params}: {n} thread(s) [{choice['method']}; cap {choice['cap']} "
          f"from {choice['caps']}; preflight {choice['preflight_s'] * 1e3:.1f} ms]")
    for t, s in choice["predicted_speedup"].items():
        print(f"  {t} thread(s): predicted speedup {s:.2f}")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="stpa", description="SEER's thread-pool selection: "
                                "collect data, train the model, predict a thread count.")
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="sweep configurations x thread counts into a dataset")
    c.add_argument("--out", default="stpa_data.csv")
    c.add_argument("--split", choices=["train", "heldout", "both"], default="both")
    c.add_argument("--repeats", type=int, default=3)
    c.add_argument("--quick", action="store_true", help="half the configurations")
    c.add_argument("--limit", type=int, default=0, help="only the first N configurations of each split "
                   "(a smoke test; too few to train a useful model)")
    t = sub.add_parser("train", help="fit the model on a dataset and save it")
    t.add_argument("--data", default="stpa_data.csv")
    t.add_argument("--out", default="stpa_model.txt")
    r = sub.add_parser("predict", help="choose a thread count for one configuration")
    r.add_argument("workload", choices=sorted(workloads.WORKLOADS))
    r.add_argument("params", nargs="*", help="key=value")
    a = p.parse_args(argv)
    return {"collect": cmd_collect, "train": cmd_train, "predict": cmd_predict}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
