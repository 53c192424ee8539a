# SPDX-License-Identifier: BSD-3-Clause
"""How much a state-dependent guard beats every constant one on a PCS task:
the search behind ``pcs_hotspot_v1``'s defaults and ``rush_guard``'s
threshold (docs/pcs.md).

    python tools/perf/pcs_headroom.py [--env pcs_hotspot_v1] [--set key=value ...] [--seeds 24]
        [--seed0 1000] [--thresholds 0.3,0.45,0.6,0.8]

Plays every constant guard and the threshold rules "the largest guard (or
``high``) where the last step's handoffs in per phone exceed ``t``, ``low``
elsewhere" on ``--seeds`` episodes (one vector-env copy a seed, seeds
``--seed0`` on: keep them apart from the evaluations' 10000+ and the
tests' 30000+), and prints each policy's mean return per cell, the best
constant, the best rule and the rule's gain in % of the constant's return.
"""

import argparse
import itertools
import sys
import tomllib

import numpy as np
from tqdm import tqdm

import seer_envs
from seer_envs.pcs.handlers import OBS_LAYOUT

HANDOFFS_IN = OBS_LAYOUT["handoffs_in"]


def returns(env_id, policy, seeds, **kw):
    """Mean return per cell of each seed's episode under ``policy(obs)``."""
    venv = seer_envs.vector_env(env_id, len(seeds), num_threads=1, **kw)
    obs, _ = venv.reset(seed=list(seeds))
    out = np.zeros(len(seeds))
    for _ in range(seer_envs.get(env_id).build_config(dict(kw)).max_cycles):
        obs, rew, _, _, _ = venv.step(policy(obs))
        out += rew.mean(axis=1, dtype=np.float64)
    venv.close()
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", default="pcs_hotspot_v1")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a config field over the task's defaults (TOML value), repeatable")
    p.add_argument("--seeds", type=int, default=24)
    p.add_argument("--seed0", type=int, default=1000)
    p.add_argument("--thresholds", default="0.3,0.45,0.6,0.8")
    a = p.parse_args(argv)
    kw = {}
    for item in a.set:
        key, sep, value = item.partition("=")
        if not sep:
            p.error(f"--set expects KEY=VALUE, got {item!r}")
        try:
            kw[key] = tomllib.loads(f"v = {value}")["v"]
        except tomllib.TOMLDecodeError:
            kw[key] = value
    if a.seeds < 1:
        p.error(f"--seeds must be >= 1, got {a.seeds}")
    try:
        thresholds = [float(t) for t in a.thresholds.split(",")]
        top = seer_envs.get(a.env).build_config(dict(kw)).num_guard_actions - 1
    except (ValueError, KeyError) as e:
        p.error(str(e))
    seeds = range(a.seed0, a.seed0 + a.seeds)
    rules = list(itertools.product(thresholds, (0, 1), (top - 1, top)))
    res = {}
    with tqdm(total=top + 1 + len(rules), desc="policies", file=sys.stderr) as bar:
        for g in range(top + 1):
            res[f"constant {g}"] = returns(a.env, lambda o, g=g: np.full(o.shape[:2], g, np.int64), seeds, **kw)
            bar.update(1)
        for t, lo, hi in rules:
            res[f"rule t={t:g} low={lo} high={hi}"] = returns(
                a.env, lambda o, t=t, lo=lo, hi=hi: np.where(o[..., HANDOFFS_IN] > t, hi, lo).astype(np.int64),
                seeds, **kw)
            bar.update(1)
    for name, r in res.items():
        print(f"{name:<28} {r.mean():9.2f}")
    const = max((n for n in res if n.startswith("constant")), key=lambda n: res[n].mean())
    rule = max((n for n in res if n.startswith("rule")), key=lambda n: res[n].mean())
    gain = res[rule].mean() - res[const].mean()
    print(f"best constant: {const} ({res[const].mean():.2f}); best rule: {rule} ({res[rule].mean():.2f}); "
          f"gain {gain:.2f} = {100 * gain / abs(res[const].mean()):.1f}% of the constant's return "
          f"({a.seeds} seeds from {a.seed0})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
