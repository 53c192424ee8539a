# SPDX-License-Identifier: BSD-3-Clause
"""The parts docs/new_scenario.md calls optional are optional: a scenario
with only the required ones (tests/_shared/minimal_scenario.py: no global
state, no frames, no ``human`` map, no details or summary of its own, no
per-copy fields, no heuristic, no ``env_run``) passes every registry-driven
test, which skip what it does not declare or check the documented
fallback; and a render mode it lacks is refused at construction."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.path.join(ROOT, "tests", "_shared")
#: Every test module parametrised over the registry that builds envs.
REGISTRY_TESTS = ["envs/test_generic.py", "envs/test_template.py", "envs/test_per_copy.py",
                  "envs/test_vector.py", "envs/test_vector_conventions.py", "envs/test_async.py",
                  "envs/test_copy_groups.py", "envs/test_snapshot.py", "envs/test_snapshot_bytes.py",
                  "envs/test_snapshot_checks.py", "envs/test_snapshot_defects.py",
                  "cli/test_cli_errors.py", "cli/test_per_copy_config.py", "runtime/test_config.py"]
#: What the minimal scenario does not declare, so the tests of it skip.
SKIPS = {"declares no render mode", "declares no rgb_array frame", "declares no human mode",
         "declares no global state"}


@pytest.fixture
def minimal():
    """The scenario registered in this process, for the tests below."""
    sys.path.insert(0, SHARED)
    try:
        import minimal_scenario
    finally:
        sys.path.remove(SHARED)
    yield minimal_scenario
    from seer_runtime import spec
    spec._SPECS.pop("minimal_v0", None)
    sys.modules.pop("minimal_scenario", None)


def test_registry_tests_pass_with_only_the_required_parts():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, SHARED]))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                        "minimal_scenario", "-rs", "-k", "minimal_v0",
                        *(os.path.join(ROOT, "tests", t) for t in REGISTRY_TESTS)],
                       cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout[-4000:]
    assert int(re.search(r"(\d+) passed", r.stdout).group(1)) >= 100
    reasons = re.findall(r"^SKIPPED \[\d+\] \S+ minimal_v0 (.*?)(?: \(.*)?$", r.stdout, re.M)
    assert len(reasons) == len(re.findall(r"^SKIPPED", r.stdout, re.M)), r.stdout[-3000:]
    assert set(reasons) <= SKIPS, reasons


def test_generic_tests_pass_with_a_discrete_start_and_per_element_bounds():
    """The generic tests on scenarios whose action spaces start at 1 and
    bound each element on its own (tests/_shared/action_space_variants.py)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, SHARED]))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                        "action_space_variants", "-k", "gossip_start_v0 or aircraft_bounds_v0",
                        os.path.join(ROOT, "tests", "envs", "test_generic.py")],
                       cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout[-4000:]
    assert int(re.search(r"(\d+) passed", r.stdout).group(1)) >= 100


def test_the_registry_makes_the_env_of_a_spec_that_names_none(minimal):
    """A scenario writes no env class: the registry's is the template with
    its id, named after its copies class, and pickles by id."""
    import pickle

    import seer_envs
    from seer_envs.views.parallel import SeerParallelEnv
    cls = minimal.SPEC.env
    assert seer_envs.get("minimal_v0") is minimal.SPEC and minimal.SPEC.kind == "env"
    assert cls.__name__ == "MinimalEnv" and cls.__bases__ == (SeerParallelEnv,)
    assert cls.metadata["name"] == "minimal_v0" and cls.obs_layout is None
    env = seer_envs.make("minimal_v0", num_threads=1, **minimal.SPEC.test_params)
    obs = env.reset_arrays(seed=4)
    twin = pickle.loads(pickle.dumps(env))
    assert type(twin) is cls
    np.testing.assert_array_equal(twin.step_arrays(np.ones(len(obs), np.int64))[0],
                                  env.step_arrays(np.ones(len(obs), np.int64))[0])


def test_a_scenario_folder_needs_no_init_file(tmp_path):
    """The registry finds ``<package>/<name>/spec.py`` in a folder with no
    ``__init__.py`` (a scenario is its own files only); run in a child
    process so the extra scenario stays out of this one's registry."""
    (tmp_path / "nspkg").mkdir()
    (tmp_path / "nspkg" / "__init__.py").write_text("")
    (tmp_path / "nspkg" / "ring").mkdir()
    (tmp_path / "nspkg" / "ring" / "spec.py").write_text(
        "from seer_envs.gossip.config import GossipConfig\n"
        "from seer_envs.gossip.copies import GossipCopies\n"
        "from seer_envs.gossip.model import GossipModel\n"
        "from seer_runtime.spec import ScenarioSpec, register\n"
        "class RingCopies(GossipCopies):\n    pass\n"
        "SPEC = register(ScenarioSpec(id='ring_v0', description='a gossip ring', config=GossipConfig,\n"
        "                             model=GossipModel, copies=RingCopies))\n")
    code = ("import seer_envs\nfrom seer_runtime import spec\nspec.add_search_package('nspkg')\n"
            "env = seer_envs.make('ring_v0', num_agents=5, num_threads=1)\n"
            "print(type(env).__name__, env.reset_arrays(seed=1).shape)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), ROOT])))
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split() == ["RingEnv", "(5,", "5)"], r.stdout


def test_no_render_mode_is_accepted_where_none_is_declared(minimal):
    import seer_envs
    p = minimal.SPEC.test_params
    env = seer_envs.make("minimal_v0", **p)
    assert env.metadata["render_modes"] == [] and env.render() is None
    for mode in ("human", "rgb_array"):
        with pytest.raises(ValueError, match=re.escape(f"render_mode must be None or one of this env's "
                                                       f"render modes [] ")):
            seer_envs.make("minimal_v0", render_mode=mode, **p)
        with pytest.raises(ValueError, match="render_mode"):
            minimal.SPEC.env(render_mode=mode, **p)
        with pytest.raises(ValueError, match=r"render_mode must be None or one of .* \[\]"):
            seer_envs.vector_env("minimal_v0", 2, render_mode=mode, **p)
    with pytest.raises(ValueError, match="render_mode"):
        seer_envs.agent_vector_env("minimal_v0", 2, render_mode="rgb_array", **p)
    assert not hasattr(env, "state_space")
    env.reset(seed=0)
    with pytest.raises(NotImplementedError, match="no global state"):
        env.state()


def test_an_env_that_lists_a_mode_it_cannot_draw_is_refused_it(minimal):
    """``metadata`` lists what an env may offer; what it has is what the
    scenario declares (PCS and Gossip declare both)."""
    import seer_envs
    from seer_envs.scenario.render import render_modes

    class Listed(minimal.SPEC.env):
        metadata = {"render_modes": ["human", "rgb_array"], "render_fps": 4}
    assert render_modes(Listed, minimal.MinimalCopies) == []
    with pytest.raises(ValueError, match="render_mode"):
        Listed(render_mode="human", **minimal.SPEC.test_params)
    assert seer_envs.make("gossip_v0", render_mode="human").metadata["render_modes"] == ["human", "rgb_array"]
    assert seer_envs.vector_env("gossip_v0", 2, num_threads=1).metadata["render_modes"] == ["rgb_array"]
