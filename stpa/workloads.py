# SPDX-License-Identifier: BSD-3-Clause
"""Workloads STPA knows how to run: a configuration of one SEER scenario,
advanced one *unit* at a time (an env step, or a slice of simulated time for
headless runs), so preflight, data collection and evaluation measure the
same thing the user runs."""

import dataclasses
import time

import numpy as np


class Runner:
    """An opened workload: ``advance(n)`` runs n units; ``engine`` has the stats."""

    def __init__(self, advance):
        self._advance = advance
        self.units = 0

    def advance(self, n=1):
        for _ in range(n):
            self._advance()
            self.units += 1


def measure(runner, units, get_engine):
    """Run ``units`` units; per-unit wall time, engine time and event counts."""
    rows = []
    for _ in range(units):
        e = get_engine()
        s0 = e.stats()
        t0 = time.perf_counter()
        runner.advance(1)
        wall = time.perf_counter() - t0
        e = get_engine()
        s1 = e.stats()
        rounds = s1["rounds"] - s0["rounds"]
        rows.append({
            "wall_s": wall,
            "engine_s": s1["wall_s"] - s0["wall_s"],
            "events": s1["events"] - s0["events"],
            "pushes": s1["inbox_pushes"] - s0["inbox_pushes"],
            "rounds": rounds,
            "ready": s1["ready_per_round"] * s1["rounds"] - s0["ready_per_round"] * s0["rounds"],
        })
    return rows


class Workload:
    """Base: ``name``, ``code`` (a small int feature), ``defaults``."""

    name = ""
    code = 0

    def normalize(self, params):
        """Full parameter dict (defaults filled, validated)."""
        raise NotImplementedError

    def open(self, params, num_threads, seed):
        """(runner, get_engine, n_entities, n_agents)."""
        raise NotImplementedError


class PholdWorkload(Workload):
    name, code = "phold", 0
    defaults = {"num_lps": 1024, "start_events": 1, "remote_fraction": 0.25, "lookahead": 1.0,
                "mean_delay": 1.0, "work_iters": 0}

    def normalize(self, params):
        unknown = set(params) - set(self.defaults)
        if unknown:
            raise ValueError(f"unknown PHOLD parameter(s): {sorted(unknown)}")
        return {**self.defaults, **params}

    def open(self, params, num_threads, seed):
        from seer_runtime.models import phold
        p = self.normalize(params)
        _, engine = phold.make(num_threads=num_threads, seed=seed, **p)
        engine.init(0.0)
        state = {"t": 0.0}

        def advance():
            state["t"] += 1.0
            engine.run_until(state["t"])
        return Runner(advance), (lambda: engine), p["num_lps"], 0


class PcsHeadlessWorkload(Workload):
    name, code = "pcs_headless", 1

    def normalize(self, params):
        from seer_envs._config import build
        from seer_envs.pcs.config import PCSConfig
        return dataclasses.asdict(build(PCSConfig, dict(params)))

    def open(self, params, num_threads, seed):
        from seer_envs.pcs.config import PCSConfig
        from seer_envs.pcs.handlers import PcsModel
        from seer_runtime import Engine
        cfg = PCSConfig(**self.normalize(params))
        model = PcsModel(cfg)
        engine = Engine(model, num_threads=num_threads, seed=seed)
        engine.init(0.0)
        state = {"t": 0.0}

        def advance():
            state["t"] += cfg.dt
            engine.run_until(state["t"])
        return Runner(advance), (lambda: engine), cfg.num_cells, 0


class PcsEnvWorkload(Workload):
    name, code = "pcs_env", 2

    def normalize(self, params):
        return PcsHeadlessWorkload().normalize(params)

    def open(self, params, num_threads, seed):
        from seer_envs import pcs_v0
        p = dict(self.normalize(params), max_cycles=10**9)
        env = pcs_v0.parallel_env(num_threads=num_threads, **p)
        env.reset_arrays(seed=seed)
        acts = np.zeros(env.config.num_cells, np.int64)
        return (Runner(lambda: env.step_arrays(acts)), (lambda: env.engine),
                env.config.num_cells, env.config.num_cells)


class AircraftEnvWorkload(Workload):
    name, code = "aircraft_env", 3

    def normalize(self, params):
        from seer_envs._config import build
        from seer_envs.aircraft.config import AircraftConfig
        return dataclasses.asdict(build(AircraftConfig, dict(params)))

    def open(self, params, num_threads, seed):
        from seer_envs import aircraft_v0
        p = dict(self.normalize(params), max_cycles=10**9)
        env = aircraft_v0.parallel_env(num_threads=num_threads, **p)
        env.reset_arrays(seed=seed)
        n = env.config.num_uavs
        acts = (np.zeros((n, 2), np.float32) if env.config.continuous_actions
                else np.zeros(n, np.int64))

        def advance():
            if not env.agents:
                env.reset_arrays(seed=seed + 1)
            env.step_arrays(acts)
        ents = n + env.config.num_targets
        return Runner(advance), (lambda: env.engine), ents, n


WORKLOADS = {w.name: w for w in (PholdWorkload(), PcsHeadlessWorkload(), PcsEnvWorkload(),
                                 AircraftEnvWorkload())}


def get(name):
    if name not in WORKLOADS:
        raise ValueError(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}")
    return WORKLOADS[name]
