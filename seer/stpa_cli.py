# SPDX-License-Identifier: BSD-3-Clause
"""``stpa collect | train | predict`` — re-fit STPA's model on a machine.

    stpa collect [--out stpa_data.csv] [--split train|heldout|both] [--threads 1,2,4,8]
                 [--budget-s 1800] [--repeats 3] [--quick]
    stpa train   [--data stpa_data.csv ...] [--out model.txt]
    stpa predict SCENARIO[:headless] [key=value ...]

STPA knows no scenario; this console script (in the ``seer`` package, above
both) opens the registry's scenarios and hands STPA their runs.  A workload
is a scenario id (``pcs_v0``), with ``:headless`` for the headless form of a
scenario that also has an env (``pcs_v0:headless``).
"""

import argparse
import csv
import sys
import time

import seer_envs
from seer import stpa_sweep
from stpa.cli import (FIELDS, add_train_parser, cmd_train, collect_config, dataset_rows,
                      default_threads, parse_threads)
from stpa.probe import probe, thread_caps
from tqdm import tqdm


def parse_workload(workload):
    """``"pcs_v0:headless"`` -> (spec, True); ``"pcs_v0"`` -> (spec, None)."""
    sid, _, form = workload.partition(":")
    if form not in ("", "headless", "env"):
        raise ValueError(f"workload {workload!r}: the form after ':' must be 'headless' or 'env'")
    return seer_envs.get(sid), {"": None, "headless": True, "env": False}[form]


def opener(workload, params):
    """``(num_threads, seed) -> Run`` for ``params`` of ``workload``."""
    spec, headless = parse_workload(workload)
    return spec.opener(params, headless)


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
    hw = probe()
    cap, _ = thread_caps(hw)
    candidates = parse_threads(a.threads, cap) if a.threads else default_threads(cap)
    splits = ["train", "heldout"] if a.split == "both" else [a.split]
    have = seer_envs.registry()
    todo = []
    for split in splits:
        configs = stpa_sweep.configs(split, quick=a.quick, with_aircraft=stpa_sweep.AIRCRAFT in have)
        todo += _round_robin([(split, w, p) for w, p in (configs[:a.limit] if a.limit else configs)])
    t_start, done = time.perf_counter(), 0
    with open(a.out, "w", newline="") as f, tqdm(total=len(todo), desc="stpa collect", unit="config") as bar:
        out = csv.writer(f)
        out.writerow(FIELDS)
        for i, (split, w, p) in enumerate(todo):
            # at least one configuration, whatever the budget: an empty dataset serves no one
            if done and a.budget_s and time.perf_counter() - t_start > a.budget_s:
                tqdm.write(f"stpa collect: time budget of {a.budget_s:.0f} s spent; stopping after "
                           f"{done} of {len(todo)} configurations", file=sys.stderr)
                break
            try:
                trace, thr, units = collect_config(opener(w, p), candidates, repeats=a.repeats)
            except Exception as e:  # record and go on: one bad point must not lose the sweep
                tqdm.write(f"stpa collect: {w} {p} failed: {type(e).__name__}: {e}", file=sys.stderr)
                bar.update(1)
                continue
            out.writerows(dataset_rows(i, split, w, p, trace, thr, units, hw))
            f.flush()
            done += 1
            bar.set_postfix_str(w, refresh=False)
            bar.update(1)
    print(f"wrote {a.out}: {done} configurations x {len(candidates)} thread counts {candidates} "
          f"in {time.perf_counter() - t_start:.0f} s")
    return 0


def _value(text):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def cmd_predict(a):
    import stpa
    params = {}
    for kv in a.params:
        if "=" not in kv:
            print(f"stpa predict: expected key=value, got {kv!r}", file=sys.stderr)
            return 2
        k, v = kv.split("=", 1)
        params[k] = _value(v)
    try:
        spec, headless = parse_workload(a.scenario)
        cfg = spec.build_config(params)
        n, choice = stpa.choose(spec.stpa_key(cfg, headless), spec.opener(cfg, headless))
    except (ValueError, TypeError) as e:
        print(f"stpa predict: {e}", file=sys.stderr)
        return 2
    print(f"{a.scenario} {params}: {n} thread(s) [{choice.method}; cap {choice.cap} "
          f"from {choice.caps}; preflight {choice.preflight_s * 1e3:.1f} ms"
          f"{'; cached' if choice.cached else ''}]")
    probes = choice.probe_speedup or {}
    for t, s in choice.predicted_speedup.items():
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
                   help="stop starting configurations after this many seconds, once one is "
                   "collected (0: no limit)")
    c.add_argument("--repeats", type=int, default=3)
    c.add_argument("--quick", action="store_true", help="half the configurations")
    c.add_argument("--limit", type=int, default=0, help="only the first N configurations of each split "
                   "(a smoke test; too few to train a useful model)")
    add_train_parser(sub)
    r = sub.add_parser("predict", help="choose a thread count for one configuration")
    r.add_argument("scenario", help="a scenario id (%s), with :headless for the headless form "
                   "of one that has an env" % ", ".join(seer_envs.registry()))
    r.add_argument("params", nargs="*", help="key=value")
    a = p.parse_args(argv)
    if a.cmd == "collect" and (a.repeats < 1 or a.budget_s < 0):
        p.error("--repeats must be >= 1 and --budget-s >= 0")
    return {"collect": cmd_collect, "train": cmd_train, "predict": cmd_predict}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
