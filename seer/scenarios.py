# SPDX-License-Identifier: BSD-3-Clause
"""Scenarios the CLI can run: the envs (stepped with a policy) and the
headless runs (PHOLD, PCS to an end time)."""

import dataclasses
import importlib
import time

import numpy as np

from seer_envs._config import param, validate


@dataclasses.dataclass(frozen=True)
class PholdConfig:
    """PHOLD's parameters, for config files and ``seer list``."""

    num_lps: int = param(16384, "LPs", "logical processes", lo=1, hi=2**32 - 2, integer=True)
    start_events: int = param(1, "events", "events seeded per LP", lo=0, hi=255, integer=True)
    remote_fraction: float = param(0.25, "", "probability an event goes to a uniform random LP", lo=0.0, hi=1.0)
    lookahead: float = param(1.0, "time", "minimum delay", lo=0.0, lo_open=True)
    mean_delay: float = param(1.0, "time", "mean delay (lookahead + Exp(mean_delay - lookahead))", lo=0.0, lo_open=True)
    work_iters: int = param(0, "iterations", "arithmetic loop per event: the granularity knob", lo=0, integer=True)

    def __post_init__(self):
        validate(self)
        if self.mean_delay < self.lookahead:
            raise ValueError("PholdConfig.mean_delay must be >= lookahead")


class Scenario:
    """name, kind ("env" or "headless"), config class, and run(point)."""

    def __init__(self, name, kind, config_cls, description):
        self.name, self.kind, self.config_cls, self.description = name, kind, config_cls, description


class EnvScenario(Scenario):
    def __init__(self, name, module, config_cls, description, heuristic):
        super().__init__(name, "env", config_cls, description)
        self.module = module
        self.heuristic = heuristic

    def run(self, params, run, progress=None):
        mod = importlib.import_module(self.module)
        steps = run["steps"]
        totals = {"steps": 0, "reward_sum": 0.0, "agent_steps": 0, "events": 0, "wall_s": 0.0}
        per_seed = []
        choice = None
        busy = None
        for seed in run["seeds"]:
            env = mod.parallel_env(num_threads=run["num_threads"], **params)
            obs = env.reset_arrays(seed=seed)
            rng = np.random.default_rng(seed + 1)
            policy = self._policy(env, run, rng)
            t0 = time.perf_counter()
            rew_sum, agent_steps, k = 0.0, 0, 0
            while k < steps and env.agents:
                obs, rew, term, trunc = env.step_arrays(policy(obs))
                rew_sum += float(rew.sum(dtype=np.float64))
                agent_steps += int(rew.size)
                k += 1
                if progress:
                    progress.update(1)
                if trunc.all() or not env.agents:
                    break
            wall = time.perf_counter() - t0
            stats = env.engine.stats()
            choice = env.thread_choice
            busy = stats["busy_s"]
            per_seed.append(rew_sum / max(1, agent_steps))
            totals["steps"] += k
            totals["reward_sum"] += rew_sum
            totals["agent_steps"] += agent_steps
            totals["events"] += stats["events"]
            totals["wall_s"] += wall
            env.close()
        w = totals["wall_s"]
        return {"steps": totals["steps"], "events": totals["events"], "wall_s": w,
                "steps_per_s": totals["steps"] / w if w else 0.0,
                "events_per_s": totals["events"] / w if w else 0.0,
                "mean_reward": totals["reward_sum"] / max(1, totals["agent_steps"]),
                "reward_per_seed": per_seed, "num_threads": choice["chosen"], "thread_choice": choice,
                "busy_s": busy}

    def _policy(self, env, run, rng):
        n = len(env.possible_agents)
        space = env.action_space(env.possible_agents[0])
        kind = run["policy"]
        if kind == "heuristic":
            return lambda obs: self.heuristic(env, obs)
        if kind == "fixed":
            a = run.get("action", 0)
            fixed = np.array([a] * n) if np.ndim(a) == 0 else np.tile(np.asarray(a, np.float32), (n, 1))
            if not all(space.contains(np.asarray(x, space.dtype)) for x in fixed[:1]):
                raise ValueError(f"[run] action {a!r} is not in the action space {space}")
            return lambda obs: fixed
        if hasattr(space, "n"):
            return lambda obs: rng.integers(0, space.n, n)
        return lambda obs: rng.uniform(space.low, space.high, (n,) + space.shape).astype(np.float32)


def _pcs_heuristic(env, obs):
    """Hold back one guard channel where the cell is more than 70% busy."""
    return (obs[:, 0] > 0.7).astype(np.int64)


def aircraft_heuristic_command(env, obs):
    """Commanded acceleration in [-1, 1]^2 per UAV: steer toward the freshest
    known target (gain 0.5), away from neighbours closer than a fifth of the
    comm range, and damp the velocity.  +54 per UAV over a 100-step episode
    of 64 UAVs against +6 for zero acceleration (held-out seeds)."""
    lay = env.obs_layout
    known = obs[:, [lay["target_age"]]] >= 0
    rel = obs[:, lay["target_rel"]] * known
    norm = np.linalg.norm(rel, axis=1, keepdims=True)
    cmd = np.where(norm > 0, 0.5 * rel / np.maximum(norm, 1e-9), 0.0)
    nb = obs[:, lay["neighbours"]].reshape(-1, 4, 4)[:, :, :2]
    d = np.linalg.norm(nb, axis=2, keepdims=True)
    close = (d > 0) & (d < 0.2)
    cmd -= np.where(close, nb / np.maximum(d, 1e-9), 0.0).sum(axis=1)
    cmd -= 0.3 * obs[:, lay["velocity"]]
    return np.clip(cmd, -1, 1).astype(np.float32)


def _aircraft_heuristic(env, obs):
    cmd = aircraft_heuristic_command(env, obs)
    if env.config.continuous_actions:
        return cmd
    # Discrete(9): 0 stays, 1..8 are the directions at 45 degree steps
    ang = np.arctan2(cmd[:, 1], cmd[:, 0])
    d = (np.round(ang / (np.pi / 4)).astype(np.int64) % 8) + 1
    return np.where(np.linalg.norm(cmd, axis=1) > 0.2, d, 0)


class HeadlessScenario(Scenario):
    def __init__(self, name, runner, config_cls, description):
        super().__init__(name, "headless", config_cls, description)
        self.runner = runner

    def run(self, params, run, progress=None):
        out = []
        for seed in run["seeds"]:
            r = self.runner()(end_time=run["end_time"], num_threads=run["num_threads"], seed=seed, **params)
            out.append(r)
            if progress:
                progress.update(1)
        wall = sum(r["wall_s"] for r in out)
        events = sum(r["events"] for r in out)
        res = {"events": events, "wall_s": wall, "events_per_s": events / wall if wall else 0.0,
               "num_threads": out[-1]["num_threads"], "thread_choice": out[-1].get("thread_choice"),
               "busy_s": out[-1]["busy_s"]}
        for k in ("call_attempts", "busy_lines", "channel_blocks", "handoff_blocks", "handoffs"):
            if k in out[0]:
                res[k] = sum(r[k] for r in out)
        if "blocking_probability" in out[0]:
            denom = res["call_attempts"] - res["busy_lines"]
            res["blocking_probability"] = ((res["channel_blocks"] + res["handoff_blocks"]) / denom
                                           if denom else 0.0)
        if "digest" in out[0]:
            res["digest"] = ",".join(r["digest"] for r in out)
        return res


def _phold_run():
    from seer_runtime.models import phold
    return lambda end_time, num_threads, seed, **p: phold.run(end_time=end_time, num_threads=num_threads,
                                                              seed=seed, **p)


def _pcs_headless_run():
    from seer_envs.pcs_v0 import run_headless
    return run_headless


def registry():
    """name -> Scenario, for every scenario this install can run."""
    from seer_envs.pcs.config import PCSConfig
    out = {
        "pcs_v0": EnvScenario("pcs_v0", "seer_envs.pcs_v0", PCSConfig,
                              "PCS env: cellular channel management (communication-heavy)", _pcs_heuristic),
        "pcs_headless": HeadlessScenario("pcs_headless", _pcs_headless_run, PCSConfig,
                                         "PCS as a headless PDES run (no agents, guard 0), to end_time"),
        "phold": HeadlessScenario("phold", _phold_run, PholdConfig,
                                  "PHOLD, the standard PDES benchmark, to end_time"),
    }
    try:
        from seer_envs.aircraft.config import AircraftConfig
    except ImportError:
        pass
    else:
        out["aircraft_v0"] = EnvScenario("aircraft_v0", "seer_envs.aircraft_v0", AircraftConfig,
                                         "Aircraft env: UAV swarm control (compute-heavy)",
                                         _aircraft_heuristic)
    return dict(sorted(out.items()))
