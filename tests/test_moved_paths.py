# SPDX-License-Identifier: BSD-3-Clause
"""The flat layout's module paths (issue 53) still import for a release:
each warns with a DeprecationWarning naming its new path and gives the very
same objects; pickles that name them still load.  The version modules
(seer_envs.pcs_v0, ...) are made from the registry for every env and warn,
naming seer_envs.make.  SEER's own code uses the
new paths: importing seer_envs and building and stepping every env warns
nothing, and no scenario imports a private or moved module."""

import importlib
import os
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

import seer_envs
from seer_envs._moved import MOVED

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _fresh(code):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)


def _import_afresh(name):
    """Import ``name`` as if for the first time: (the module, the
    DeprecationWarnings the import gave)."""
    sys.modules.pop(name, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mod = importlib.import_module(name)
    return mod, [w for w in caught if issubclass(w.category, DeprecationWarning)]


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_path_warns_and_gives_the_same_objects(old):
    name = f"seer_envs.{old}"
    alias, dep = _import_afresh(name)
    assert len(dep) == 1, [str(w.message) for w in dep]
    new = f"seer_envs.{MOVED[old][0]}"
    assert new in str(dep[0].message) and name in str(dep[0].message)
    primary = importlib.import_module(new)
    for target in MOVED[old]:
        for k, v in vars(importlib.import_module(f"seer_envs.{target}")).items():
            if not (k.startswith("__") and k.endswith("__")):
                # the module it became wins a name it shares with a split-off part
                assert getattr(alias, k) is vars(primary).get(k, v), (old, target, k)
    # a second import is the same module, without a second warning
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        assert importlib.import_module(name) is alias
    assert not again


def test_old_names_split_off_their_module_still_resolve():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from seer_envs._batch import Batch, CopiesByReduce, _Guard, after_fork_in_child, runs
        from seer_envs.core import EPISODE_KEY, EpisodeCore, Step, check_seed
        from seer_envs.parallel import SeerParallelEnv, _restore
        from seer_envs.copies import Copies
        from seer_envs._reference import ReferenceEngine
        from seer_envs._snapshot import Snapshot
    from seer_envs.episode.arguments import check_seed as check_seed2
    from seer_envs.episode.copying import CopiesByReduce as C2
    from seer_envs.episode.core import EpisodeCore as E2
    from seer_envs.episode.step import EPISODE_KEY as K2, Step as S2
    from seer_envs.layout.batch import Batch as B2
    from seer_envs.layout.guard import _Guard as G2, after_fork_in_child as A2
    from seer_envs.layout.plans import runs as R2
    from seer_envs.scenario.copies import Copies as Co2
    from seer_envs.scenario.reference import ReferenceEngine as Re2
    from seer_envs.views.parallel import SeerParallelEnv as P2, _restore as r2
    assert (Batch, CopiesByReduce, _Guard, after_fork_in_child, runs) == (B2, C2, G2, A2, R2)
    assert (EPISODE_KEY, EpisodeCore, Step, check_seed) == (K2, E2, S2, check_seed2)
    assert (SeerParallelEnv, _restore, Copies, ReferenceEngine) == (P2, r2, Co2, Re2)
    assert Snapshot is seer_envs.Snapshot


def test_old_path_as_an_attribute_of_the_package():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert seer_envs.vector.SeerVectorEnv is importlib.import_module("seer_envs.views.vector").SeerVectorEnv
    with pytest.raises(AttributeError):
        seer_envs.no_such_module


def _old_pickle(obj):
    """A pickle of ``obj`` as the flat layout wrote it: protocol 0 names each
    global as ``c<module>\\n<name>\\n``, so the new paths are put back."""
    raw = pickle.dumps(obj, protocol=0)
    for old, new in MOVED.items():
        raw = raw.replace(f"cseer_envs.{new[0]}\n".encode(), f"cseer_envs.{old}\n".encode())
    assert b"seer_envs.views" not in raw and b"seer_envs.snapshot." not in raw
    return raw


def test_pickles_naming_the_old_paths_still_load():
    kw = dict(grid_width=4, grid_height=4)
    env = seer_envs.make("pcs_v0", **kw)
    env.reset(seed=3)
    vec = seer_envs.vector_env("pcs_v0", 3, **kw)
    vec.reset(seed=3)
    snap = env.snapshot()
    raw = _old_pickle({"env": env, "vec": vec, "snap": snap})
    assert b"cseer_envs.parallel\n" in raw and b"cseer_envs._snapshot\n" in raw
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        back = pickle.loads(raw)
    e2, v2 = back["env"], back["vec"]
    assert type(e2) is type(env) and type(v2) is type(vec) and type(back["snap"]) is seer_envs.Snapshot
    acts = {a: 1 for a in env.agents}
    o1, o2 = env.step(acts)[0], e2.step(acts)[0]
    assert all(np.array_equal(o1[a], o2[a]) for a in o1)
    va = np.ones((3, 16), np.int64)
    assert np.array_equal(vec.step(va)[0], v2.step(va)[0])
    e3 = seer_envs.make("pcs_v0", **kw)
    e3.reset(seed=0)
    e3.restore(back["snap"])
    o3 = e3.step(acts)[0]
    assert all(np.array_equal(o1[a], o3[a]) for a in o1)


def test_a_gossip_env_pickled_before_its_env_module_went_still_loads(monkeypatch):
    """Gossip's env class was ``seer_envs.gossip.env.GossipEnv``; the
    registry now makes it from the spec.  A pickle naming the old class
    (``_restore(seer_envs.gossip.env.GossipEnv, ...)``, as it was written)
    loads as the registry's class, with a DeprecationWarning, and continues
    bit for bit."""
    from seer_envs.views.parallel import _restore
    cls = seer_envs.get("gossip_v0").env
    env = seer_envs.make("gossip_v0", num_agents=7, num_threads=1)
    env.reset_arrays(seed=2)
    env.step_arrays(np.ones(7, np.int64))
    state = env.core.reduce_state("GossipEnv")

    class Written:                           # what the env's __reduce__ gave then
        def __reduce__(self):
            return (_restore, (cls, env._init_kwargs, state))
    monkeypatch.setattr(cls, "__module__", "seer_envs.gossip.env")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        raw = pickle.dumps(Written(), protocol=0)
    monkeypatch.undo()
    assert b"cseer_envs.gossip.env\nGossipEnv\n" in raw
    sys.modules.pop("seer_envs.gossip.env", None)     # its import warns once
    with pytest.warns(DeprecationWarning, match="gossip"):
        back = pickle.loads(raw)
    assert type(back) is cls
    a = np.array([1, 2, 0, 3, 4, 1, 2])
    np.testing.assert_array_equal(back.step_arrays(a)[0], env.step_arrays(a)[0])


def test_import_make_and_step_warn_nothing():
    code = ("import numpy as np, seer_envs\n"
            "for i in sorted(seer_envs.envs()):\n"
            "    e = seer_envs.make(i); e.reset(seed=1)\n"
            "    e.step({a: e.action_space(a).sample() for a in e.agents})\n"
            "    e.snapshot(); e.close()\n"
            "    if seer_envs.get(i).copies is not None:\n"
            "        v = seer_envs.vector_env(i, 2); v.reset(seed=1); v.close()\n"
            "import sys\n"
            "from seer_envs._moved import MOVED\n"
            "loaded = [m for m in MOVED if 'seer_envs.' + m in sys.modules]\n"
            "assert not loaded, loaded\n")
    out = _fresh(code)
    assert out.returncode == 0, out.stderr[-3000:]


SCENARIOS = sorted(n for n in os.listdir(os.path.join(ROOT, "seer_envs"))
                   if os.path.exists(os.path.join(ROOT, "seer_envs", n, "spec.py")))


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenarios_import_no_private_or_moved_module(scenario):
    """A scenario uses the public kit (seer_envs.scenario, seer_envs.views),
    never a private module of seer_envs nor an old path."""
    from seer_test_helpers import imported_modules
    bad = []
    for f, m in imported_modules(os.path.join(ROOT, "seer_envs", scenario)):
        parts = m.split(".")
        if parts[0] == "seer_envs" and len(parts) > 1 and (
                parts[1].startswith("_") or (len(parts) == 2 and parts[1] in MOVED)):
            bad.append(f"{scenario}/{f}: {m}")
    assert not bad, bad


@pytest.mark.parametrize("sid", sorted(seer_envs.envs()))
def test_version_module_of_every_env_warns_and_builds_through_make(sid):
    mod, dep = _import_afresh(f"seer_envs.{sid}")
    assert len(dep) == 1 and f"seer_envs.make({sid!r}" in str(dep[0].message)
    assert dep[0].filename == __file__ or "importlib" not in dep[0].filename
    spec = seer_envs.get(sid)
    assert getattr(mod, spec.env.__name__) is spec.env and getattr(mod, spec.config.__name__) is spec.config
    assert (getattr(mod, "run_headless", None) is spec.headless) or spec.headless is None
    assert mod.raw_env is mod.env
    kw = dict(spec.test_params, num_threads=1)
    env, ref = mod.parallel_env(**kw), seer_envs.make(sid, **kw)
    assert type(env) is type(ref) is spec.env
    assert env.reset(seed=2)[0].keys() == ref.reset(seed=2)[0].keys()
    o1, o2 = env.reset(seed=5)[0], ref.reset(seed=5)[0]
    assert all(np.array_equal(o1[a], o2[a]) for a in o1)
    aec = mod.env(**kw)
    assert aec.unwrapped.metadata == ref.metadata
    for e in (env, ref, aec):
        e.close()


def test_no_version_module_for_an_unknown_id():
    with pytest.raises(ImportError):
        importlib.import_module("seer_envs.no_such_env_v0")
    with pytest.raises(AttributeError):
        seer_envs.no_such_env_v0
