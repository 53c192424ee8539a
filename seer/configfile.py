# SPDX-License-Identifier: BSD-3-Clause
"""Config files: one scenario, its parameters, the run, and an optional sweep.

```toml
scenario = "pcs_v0"                # see `seer list`
description = "free text"

[params]                           # keys are the scenario's Config fields
grid_width = 16
grid_height = 16

[run]
steps = 240                        # env scenarios (end_time for headless ones)
seeds = [0, 1]
policy = "random"                  # "random", "fixed" (with `action = ...`) or "heuristic"
num_threads = "auto"               # or an int >= 1

[sweep]                            # optional: lists of values for params or run keys
mode = "product"                   # or "zip"
power_control_iters = [0, 100, 1000]
```

Every error names the file, the table and key, and what is expected.
"""

import dataclasses
import itertools
import math
import os
import tomllib

from seer.scenarios import registry
from seer_envs._config import build
from seer_runtime.loop import MAX_THREADS_PY as MAX_THREADS     # check_num_threads's bound

TOP_KEYS = ("scenario", "description", "params", "run", "sweep")
RUN_KEYS = ("steps", "end_time", "seeds", "policy", "action", "num_threads")
POLICIES = ("random", "fixed", "heuristic")


class ConfigError(ValueError):
    """A config file problem; the message names the file and the key."""


@dataclasses.dataclass
class Spec:
    path: str
    scenario: object
    description: str
    params: dict
    run: dict
    sweep: dict
    mode: str

    def points(self):
        """Every run of the file: [{"params", "run", "swept"}], in file order."""
        if not self.sweep:
            return [{"params": dict(self.params), "run": dict(self.run), "swept": {}}]
        keys = list(self.sweep)
        lists = [self.sweep[k] for k in keys]
        combos = zip(*lists) if self.mode == "zip" else itertools.product(*lists)
        out = []
        for values in combos:
            params, run = dict(self.params), dict(self.run)
            for k, v in zip(keys, values):
                if k == "seeds" and isinstance(v, int) and not isinstance(v, bool):
                    v = [v]                 # a swept seed is a one-seed run
                (run if k in RUN_KEYS else params)[k] = v
            out.append({"params": params, "run": run, "swept": dict(zip(keys, values))})
        return out


def _err(path, where, msg):
    return ConfigError(f"{path}: {where}: {msg}")


def _check_run(path, scenario, run, where="[run]"):
    out = {"seeds": [0], "policy": "random", "num_threads": "auto"}
    if scenario.kind == "env":
        out["steps"] = 100
    else:
        out["end_time"] = 100.0
    for k, v in run.items():
        if k not in RUN_KEYS:
            raise _err(path, where, f"unknown key {k!r}; expected one of {', '.join(RUN_KEYS)}")
        if k == "steps":
            if scenario.kind != "env":
                raise _err(path, f"{where} steps", f"{scenario.name} is a headless scenario: use end_time")
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise _err(path, f"{where} steps", f"expected an integer >= 1, got {v!r}")
        elif k == "end_time":
            if scenario.kind == "env":
                raise _err(path, f"{where} end_time", f"{scenario.name} is an env: use steps")
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise _err(path, f"{where} end_time", f"expected a finite number >= 0, got {v!r}")
            v = float(v)
        elif k == "seeds":
            v = [v] if isinstance(v, int) and not isinstance(v, bool) else v
            if (not isinstance(v, list) or not v
                    or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in v)):
                raise _err(path, f"{where} seeds", f"expected an int >= 0 or a non-empty list of them, got {v!r}")
        elif k == "policy":
            if v not in POLICIES:
                raise _err(path, f"{where} policy", f"expected one of {', '.join(POLICIES)}, got {v!r}")
            if scenario.kind != "env":
                raise _err(path, f"{where} policy", f"{scenario.name} is headless: it has no agents")
        elif k == "num_threads":
            if v != "auto" and (isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_THREADS):
                raise _err(path, f"{where} num_threads",
                           f'expected "auto" or an int in [1, {MAX_THREADS}], got {v!r}')
        out[k] = v
    if out.get("policy") == "fixed" and "action" not in out:
        raise _err(path, f"{where} action", 'policy = "fixed" needs an action value')
    return out


def action_space(scenario, config):
    """The action space one agent of ``scenario`` has under ``config`` (a
    Config instance), or None for a headless scenario; from the scenario's
    copies interface alone (no env, no model), so ``seer check`` stays cheap."""
    if scenario.kind != "env":
        return None
    return scenario.spec.spaces(config)[1]


def _check_action(path, space, action, where):
    """A fixed action must be a member of the action space, as given (no
    silent rounding of 1.5 to a guard, no strings)."""
    ok = False
    if hasattr(space, "n"):
        ok = isinstance(action, int) and not isinstance(action, bool) and 0 <= action < space.n
        expected = f"an integer in [0, {space.n - 1}]"
    else:
        import numpy as np
        nums = action if isinstance(action, list) else None
        if nums is not None and len(nums) == space.shape[0] and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in nums):
            ok = space.contains(np.asarray(nums, space.dtype))
        expected = f"a list of {space.shape[0]} numbers in [{space.low.min():g}, {space.high.max():g}]"
    if not ok:
        raise _err(path, f"{where} action", f"expected {expected} (the action space {space}), got {action!r}")


def _check_point(path, scenario, params, run, where):
    """Checks that need the params and the run together: what `seer run`
    would otherwise reject only once it has started."""
    cfg = build(scenario.config_cls, dict(params))
    run_where = "[run]" if where == "[params]" else where
    if scenario.kind == "env":
        if run["steps"] > cfg.max_cycles:
            raise _err(path, f"{run_where} steps", f"{run['steps']} > max_cycles = {cfg.max_cycles}: the episode "
                       f"ends at max_cycles; lower steps or raise max_cycles in [params]")
        if run.get("policy") == "fixed":
            _check_action(path, action_space(scenario, cfg), run["action"], run_where)
    for k in scenario.env_only:
        if k in params:
            raise _err(path, f"{where} {k}", f"{scenario.name} is a headless run (no agents, no steps): "
                       f"{k} has no effect there; remove it")


def _check_params(path, scenario, params, where="[params]"):
    try:
        return dataclasses.asdict(build(scenario.config_cls, dict(params)))
    except (ValueError, TypeError) as e:
        raise _err(path, where, str(e)) from None


def load(path):
    """Read and validate a config file; returns a :class:`Spec`."""
    if not os.path.exists(path):
        raise ConfigError(f"{path}: no such file")
    if os.path.isdir(path):
        raise ConfigError(f"{path}: is a folder; expected a .toml config file (e.g. scenarios/pcs_small.toml)")
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    for k in doc:
        if k not in TOP_KEYS:
            raise _err(path, "top level", f"unknown key {k!r}; expected {', '.join(TOP_KEYS)}")
    scen = registry()
    name = doc.get("scenario")
    if name is None:
        raise _err(path, "top level", f"missing `scenario = ...`; one of {', '.join(scen)}")
    if name not in scen:
        raise _err(path, "scenario", f"unknown scenario {name!r}; expected one of {', '.join(scen)}")
    scenario = scen[name]
    for table in ("params", "run", "sweep"):
        if table in doc and not isinstance(doc[table], dict):
            raise _err(path, table, "expected a table ([%s])" % table)
    raw_params = doc.get("params", {})
    params = _check_params(path, scenario, raw_params)
    run = _check_run(path, scenario, doc.get("run", {}))
    sweep = dict(doc.get("sweep", {}))
    mode = sweep.pop("mode", "product")
    if mode not in ("product", "zip"):
        raise _err(path, "[sweep] mode", f'expected "product" or "zip", got {mode!r}')
    if "sweep" in doc and not sweep:
        raise _err(path, "[sweep]", "the sweep has no keys: add lists of values, or remove [sweep]")
    fields = {f.name for f in dataclasses.fields(scenario.config_cls)}
    for k, v in sweep.items():
        if k not in fields and k not in RUN_KEYS:
            raise _err(path, f"[sweep] {k}", f"unknown key; expected a {scenario.config_cls.__name__} "
                       f"field or a [run] key")
        if not isinstance(v, list) or not v:
            raise _err(path, f"[sweep] {k}", f"expected a non-empty list of values, got {v!r}")
    if mode == "zip" and len({len(v) for v in sweep.values()}) > 1:
        raise _err(path, "[sweep]", f"mode = \"zip\" needs lists of equal length, got "
                   f"{ {k: len(v) for k, v in sweep.items()} }")
    spec = Spec(path, scenario, doc.get("description", ""), params, run, sweep, mode)
    # validate every point now, so a sweep never fails half-way on a typo
    for p in spec.points():
        where = "[sweep] " + ", ".join(f"{k} = {v!r}" for k, v in p["swept"].items()) if p["swept"] else "[params]"
        p_params = {k: v for k, v in p["params"].items() if k in p["swept"] or k in raw_params}
        _check_params(path, scenario, p_params, where)
        p_run = _check_run(path, scenario, {k: v for k, v in p["run"].items()
                                            if k in p["swept"] or k in doc.get("run", {})}, where)
        _check_point(path, scenario, p_params, p_run, where)
    # user-given params only (defaults stay implicit, so they follow the code)
    spec.params = dict(raw_params)
    return spec
