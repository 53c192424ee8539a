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

Per-copy worlds (env scenarios): ``[run] copies = N`` runs N copies in one
vector env; a per-copy field of ``[params]`` may then be a list of N values
(one per copy), and a ``[param_sampler]`` table draws per-copy fields at
every reset of every copy::

    [param_sampler]
    call_interarrival_mean = {uniform = [100.0, 300.0]}
    team_reward_share = {choice = [0.0, 0.5]}       # or a plain list of choices

Every error names the file, the table and key, and what is expected.
"""

import dataclasses
import itertools
import math
import os
import tomllib

from seer.scenarios import registry
from seer_envs.scenario.config import build
from seer_runtime.loop import MAX_THREADS_PY as MAX_THREADS     # check_num_threads's bound

TOP_KEYS = ("scenario", "description", "params", "param_sampler", "run", "sweep")
RUN_KEYS = ("steps", "end_time", "seeds", "policy", "action", "num_threads", "copies")
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
    param_sampler: dict = None

    def points(self):
        """Every run of the file: [{"params", "run", "swept"}] (and
        ``"param_sampler"`` when the file has one), in file order."""
        extra = {"param_sampler": dict(self.param_sampler)} if self.param_sampler else {}
        if not self.sweep:
            return [{"params": dict(self.params), "run": dict(self.run), "swept": {}, **extra}]
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
            out.append({"params": params, "run": run, "swept": dict(zip(keys, values)), **extra})
        return out

    @property
    def vector(self):
        """True when the file runs copies in one vector env (``[run] copies``
        or a ``[param_sampler]``)."""
        return "copies" in self.run or bool(self.param_sampler)


def _err(path, where, msg):
    return ConfigError(f"{path}: {where}: {msg}")


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def per_copy_fields(scenario):
    """The fields of ``scenario``'s config that may take one value per copy:
    ``max_cycles`` and its copies' ``per_copy`` declaration (none for a
    scenario without copies)."""
    from seer_envs.episode.worlds import per_copy_fields as fields
    copies = getattr(getattr(scenario, "spec", None), "copies", None)
    return () if copies is None else fields(copies)


def _not_per_copy(scenario, field, what):
    """The message for a field that cannot take one value per copy."""
    cls = scenario.config_cls.__name__
    fields = per_copy_fields(scenario)
    if field not in {f.name for f in dataclasses.fields(scenario.config_cls)}:
        return f"unknown {cls} field; the per-copy fields of {scenario.name} are {', '.join(fields)}"
    return (f"{what}, but {cls}.{field} cannot differ between copies (array shapes, spaces or the "
            f"engine's lookahead depend on it); the per-copy fields of {scenario.name} are {', '.join(fields)}")


def _copy_params(path, scenario, params, copies, where):
    """``params`` of each copy: a list value of a per-copy field gives one
    value per copy (``copies`` of them); [params] itself when none is a list."""
    lists = {k: v for k, v in params.items() if isinstance(v, list)}
    if not lists:
        return [params]
    fields = {f.name for f in dataclasses.fields(scenario.config_cls)}
    for k, v in lists.items():
        if k not in fields:
            continue                        # the config's own "unknown parameter" error follows
        if scenario.kind != "env":
            raise _err(path, f"{where} {k}", f"{scenario.name} is a headless run (one world): a list of "
                       "values (one per copy) needs an env scenario and [run] copies")
        if k not in per_copy_fields(scenario):
            raise _err(path, f"{where} {k}", _not_per_copy(scenario, k, "a list gives one value per copy"))
        if copies is None:
            raise _err(path, f"{where} {k}", f"a list gives one value per copy: set [run] copies = {len(v)} "
                       "(that many copies in one vector env)")
        if len(v) != copies:
            raise _err(path, f"{where} {k}", f"expected {copies} values, one per copy ([run] copies = "
                       f"{copies}), got {len(v)}")
    return [{**params, **{k: v[c] for k, v in lists.items()}} for c in range(copies)]


def _check_sampler(path, scenario, sampler, copy_params):
    """The [param_sampler] table in the form ``param_sampler=`` takes
    (``{field: {"uniform": [lo, hi]}}`` or ``{field: {"choice": [...]}}``);
    each bound and choice is checked with the config's own errors against
    every copy's parameters."""
    where = "[param_sampler]"
    if scenario.kind != "env":
        raise _err(path, where, f"{scenario.name} is a headless run (one world, no resets): "
                   "a parameter sampler is for env scenarios")
    if not sampler:
        raise _err(path, where, "the table has no keys: add fields with {uniform = [low, high]} or "
                   "{choice = [a, b, ...]}, or remove [param_sampler]")
    fields = per_copy_fields(scenario)
    out = {}
    for k, v in sampler.items():
        w = f"{where} {k}"
        if k not in fields:
            raise _err(path, w, _not_per_copy(scenario, k, "the sampler draws one value per copy"))
        if isinstance(v, list):
            kind, args = "choice", v
        elif isinstance(v, dict) and len(v) == 1 and next(iter(v)) in ("uniform", "choice"):
            kind, args = next(iter(v.items()))
        else:
            raise _err(path, w, f"expected {{uniform = [low, high]}}, {{choice = [a, b, ...]}} or a list of "
                       f"choices, got {v!r}")
        integer = scenario.config_cls.__dataclass_fields__[k].metadata.get("integer")
        kinds = "integers" if integer else "numbers"
        if (not isinstance(args, list) or not args or not all(_is_number(x) for x in args)
                or (integer and not all(isinstance(x, int) for x in args))):
            raise _err(path, f"{w} {kind}", f"expected a non-empty list of finite {kinds}, got {args!r}")
        if kind == "uniform" and (len(args) != 2 or not args[0] <= args[1]):
            raise _err(path, f"{w} uniform", f"expected [low, high] with low <= high, got {args!r}")
        for x in args:
            for c, p in enumerate(copy_params):
                try:
                    build(scenario.config_cls, {**p, k: x})
                except (ValueError, TypeError) as e:
                    copy = f" (copy {c})" if len(copy_params) > 1 else ""
                    raise _err(path, f"{w} {kind}{copy}", str(e)) from None
        out[k] = {kind: list(args)}
    return out


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
            if v == "heuristic" and scenario.heuristic is None:
                raise _err(path, f"{where} policy", f'{scenario.name} has no heuristic policy; use "random" '
                           'or "fixed" with an action')
        elif k == "copies":
            if scenario.kind != "env":
                raise _err(path, f"{where} copies", f"{scenario.name} is a headless run (one world): "
                           "copies are for env scenarios")
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise _err(path, f"{where} copies", f"expected an integer >= 1, got {v!r}")
        elif k == "num_threads":
            if v != "auto" and (isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_THREADS):
                raise _err(path, f"{where} num_threads",
                           f'expected "auto" or an int in [1, {MAX_THREADS}], got {v!r}')
        out[k] = v
    if out.get("policy") == "fixed" and "action" not in out:
        raise _err(path, f"{where} action", 'policy = "fixed" needs an action value')
    if out.get("policy") == "heuristic" and "copies" in out:
        raise _err(path, f"{where} policy", 'the heuristic policy steps single envs: use policy = "random" '
                   'or "fixed" with copies, or remove copies')
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
        lo = int(getattr(space, "start", 0))
        ok = isinstance(action, int) and not isinstance(action, bool) and lo <= action < lo + space.n
        expected = f"an integer in [{lo}, {lo + space.n - 1}]"
    else:
        import numpy as np
        nums = action if isinstance(action, list) else None
        if nums is not None and len(nums) == space.shape[0] and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in nums):
            ok = space.contains(np.asarray(nums, space.dtype))
        expected = f"a list of {space.shape[0]} numbers in [{space.low.min():g}, {space.high.max():g}]"
    if not ok:
        raise _err(path, f"{where} action", f"expected {expected} (the action space {space}), got {action!r}")


def _check_point(path, scenario, params, run, where, vector=False):
    """Checks that need the params and the run together: what `seer run`
    would otherwise reject only once it has started (the steps against
    max_cycles, a fixed action, the memory the model and engine need).  ``params``: copy 0's
    (a vector run's copies restart when they end: no max_cycles check)."""
    cfg = build(scenario.config_cls, dict(params))
    run_where = "[run]" if where == "[params]" else where
    if scenario.kind == "env":
        if not vector and run["steps"] > cfg.max_cycles:
            raise _err(path, f"{run_where} steps", f"{run['steps']} > max_cycles = {cfg.max_cycles}: the episode "
                       f"ends at max_cycles; lower steps or raise max_cycles in [params]")
        if run.get("policy") == "fixed":
            _check_action(path, action_space(scenario, cfg), run["action"], run_where)
    if hasattr(cfg, "check_memory"):        # the model's own check, before anything is allocated
        try:
            cfg.check_memory(run.get("copies", 1) if scenario.kind == "env" else 1)
        except MemoryError as e:
            raise _err(path, where, str(e)) from None
    for k in scenario.env_only:
        if k in params:
            raise _err(path, f"{where} {k}", f"{scenario.name} is a headless run (no agents, no steps): "
                       f"{k} has no effect there; remove it")


def _check_params(path, scenario, params, where="[params]", copies=None):
    """Each copy's parameters (one dict when no value is a per-copy list),
    each built and validated (the config's own errors)."""
    per_copy = _copy_params(path, scenario, params, copies, where)
    for c, p in enumerate(per_copy):
        try:
            build(scenario.config_cls, dict(p))
        except (ValueError, TypeError) as e:
            raise _err(path, where + (f" (copy {c})" if len(per_copy) > 1 else ""), str(e)) from None
    return per_copy


def _toml_value(text):
    """A ``--set`` value as TOML reads it (``16``, ``1.5``, ``[1, 2]``,
    ``"random"``); a bare word that is not TOML (``random``) is that string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        if text and all(c.isalnum() or c in "_-." for c in text):
            return text
        raise ConfigError(f"--set: {text!r} is not a TOML value (a number, true/false, \"text\", "
                          "[a, b, ...])") from None


def apply_overrides(path, doc, scenario, overrides):
    """``doc`` with each ``KEY=VALUE`` of ``overrides`` (``seer run --set``)
    put into its table: ``params.KEY`` / ``run.KEY``, or a bare ``KEY`` that
    is a Config field ([params]) or a [run] key.  The values are then
    validated like the file's own."""
    fields = {f.name for f in dataclasses.fields(scenario.config_cls)}
    for item in overrides:
        key, eq, text = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ConfigError(f"--set {item!r}: expected KEY=VALUE (e.g. --set grid_width=32 or "
                              "--set run.steps=50)")
        table, dot, name = key.rpartition(".")
        if not dot:
            table = "run" if name in RUN_KEYS else "params" if name in fields else None
        if table not in ("params", "run") or (table == "params" and name not in fields) or (
                table == "run" and name not in RUN_KEYS):
            raise ConfigError(f"--set {key}: unknown key; expected a {scenario.config_cls.__name__} field "
                              f"(`seer list {scenario.name}`) or a [run] key ({', '.join(RUN_KEYS)})")
        target = doc.setdefault(table, {})
        if not isinstance(target, dict):
            raise _err(path, table, "expected a table ([%s])" % table)
        target[name] = _toml_value(text.strip())
    return doc


def load(path, overrides=()):
    """Read and validate a config file, with ``overrides`` (``KEY=VALUE``
    strings, :func:`apply_overrides`) applied first; returns a :class:`Spec`."""
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
    if overrides:
        doc = apply_overrides(path, doc, scenario, overrides)
    for table in ("params", "param_sampler", "run", "sweep"):
        if table in doc and not isinstance(doc[table], dict):
            raise _err(path, table, "expected a table ([%s])" % table)
    raw_params = doc.get("params", {})
    run = _check_run(path, scenario, doc.get("run", {}))
    per_copy = _check_params(path, scenario, raw_params, copies=run.get("copies"))
    sampler = (_check_sampler(path, scenario, doc["param_sampler"], per_copy)
               if "param_sampler" in doc else None)
    if sampler and run.get("policy") == "heuristic":
        raise _err(path, "[run] policy", 'the heuristic policy steps single envs: use policy = "random" or '
                   '"fixed" with [param_sampler]')
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
    spec = Spec(path, scenario, doc.get("description", ""), dict(raw_params), run, sweep, mode, sampler)
    # validate every point now, so a sweep never fails half-way on a typo
    for p in spec.points():
        where = "[sweep] " + ", ".join(f"{k} = {v!r}" for k, v in p["swept"].items()) if p["swept"] else "[params]"
        p_params = {k: v for k, v in p["params"].items() if k in p["swept"] or k in raw_params}
        p_run = _check_run(path, scenario, {k: v for k, v in p["run"].items()
                                            if k in p["swept"] or k in doc.get("run", {})}, where)
        p_copies = _check_params(path, scenario, p_params, where, copies=p_run.get("copies"))
        if sampler and p["swept"]:
            _check_sampler(path, scenario, doc["param_sampler"], p_copies)
        _check_point(path, scenario, p_copies[0], p_run, where, vector=spec.vector)
    return spec          # user-given params only (defaults stay implicit, so they follow the code)
