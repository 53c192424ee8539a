# SPDX-License-Identifier: BSD-3-Clause
"""``stpa collect | train | predict`` — re-fit STPA's model on a machine.

    stpa collect [--out stpa_data.csv] [--split train|heldout|both] [--threads 1,2,4,8]
                 [--budget-s 1800] [--repeats 3] [--quick]
    stpa train   [--data stpa_data.csv ...] [--out model.txt]
    stpa predict WORKLOAD [key=value ...]
"""

import argparse
import csv
import json
import math
import statistics
import sys
import time

from stpa import features, sweep, workloads
from stpa._progress import Progress
from stpa.preflight import preflight
from stpa.probe import cpu_model, probe, thread_caps


def measure_throughput(open_run, threads, seed, units):
    """Units per second of a run opened at ``threads`` (after one warm-up unit)."""
    run = open_run(threads, seed)
    run.advance(1)
    t0 = time.perf_counter()
    run.advance(units)
    return units / (time.perf_counter() - t0)


def collect_config(open_run, candidates, repeats=3, min_seconds=0.12, seed=1, workload=None):
    """Trace features (with the preflight's own probes at the candidates'
    largest count) and interleaved throughput at each thread count."""
    cap = max(candidates)
    # The first call pays one-time imports that a user's reset() never does
    # (their env module is loaded); time the second, as reset() would see it.
    preflight(open_run, seed=seed + 7, cap=cap, workload=workload)
    trace = preflight(open_run, seed=seed, cap=cap, workload=workload)
    unit_s = max(trace["unit_ns"] * 1e-9, 1e-6)
    units = int(min(300, max(3, math.ceil(min_seconds / unit_s))))
    thr = {t: [] for t in candidates}
    for _ in range(repeats):
        for t in candidates:
            thr[t].append(measure_throughput(open_run, t, seed, units))
    return trace, {t: statistics.median(v) for t, v in thr.items()}, units


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


def available(workload):
    try:
        workloads.get(workload).normalize({})
        return True
    except ImportError:
        return False


def _round_robin(todo):
    """Interleave workloads, so that a time budget cut keeps a mix."""
    by = {}
    for item in todo:
        by.setdefault(item[1], []).append(item)
    out, lists = [], list(by.values())
    while any(lists):
        for lst in lists:
            if lst:
                out.append(lst.pop(0))
    return out


def cmd_collect(a):
    from stpa.select import _legacy
    hw = probe()
    cap, _ = thread_caps(hw)
    candidates = parse_threads(a.threads, cap) if a.threads else default_threads(cap)
    splits = ["train", "heldout"] if a.split == "both" else [a.split]
    todo = []
    for split in splits:
        todo += _round_robin([(split, w, p) for w, p in
                              sweep.configs(split, quick=a.quick, with_aircraft=available("aircraft_env"))])
    fields = (["config_id", "split", "workload", "params", "threads", "throughput", "speedup", "units",
               "preflight_s"] + features.COLUMNS + ["probe_speedup", "probe_round_ns", "cpu_model"])
    t_start, done = time.perf_counter(), 0
    with open(a.out, "w", newline="") as f, Progress(len(todo), "stpa collect", force=True) as bar:
        out = csv.writer(f)
        out.writerow(fields)
        for i, (split, w, p) in enumerate(todo):
            if a.budget_s and time.perf_counter() - t_start > a.budget_s:
                print(f"\nstpa collect: time budget of {a.budget_s:.0f} s spent; stopping after "
                      f"{done} of {len(todo)} configurations", file=sys.stderr)
                break
            try:
                _, open_run, _ = _legacy(w, p)
                trace, thr, units = collect_config(open_run, candidates, repeats=a.repeats, workload=w)
            except Exception as e:  # record and go on: one bad point must not lose the sweep
                print(f"\nstpa collect: {w} {p} failed: {type(e).__name__}: {e}", file=sys.stderr)
                bar.update(1)
                continue
            extra = [json.dumps(trace["probe_speedup"]), json.dumps(trace["probe_round_ns"]), cpu_model()]
            for t in candidates:
                out.writerow([i, split, w, json.dumps(p, sort_keys=True), t, thr[t], thr[t] / thr[1], units,
                              trace["preflight_s"]] + features.row(trace, hw, t) + extra)
            f.flush()
            done += 1
            bar.update(1, note=f"{w}")
    print(f"wrote {a.out}: {done} configurations x {len(candidates)} thread counts {candidates} "
          f"in {time.perf_counter() - t_start:.0f} s")
    return 0


def cmd_train(a):
    from stpa import dataset
    from stpa.model import UslModel
    from stpa.select import pick
    try:
        configs = dataset.load(a.data, split="train")
    except (OSError, ValueError) as e:
        print(f"stpa train: {e}", file=sys.stderr)
        return 2
    X, y = dataset.residual_xy(configs)
    if not X:
        print(f"stpa train: no rows above 2 threads in {', '.join(a.data)}: the scalability law alone "
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
    model.save(a.out)
    machines = sorted({c.machine for c in configs})
    print(f"trained on {len(configs)} configurations ({', '.join(machines)}; {len(X)} residual rows); "
          f"grouped {k}-fold held-out: mean regret {statistics.fmean(regrets):.3f}, speedup MAE "
          f"{statistics.fmean(errs):.3f}; saved {a.out}")
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
            print(f"stpa predict: expected key=value, got {kv!r}", file=sys.stderr)
            return 2
        k, v = kv.split("=", 1)
        params[k] = _value(v)
    try:
        n, choice = choose(a.workload, params)
    except (ValueError, TypeError) as e:
        print(f"stpa predict: {e}", file=sys.stderr)
        return 2
    print(f"{a.workload} {params}: {n} thread(s) [{choice['method']}; cap {choice['cap']} "
          f"from {choice['caps']}; preflight {choice['preflight_s'] * 1e3:.1f} ms"
          f"{'; cached' if choice.get('cached') else ''}]")
    probes = choice.get("probe_speedup", {})
    for t, s in choice["predicted_speedup"].items():
        m = f" (probed {probes[t]:.2f})" if t in probes else ""
        print(f"  {t} thread(s): predicted speedup {s:.2f}{m}")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="stpa", description="SEER's thread-pool selection: "
                                "collect data, train the model, predict a thread count.")
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="sweep configurations x thread counts into a dataset")
    c.add_argument("--out", default="stpa_data.csv")
    c.add_argument("--split", choices=["train", "heldout", "both"], default="both")
    c.add_argument("--threads", help="comma-separated thread counts (default: 1,2,3,4,6,8,12,16,... "
                   "up to this machine's cap, with the preflight's probe counts)")
    c.add_argument("--budget-s", type=float, default=0.0,
                   help="stop starting configurations after this many seconds (0: no limit)")
    c.add_argument("--repeats", type=int, default=3)
    c.add_argument("--quick", action="store_true", help="half the configurations")
    t = sub.add_parser("train", help="fit the model on one or more datasets and save it")
    t.add_argument("--data", action="append", help="a dataset (repeat for several machines; "
                   "default stpa_data.csv)")
    t.add_argument("--out", default="stpa_model.txt")
    r = sub.add_parser("predict", help="choose a thread count for one configuration")
    r.add_argument("workload", choices=sorted(workloads.WORKLOADS))
    r.add_argument("params", nargs="*", help="key=value")
    a = p.parse_args(argv)
    if a.cmd == "train" and not a.data:
        a.data = ["stpa_data.csv"]
    if a.cmd == "collect" and (a.repeats < 1 or a.budget_s < 0):
        p.error("--repeats must be >= 1 and --budget-s >= 0")
    return {"collect": cmd_collect, "train": cmd_train, "predict": cmd_predict}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
