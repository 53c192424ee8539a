# SPDX-License-Identifier: BSD-3-Clause
"""The configurations STPA's default model is trained and evaluated on.

Training and held-out sets use different parameter values, so the
evaluation measures generalisation to configurations never seen in training.
They span fine to coarse events (from ~60 ns to ~50 us) and small to large
scale, over PHOLD, headless PCS, the PCS env and (when built) the Aircraft env.
A workload is a scenario id, with ``:headless`` for the headless form of a
scenario that also has an env (``pcs_v0:headless``).
"""

import random


def _phold(rng, lps, works, looks, n):
    out = []
    for _ in range(n):
        la = rng.choice(looks)
        out.append(("phold", {"num_lps": rng.choice(lps), "work_iters": rng.choice(works),
                              "lookahead": la, "mean_delay": la + rng.choice([0.0, 1.0]),
                              "remote_fraction": rng.choice([0.1, 0.25, 0.6])}))
    return out


def _pcs(rng, kind, grids, iters, lats, n):
    out = []
    for _ in range(n):
        g = rng.choice(grids)
        out.append((kind, {"grid_width": g, "grid_height": g, "power_control_iters": rng.choice(iters),
                           "handoff_latency": rng.choice(lats)}))
    return out


def _aircraft(rng, sizes, subs, n):
    return [("aircraft_v0", {"num_uavs": rng.choice(sizes), "dynamics_substeps": rng.choice(subs)})
            for _ in range(n)]


#: The Aircraft scenario's id: its configurations are drawn only when it is registered.
AIRCRAFT = "aircraft_v0"


def configs(split, quick=False, with_aircraft=True):
    """[(workload, params)] for ``split`` in ("train", "heldout")."""
    rng = random.Random(2026 if split == "train" else 7)
    k = 2 if quick else 1
    if split == "train":
        out = (_phold(rng, [64, 256, 1024, 4096, 16384], [0, 20, 150, 800, 4000, 20000],
                      [1.0, 0.2], 40 // k)
               + _pcs(rng, "pcs_v0:headless", [8, 16, 32, 64, 128], [0, 40, 400, 3000], [1.0, 0.3], 20 // k)
               + _pcs(rng, "pcs_v0", [4, 8, 16, 24, 32, 48, 64, 96], [0, 40, 400, 3000], [1.0, 0.5], 30 // k))
        if with_aircraft:
            out += _aircraft(rng, [16, 64, 128, 256, 512, 1024], [1, 2, 4, 8, 16, 32], 20 // k)
    else:
        out = (_phold(rng, [128, 2048, 8192], [5, 60, 400, 2500, 10000], [1.0, 0.5], 12 // k)
               + _pcs(rng, "pcs_v0:headless", [12, 40, 100], [0, 100, 1500], [1.0, 0.5], 8 // k)
               + _pcs(rng, "pcs_v0", [12, 20, 40, 80], [0, 100, 1500], [1.0, 0.75], 10 // k))
        if with_aircraft:
            out += _aircraft(rng, [32, 96, 384, 768], [3, 6, 12, 24], 8 // k)
    # de-duplicate, keep order
    seen, uniq = set(), []
    for w, p in out:
        key = (w, tuple(sorted(p.items())))
        if key not in seen:
            seen.add(key)
            uniq.append((w, p))
    return uniq
