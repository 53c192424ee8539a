# SPDX-License-Identifier: BSD-3-Clause
"""num_threads="auto" accepts exactly what a fixed thread count accepts
(issue 28, Why 1): STPA's preflight opened a copy with max_cycles lifted to
10**9, and bounds derived from that horizon refused configurations the user
never set that way.  Random valid configurations (tiny sizes, every time
constant drawn log-uniformly over many decades) must pass reset() under
"auto" whenever they pass it at one thread, and `seer check` must accept
exactly the files `seer run` runs."""

import math
import random

import pytest

import seer_envs
import stpa
from stpa import select as stpa_select

DRAWS = 80
WORK = 2e4          # expected work of one step above which a draw is skipped (keeps it fast)

# The configurations the issue reported.
KNOWN = [("pcs_v0", {"dt": 120.0}), ("pcs_v0", {"handoff_latency": 0.5}),
         ("pcs_v0", {"call_interarrival_mean": 0.55, "dt": 60.0, "max_cycles": 1}),
         ("aircraft_v0", {"comm_latency": 0.01})]


def logu(rng, lo, hi):
    return 10.0 ** rng.uniform(math.log10(lo), math.log10(hi))


def max_cycles(rng):
    return rng.choice([1, rng.randint(2, 40), 10 ** rng.randint(2, 13)])


def pcs_params(rng):
    return dict(grid_width=rng.randint(1, 3), grid_height=rng.randint(1, 3),
                portables_per_cell=rng.randint(0, 6), channels_per_cell=rng.randint(1, 8),
                call_interarrival_mean=logu(rng, 1e-2, 1e4), call_duration_mean=logu(rng, 1e-2, 1e4),
                move_interval_mean=rng.choice([math.inf, logu(rng, 1e-1, 1e5)]),
                handoff_latency=logu(rng, 1e-3, 1e2), power_control_iters=rng.randint(0, 3),
                dt=logu(rng, 1e-2, 1e4), handoff_penalty=rng.uniform(0, 10), max_cycles=max_cycles(rng),
                team_reward_share=rng.random())


def aircraft_params(rng):
    p = dict(num_uavs=rng.randint(1, 5), num_targets=rng.randint(0, 2), arena_size=logu(rng, 1e-1, 1e4),
             dt=logu(rng, 1e-2, 10.0), control_period=logu(rng, 1e-2, 2.0),
             dynamics_substeps=rng.randint(1, 4), sense_period=logu(rng, 1e-2, 2.0),
             sensor_range=logu(rng, 1e-1, 1e4), comm_range=logu(rng, 1e-1, 1e4),
             max_messages=rng.randint(0, 4), comm_latency=logu(rng, 1e-4, 1.0),
             continuous_actions=rng.random() < 0.5, max_cycles=max_cycles(rng),
             wind_tau=logu(rng, 1e-2, 1e2), wind_sigma=rng.choice([0.0, logu(rng, 1e-2, 1e1)]))
    return p


DRAW = {"pcs_v0": pcs_params, "aircraft_v0": aircraft_params}


def step_work(cfg):
    return cfg.expected_work(cfg.dt) if hasattr(cfg, "num_cells") else cfg.expected_work()


def cheap_valid(name, rng):
    """A drawn configuration that validates and whose steps are cheap, or None."""
    p = DRAW[name](rng)
    try:
        cfg = seer_envs.get(name).build_config(p)
    except ValueError:
        return None
    return p if step_work(cfg) <= WORK else None


@pytest.fixture
def auto_preflights(monkeypatch, tmp_path):
    """A fresh STPA cache, and a cap of 2 threads on any machine, so that
    "auto" always runs the preflight (one CPU or OMP_NUM_THREADS=1 would
    otherwise decide by the cap alone)."""
    monkeypatch.setenv("STPA_CACHE", str(tmp_path / "stpa.json"))
    monkeypatch.setattr(stpa_select, "thread_caps", lambda hw=None: (2, {"test": 2}))
    stpa.clear_cache()
    yield
    stpa.clear_cache()


def opens(name, params, threads):
    env = seer_envs.make(name, num_threads=threads, **params)
    try:
        env.reset(seed=0)
        return None
    except ValueError as e:
        return str(e)
    finally:
        env.close()


@pytest.mark.parametrize("name,params", KNOWN, ids=[f"{n}-{sorted(p)}" for n, p in KNOWN])
def test_reported_configurations_open_under_auto(auto_preflights, name, params):
    assert opens(name, params, 1) is None
    assert opens(name, params, "auto") is None
    assert seer_envs.make(name, **params).config.max_cycles == seer_envs.get(name).build_config(params).max_cycles


@pytest.mark.parametrize("name", sorted(DRAW))
def test_random_valid_configurations_open_under_auto(auto_preflights, name):
    rng = random.Random(f"auto-accepts-{name}")
    tried = 0
    for _ in range(DRAWS):
        p = cheap_valid(name, rng)
        if p is None or opens(name, p, 1) is not None:
            continue
        tried += 1
        err = opens(name, p, "auto")
        assert err is None, f"{name} {p}: refused under 'auto' but opens at 1 thread: {err}"
    assert tried >= DRAWS // 4, f"only {tried} of {DRAWS} draws were valid and cheap"


def test_seer_check_and_seer_run_agree(auto_preflights, tmp_path, capsys):
    from seer.cli import main
    rng = random.Random("auto-accepts-cli")
    files = []
    for name, params in KNOWN[:2] + KNOWN[3:]:
        files.append((name, params))
    while len(files) < 6:
        name = rng.choice(sorted(DRAW))
        p = cheap_valid(name, rng)
        if p is not None:
            files.append((name, p))
    for k, (name, p) in enumerate(files):
        p = dict(p, max_cycles=max(2, p.get("max_cycles", 2)))
        lines = [f'scenario = "{name}"', "[params]"]
        lines += [f"{key} = {_toml(v)}" for key, v in sorted(p.items())]
        lines += ["[run]", "steps = 2", "seeds = [0]", 'num_threads = "auto"']
        f = tmp_path / f"cfg{k}.toml"
        f.write_text("\n".join(lines) + "\n")
        rc_check = main(["check", str(f)])
        rc_run = main(["run", str(f)])
        out, err = capsys.readouterr()
        assert rc_check == rc_run == 0, f"{name} {p}: check {rc_check}, run {rc_run}: {err}"


def _toml(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and math.isinf(v):
        return "inf"
    return repr(v)
