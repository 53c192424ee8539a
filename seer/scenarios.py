# SPDX-License-Identifier: BSD-3-Clause
"""Scenarios the CLI can run, read from the scenario registry: the envs
(stepped with a policy) and the headless runs (PHOLD, PCS to an end time)."""

import time

import numpy as np

import seer_envs


class Scenario:
    """name, kind ("env" or "headless"), config class, and run(point)."""

    env_only = ()      # config fields this form does not read

    def __init__(self, name, kind, config_cls, description):
        self.name, self.kind, self.config_cls, self.description = name, kind, config_cls, description

    def params(self):
        """``(field, default, unit, doc)`` of each parameter this form takes
        (``seer list``)."""
        from seer_envs.scenario.config import describe
        return [row for row in describe(self.config_cls) if row[0] not in self.env_only]


class EnvScenario(Scenario):
    def __init__(self, spec):
        super().__init__(spec.id, "env", spec.config, spec.description)
        self.spec = spec
        self.heuristic = spec.heuristic

    def run(self, params, run, progress=None, param_sampler=None):
        """Step ``run["steps"]`` steps per seed with ``run["policy"]``: a
        single env, or with ``run["copies"]`` or a ``param_sampler``,
        that many copies in one vector env (:meth:`run_copies`)."""
        if "copies" in run or param_sampler:
            return self.run_copies(params, run, progress, param_sampler)
        steps = run["steps"]
        totals = {"steps": 0, "reward_sum": 0.0, "agent_steps": 0, "events": 0, "wall_s": 0.0}
        per_seed = []
        choice = None
        busy = None
        for seed in run["seeds"]:
            env = self.spec.make_env(num_threads=run["num_threads"], **params)
            obs = env.reset_arrays(seed=seed)
            resumed = None
            if run.get("from_state"):       # continue a saved episode (seer run --from-state)
                with open(run["from_state"], "rb") as f:
                    env.restore(f.read())
                obs = env._batch.copies.obs
                resumed = env._cycle
                if not env.agents:
                    from seer.configfile import ConfigError
                    env.close()
                    raise ConfigError(f"--from-state {run['from_state']}: the saved episode has ended (step "
                                      f"{resumed} of max_cycles = {env.max_cycles}, no agent in play): nothing "
                                      f"to run; save a state before the end, or run without --from-state")
            events0 = env.engine.stats()["events"]      # a restored run's events before the snapshot are not ours
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
            if run.get("save_state"):       # the state at the end (seer run --save-state)
                with open(run["save_state"], "wb") as f:
                    f.write(env.snapshot().to_bytes())
            stats = env.engine.stats()
            choice = env.thread_choice
            busy = stats["busy_s"]
            per_seed.append(rew_sum / max(1, agent_steps))
            totals["steps"] += k
            totals["reward_sum"] += rew_sum
            totals["agent_steps"] += agent_steps
            totals["events"] += stats["events"] - events0
            totals["wall_s"] += wall
            env.close()
        w = totals["wall_s"]
        extra = {"resumed_at_step": resumed} if run.get("from_state") else {}
        return {"steps": totals["steps"], "events": totals["events"], "wall_s": w, **extra,
                "steps_per_s": totals["steps"] / w if w else 0.0,
                "events_per_s": totals["events"] / w if w else 0.0,
                "mean_reward": totals["reward_sum"] / max(1, totals["agent_steps"]),
                "reward_per_seed": per_seed, "num_threads": choice.chosen, "thread_choice": choice,
                "busy_s": busy}

    def run_copies(self, params, run, progress=None, param_sampler=None):
        """``run["copies"]`` (default 1) copies in one vector env
        (``seer_envs.vector_env``, ``next_step`` autoreset: a copy that ends
        restarts and the run goes on), ``steps`` steps per seed; per-copy
        lists in ``params`` and ``param_sampler`` go to the vector env as
        they are.  The mean reward is over the agents in play."""
        from seer_envs.views.vector import vector_env
        steps, copies = run["steps"], run.get("copies", 1)
        kw = {"param_sampler": param_sampler} if param_sampler else {}
        totals = {"steps": 0, "reward_sum": 0.0, "agent_steps": 0, "events": 0, "wall_s": 0.0}
        per_seed = []
        choice = busy = last = None
        for seed in run["seeds"]:
            venv = vector_env(self.name, copies, num_threads=run["num_threads"], **kw, **params)
            try:
                obs, infos = venv.reset(seed=seed)
                policy = self._copies_policy(venv, run, np.random.default_rng(seed + 1))
                t0 = time.perf_counter()
                rew_sum, agent_steps = 0.0, 0
                for _ in range(steps):
                    acting = infos["mask"]
                    obs, rew, term, trunc, infos = venv.step(policy(obs))
                    rew_sum += float(rew.sum(dtype=np.float64))
                    agent_steps += int(acting.sum())
                    if progress:
                        progress.update(1)
                wall = time.perf_counter() - t0
                stats = [e.stats() for e in venv.engines]       # one engine, or one per group of copies
                choice, busy = venv.thread_choice, stats[0]["busy_s"]
                last = {k: v.tolist() for k, v in venv.params.items()}
            finally:
                venv.close()
            per_seed.append(rew_sum / max(1, agent_steps))
            totals["steps"] += steps
            totals["reward_sum"] += rew_sum
            totals["agent_steps"] += agent_steps
            totals["events"] += sum(st["events"] for st in stats)
            totals["wall_s"] += wall
        w = totals["wall_s"]
        return {"steps": totals["steps"], "copies": copies, "events": totals["events"], "wall_s": w,
                "steps_per_s": totals["steps"] / w if w else 0.0,
                "events_per_s": totals["events"] / w if w else 0.0,
                "mean_reward": totals["reward_sum"] / max(1, totals["agent_steps"]),
                "reward_per_seed": per_seed, "num_threads": choice.chosen, "thread_choice": choice,
                "busy_s": busy, "params_last_seed": last}

    def _copies_policy(self, venv, run, rng):
        E, n = venv.num_envs, venv.num_agents
        space = venv.single_action_space
        if run["policy"] == "fixed":
            a = np.asarray(run.get("action", 0), space.dtype)
            fixed = np.broadcast_to(a, (E, n) + a.shape).copy()
            return lambda obs: fixed
        if hasattr(space, "n"):
            return lambda obs: rng.integers(space.start, space.start + space.n, (E, n))
        return lambda obs: rng.uniform(space.low, space.high, (E, n) + space.shape).astype(np.float32)

    def _policy(self, env, run, rng):
        n = len(env.possible_agents)
        space = env.action_space(env.possible_agents[0])
        kind = run["policy"]
        if kind == "heuristic":
            if self.heuristic is None:
                raise ValueError(f"{self.name} has no heuristic policy")
            return lambda obs: self.heuristic(env, obs)
        if kind == "fixed":
            a = run.get("action", 0)
            fixed = np.array([a] * n) if np.ndim(a) == 0 else np.tile(np.asarray(a, np.float32), (n, 1))
            if not all(space.contains(np.asarray(x, space.dtype)) for x in fixed[:1]):
                raise ValueError(f"[run] action {a!r} is not in the action space {space}")
            return lambda obs: fixed
        if hasattr(space, "n"):
            return lambda obs: rng.integers(space.start, space.start + space.n, n)
        return lambda obs: rng.uniform(space.low, space.high, (n,) + space.shape).astype(np.float32)


class HeadlessScenario(Scenario):
    def __init__(self, spec, name=None):
        super().__init__(name or spec.id, "headless", spec.config, spec.description)
        self.spec = spec
        # an env scenario's config also holds fields only its env reads
        # (PCS's dt, max_cycles): its spec names them
        self.env_only = tuple(spec.headless_ignores)

    def run(self, params, run, progress=None):
        out = []
        # the full config, so the defaults are the ones `seer list` shows
        params = self.spec.normalize(params)
        choose = seer_envs.stpa_chooser(self.spec, params, headless=True)
        for seed in run["seeds"]:
            r = self.spec.headless(end_time=run["end_time"], num_threads=run["num_threads"], seed=seed,
                                   choose=choose, **params)
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


def registry():
    """name -> Scenario, for every scenario this install can run: each
    registered env by its id, each headless runner by its id (``id:headless``
    for a scenario that also has an env)."""
    out = {}
    for sid, spec in seer_envs.registry().items():
        if spec.env is not None:
            out[sid] = EnvScenario(spec)
        if spec.headless is not None:
            name = sid + ":headless" if spec.env is not None else sid
            out[name] = HeadlessScenario(spec, name)
    return dict(sorted(out.items()))
