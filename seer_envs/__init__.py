# SPDX-License-Identifier: BSD-3-Clause
"""SEER's environments: PettingZoo ParallelEnvs on the SEER runtime.

Every scenario registers one :class:`seer_runtime.ScenarioSpec` from its own
package (``seer_envs/<name>/spec.py``, found at the first
:func:`registry` call); this module only reads the registry.

>>> import seer_envs
>>> sorted(seer_envs.envs())
['aircraft_v0', 'gossip_v0', 'pcs_hotspot_v0', 'pcs_hotspot_v1', 'pcs_v0']
>>> env = seer_envs.make("pcs_v0", grid_width=4, grid_height=4)

Envs are built by id, here: :func:`make` (one copy, PettingZoo),
:func:`vector_env` (many copies in one engine) and :func:`agent_vector_env`
(Gymnasium).  The package is laid out by layer: :mod:`seer_envs.episode` (the
episode core and its rules), :mod:`seer_envs.layout` (where copies run),
:mod:`seer_envs.snapshot`, :mod:`seer_envs.views` and :mod:`seer_envs.scenario`
(the scenario author's kit); the old flat paths and the per-version modules
are deprecated aliases (:mod:`seer_envs._moved`).
"""

import numpy as np

from seer_envs.episode.actions import resting_action
from seer_runtime import Run
from seer_runtime import spec as _spec

from seer_envs import _moved  # noqa: E402

_spec.add_search_package("seer_envs")
_spec.set_default_env_run(lambda spec, params, num_threads, seed: env_run(spec, params, num_threads, seed))
_moved.install()        # the flat layout's module paths, for one release


def _env_class(spec):
    from seer_envs.views.parallel import env_class
    return env_class(spec)


_spec.set_env_class(_env_class)

from seer_envs.snapshot.whole import Snapshot  # noqa: E402

__all__ = ["registry", "envs", "get", "make", "env_run", "stpa_chooser", "vector_env", "agent_vector_env",
           "Snapshot"]


def registry():
    """id -> :class:`seer_runtime.ScenarioSpec` for every scenario (envs and
    headless models such as PHOLD), sorted by id."""
    return _spec.registry()


def envs():
    """id -> spec of the scenarios that have a PettingZoo env."""
    return {k: s for k, s in registry().items() if s.env is not None}


def get(scenario_id):
    """The spec of a registered id (ValueError naming the known ids)."""
    return _spec.get(scenario_id)


def make(env_id, aec=False, **kwargs):
    """Build a registered env: the ParallelEnv, or the AEC form with ``aec=True``."""
    env = get(env_id).make_env(**kwargs)
    if aec:
        from pettingzoo.utils.conversions import parallel_to_aec
        return parallel_to_aec(env)
    return env


def _lifted_max_cycles(spec, params, top=10**9):
    """The largest ``max_cycles`` in [the user's, ``top``] that the config's
    validation accepts.  Bounds derived from the horizon ``max_cycles * dt``
    tighten as it grows, so lifting blindly to ``top`` refused valid
    configurations; every value tried is re-validated and the
    user's own is the floor, so the lifted copy opens wherever the original
    does.  The invariant ``ok(lo)`` holds even if a bound is not monotone."""
    lo = int(params["max_cycles"])

    def ok(m):
        try:
            spec.build_config(dict(params, max_cycles=m))
            return True
        except (ValueError, TypeError, OverflowError):
            return False
    if lo >= top or ok(top):
        return max(lo, top)
    hi = top                           # refused
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo


def env_run(spec, params, num_threads, seed):
    """A :class:`seer_runtime.Run` of an env: each unit is one
    ``step_arrays`` with zero actions (the no-op of the scenarios here; the
    space's ``start`` or bound where 0 is not an action);
    a finished episode is reset with the next seed.  ``max_cycles`` is
    lifted, as far as the configuration's validation allows, so a preflight
    or a benchmark rarely stops at truncation; it never fails where the
    user's configuration opens, and an error names the user's parameters."""
    params = dict(params)
    if "max_cycles" in params:
        spec.build_config(params)          # the user's own configuration's error, if any
        params["max_cycles"] = _lifted_max_cycles(spec, params)
    env = spec.make_env(num_threads=num_threads, **params)
    env.reset_arrays(seed=seed)
    n = len(env.possible_agents)
    acts = np.array([resting_action(env.core.action_spec)] * n)       # zeros, within the bounds

    def step():
        if not env.agents:
            env.reset_arrays(seed=seed + 1)
        env.step_arrays(acts)
    return Run(step, lambda: env.engine, env.engine.num_lps, n, owner=env)


def stpa_chooser(spec, params, headless=None, seed=0):
    """A ``choose()`` for :func:`seer_runtime.resolve_threads`: asks STPA
    (preflight + model, cached per configuration and hardware) for ``params``
    of ``spec`` in the env form (or ``headless``)."""
    cfg = spec.build_config(params)
    key = []             # built at the first call: an env asks at every episode start

    def choose():
        import stpa      # ImportError -> resolve_threads falls back to the hard caps
        if not key:
            key.append(spec.stpa_key(cfg, headless))
        return stpa.choose(key[0], spec.opener(cfg, headless), seed=seed)
    return choose


def vector_env(env_id, num_envs, num_threads="auto", **params):
    """``num_envs`` copies of ``env_id`` in one engine, stepped together with
    batched arrays ``(num_envs, num_agents, ...)``, per-copy seeds and
    Gymnasium's auto-reset modes (``autoreset_mode="next_step"`` by
    default); each copy is bit-identical to a single env
    (:mod:`seer_envs.views.vector`)."""
    from seer_envs.views.vector import vector_env as _vector_env
    return _vector_env(env_id, num_envs, num_threads=num_threads, **params)


def agent_vector_env(env_id, num_envs, num_threads="auto", autoreset_mode="next_step", **params):
    """A Gymnasium ``VectorEnv`` with one sub-env per (copy, agent) of
    ``num_envs`` copies of ``env_id``: one policy shared by every agent,
    Gymnasium's vector wrappers (:mod:`seer_envs.views.agent_vector`)."""
    from seer_envs.views.agent_vector import agent_vector_env as _agent_vector_env
    return _agent_vector_env(env_id, num_envs, num_threads=num_threads,
                             autoreset_mode=autoreset_mode, **params)


def _make_vec(env_id, num_envs=1, **kwargs):
    """Gymnasium's ``make_vec`` entry point: the copy-level vector env."""
    from seer_envs.views.vector import SeerVectorEnv
    kwargs.pop("max_episode_steps", None)       # set by make_vec only when a spec has one
    return SeerVectorEnv(env_id, num_envs, **kwargs)


def _make_single(env_id, **kwargs):
    """Gymnasium's ``make`` entry point: refused, naming the calls that work."""
    raise ValueError(
        f"seer/{env_id} is a multi-agent env: gymnasium.make() and make_vec(..., "
        f'vectorization_mode="sync"/"async") build single-agent Gymnasium envs. Use '
        f'seer_envs.make("{env_id}") (PettingZoo ParallelEnv), gymnasium.make_vec("seer/{env_id}", '
        f"num_envs=N) (copies x agents arrays), or seer_envs.agent_vector_env(\"{env_id}\", N) "
        "(a gymnasium VectorEnv with one sub-env per copy and agent)")


def register_gymnasium():
    """Register ``seer/<id>`` with Gymnasium for every scenario with copies,
    so that ``gymnasium.make_vec("seer/pcs_v0", num_envs=64,
    vectorization_mode="vector_entry_point")`` builds :func:`vector_env`
    (run on import of ``seer_envs``); returns the ids."""
    import functools

    import gymnasium
    ids = []
    for sid, spec in envs().items():
        if spec.copies is None:
            continue
        gid = f"seer/{sid}"
        if gid not in gymnasium.registry:
            gymnasium.register(id=gid, entry_point=functools.partial(_make_single, sid),
                               vector_entry_point=functools.partial(_make_vec, sid))
        ids.append(gid)
    return ids


def __getattr__(name):
    """``seer_envs.<old module>`` (``seer_envs.core``, ``seer_envs.vector``, ...)
    without importing it first: the deprecated alias (:mod:`seer_envs._moved`)."""
    mod = _moved.module_getattr(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return mod


register_gymnasium()
