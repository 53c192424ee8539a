# SPDX-License-Identifier: BSD-3-Clause
"""``stpa collect | train | predict`` — re-fit STPA's model on this machine.

    stpa collect [--out stpa_data.csv] [--split train|heldout|both] [--quick]
    stpa train   [--data stpa_data.csv] [--out model.txt]
    stpa predict SCENARIO[:headless] [key=value ...]

STPA knows no scenario; this console script (in the ``seer`` package, above
both) opens the registry's scenarios and hands STPA their runs.  A workload
is a scenario id (``pcs_v0``), with ``:headless`` for the headless form of a
scenario that also has an env (``pcs_v0:headless``).
"""

import argparse
import csv
import json
import sys

import seer_envs
from seer import stpa_sweep
from stpa import features
from stpa.cli import cmd_train, collect_config
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


def cmd_collect(a):
    hw = probe()
    cap, _ = thread_caps(hw)
    candidates = list(range(1, cap + 1))
    splits = ["train", "heldout"] if a.split == "both" else [a.split]
    todo = []
    have = seer_envs.registry()
    for split in splits:
        for w, p in stpa_sweep.configs(split, quick=a.quick, with_aircraft="aircraft_v0" in have):
            todo.append((split, w, p))
    fields = ["config_id", "split", "workload", "params", "threads", "throughput", "speedup",
              "units", "preflight_s"] + features.COLUMNS
    with open(a.out, "w", newline="") as f, tqdm(total=len(todo), desc="stpa collect", unit="config") as bar:
        out = csv.writer(f)
        out.writerow(fields)
        for i, (split, w, p) in enumerate(todo):
            try:
                trace, thr, units = collect_config(opener(w, p), candidates, repeats=a.repeats)
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
            raise SystemExit(f"stpa predict: expected key=value, got {kv!r}")
        k, v = kv.split("=", 1)
        params[k] = _value(v)
    try:
        spec, headless = parse_workload(a.scenario)
        cfg = spec.build_config(params)
        key = spec.stpa_key(cfg, headless)
    except ValueError as e:
        raise SystemExit(f"stpa predict: {e}")
    n, choice = stpa.choose(key, spec.opener(cfg, headless))
    print(f"{a.scenario} {params}: {n} thread(s) [{choice['method']}; cap {choice['cap']} "
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
    t = sub.add_parser("train", help="fit the model on a dataset and save it")
    t.add_argument("--data", default="stpa_data.csv")
    t.add_argument("--out", default="stpa_model.txt")
    r = sub.add_parser("predict", help="choose a thread count for one configuration")
    r.add_argument("scenario", help="a scenario id (%s), with :headless for the headless form "
                   "of one that has an env" % ", ".join(seer_envs.registry()))
    r.add_argument("params", nargs="*", help="key=value")
    a = p.parse_args(argv)
    return {"collect": cmd_collect, "train": cmd_train, "predict": cmd_predict}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
