# SPDX-License-Identifier: BSD-3-Clause
"""Gossip-specific tests (the generic API and equivalence tests reach it
through the registry): the pure-Python reference, config bounds, the model's
invariants, and a copy built out of tree with seer_runtime.get_include()."""

import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import seer_envs
from seer_envs.gossip.config import GossipConfig
from seer_envs.gossip.reference import GossipReference

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PARAMS = [dict(num_agents=7, reach=2, num_rumours=12, news_interval=8.0, max_cycles=12),
          dict(num_agents=10, reach=1, num_rumours=64, news_interval=3.0, latency=0.5, jitter=0.0,
               dt=2.0, max_cycles=15),
          dict(num_agents=5, reach=2, num_rumours=3, news_interval=50.0, latency=4.0, jitter=9.0,
               message_cost=0.0, max_cycles=20)]


def _rollout(make, seed, steps, n_actions, action_seed):
    """obs/rewards/terminations per step of a reset/step pair on random actions."""
    rng = np.random.default_rng(action_seed)
    out = [make.reset(seed)] if hasattr(make, "cfg") else [make.reset_arrays(seed=seed)]
    step = make.step if hasattr(make, "cfg") else make.step_arrays
    for _ in range(steps):
        o, r, term, trunc = step(rng.integers(0, n_actions, len(out[0])))
        out.append((o, r, term, trunc))
        if trunc.any() or term.all():
            break
    return out


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        for p, q in zip(x if isinstance(x, tuple) else (x,), y if isinstance(y, tuple) else (y,)):
            assert p.dtype == q.dtype and np.array_equal(p, q)


@pytest.mark.parametrize("params", PARAMS)
@pytest.mark.parametrize("seed", [0, 5])
def test_env_equals_the_pure_python_reference(params, seed, thread_counts):
    cfg = GossipConfig(**params)
    for t in thread_counts:
        env = seer_envs.make("gossip_v0", num_threads=t, **params)
        env.reset_arrays(seed=seed)
        ep_seed = env.seed_used
        got = _rollout(env, seed, cfg.max_cycles, cfg.num_actions, seed + 1)
        ref = GossipReference(cfg)
        want = _rollout(ref, ep_seed, cfg.max_cycles, cfg.num_actions, seed + 1)
        _same(got, want)
        assert env.engine.stats()["events"] == ref.events, f"threads={t}"
        assert np.array_equal(env.model.counters, ref.counters)
        assert [int(k) for k in env.model.known] == ref.known
    assert env.model.counters[:, 1].sum() > 0, "messages were delivered"


def test_rumours_only_spread_and_episode_ends_when_all_know():
    env = seer_envs.make("gossip_v0", num_threads=2, num_agents=9, num_rumours=6, news_interval=4.0, max_cycles=500)
    env.reset(seed=3)
    known = env.model.n_known.copy()
    steps = 0
    while env.agents:
        _, _, term, _, infos = env.step({a: 1 for a in env.agents})
        assert (env.model.n_known >= known).all() and (env.model.n_known <= 6).all()
        known = env.model.n_known.copy()
        for a, done in term.items():
            if done:
                assert infos[a]["known"] == 6 and "seer_episode" in infos[a]
        steps += 1
    assert steps < 500, "every agent learned every rumour before truncation"
    # popcount of the masks matches the counts; what was learned is what is known
    assert [bin(int(k)).count("1") for k in env.model.known] == env.model.n_known.tolist()
    assert (env.model.counters[:, 0] == env.model.n_known).all()


def test_quiet_agents_send_nothing_and_finished_agents_are_quiet():
    env = seer_envs.make("gossip_v0", num_threads=2, num_agents=12, num_rumours=3, news_interval=6.0, max_cycles=200)
    env.reset_arrays(seed=0)
    term = np.zeros(12, bool)
    while not term.any():                      # quiet until the first agents know everything
        _, _, term, _ = env.step_arrays(np.zeros(12, np.int64))
    assert env.model.counters[:, 2].sum() == 0 and env.model.counters[:, 1].sum() == 0
    assert not term.all(), "some agents are still live"
    _, _, term2, _ = env.step_arrays(np.full(12, 2, np.int64))   # rows of finished agents ignored
    sent = env.model.counters[:, 2]
    assert (sent[term] == 0).all() and (sent[~term] == 1).all()
    assert not term2[term].any()               # an end is reported once, at its step


@pytest.mark.parametrize("bad, match", [
    (dict(num_agents=4, reach=2), r"reach must be <= \(num_agents - 1\) // 2 = 1, got 2"),
    (dict(num_rumours=65), r"num_rumours must be <= 64"),
    (dict(latency=0.0), r"latency must be > 0"),
    (dict(jitter=-1.0), r"jitter must be >= 0"),
    (dict(num_agents=1 << 20, reach=(1 << 19) - 1, latency=1e6), r"max_pending_per_lp"),
])
def test_config_bounds_are_named(bad, match):
    with pytest.raises(ValueError, match=match):
        GossipConfig(**bad)


def test_registered_and_listed():
    spec = seer_envs.get("gossip_v0")
    assert isinstance(seer_envs.make("gossip_v0", **spec.test_params), spec.env)
    r = subprocess.run([sys.executable, "-m", "seer.cli", "list"], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    assert r.returncode == 0 and "gossip_v0" in r.stdout, r.stderr


def test_seer_run_ready_file(capsys):
    from seer.cli import main
    assert main(["run", os.path.join(ROOT, "scenarios", "gossip_small.toml")]) == 0
    out = capsys.readouterr().out
    assert "gossip_v0" in out and "steps/s" in out and "policy heuristic" in out


# --- out of tree: the same scenario built from its own folder ------------------

DOC = os.path.join(ROOT, "docs", "new_scenario.md")


def _doc_blocks():
    """(language, first line, body) of every fenced block of the guide."""
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", open(DOC).read(), re.M | re.S)
    return [(lang, body.split("\n", 1)[0], body) for lang, body in blocks]


def _doc_file(name):
    """The guide's out-of-tree ``setup.py`` or ``pyproject.toml``: the
    install below uses exactly it."""
    [body] = [b for _, first, b in _doc_blocks() if first.startswith(f"# file: {name}")]
    return body


def test_guide_excerpts_are_in_the_files():
    excerpts = [(first, body) for _, first, body in _doc_blocks() if first.startswith("# excerpt: ")]
    assert len(excerpts) >= 10
    for first, body in excerpts:
        path = os.path.join(ROOT, first[len("# excerpt: "):].strip())
        text = body.split("\n", 1)[1].rstrip("\n")
        assert text in open(path).read(), f"{first}: not literally in the file:\n{text}"


def test_guide_python_blocks_run(capsys):
    """Each ``python`` block runs on its own (as tests/docs runs every page's
    snippets); excerpts and the setup.py file are fenced ``py``."""
    blocks = [body for lang, _, body in _doc_blocks() if lang == "python"]
    assert len(blocks) >= 6
    for body in blocks:
        assert not body.startswith(("# excerpt: ", "# file: ")), "fence excerpts as py"
        exec(compile(body, DOC, "exec"), {"__name__": "__doc_snippet__"})
        assert capsys.readouterr().out.strip(), f"the snippet prints nothing:\n{body}"


def _out_of_tree_copy(dest):
    """The gossip folder's scenario files (no ``__init__.py``) as package
    ``mygossip``, scenario id ``mygossip_v0``,
    beside the guide's ``setup.py`` and ``pyproject.toml`` (its build
    requirements and its ``seer.scenarios`` entry point)."""
    src = os.path.join(ROOT, "seer_envs", "gossip")
    pkg = dest / "mygossip"
    pkg.mkdir()
    for name in os.listdir(src):
        # a scenario's own files: gossip's __init__.py only keeps old imports for a release
        if name.endswith((".py", ".pyx")) and name != "__init__.py":
            text = open(os.path.join(src, name)).read()
            text = text.replace("seer_envs.gossip", "mygossip").replace("gossip_v0", "mygossip_v0")
            (pkg / name).write_text(text)
    (dest / "setup.py").write_text(_doc_file("setup.py"))
    (dest / "pyproject.toml").write_text(_doc_file("pyproject.toml"))


CHECK = textwrap.dedent("""
    import numpy as np, seer_envs
    spec = seer_envs.get("mygossip_v0")            # found through the entry point
    assert spec.env.__module__ == "mygossip.copies", spec.env.__module__     # made by the registry
    outs = []
    for t in (1, 2, 3, 4):
        env = seer_envs.make("mygossip_v0", num_threads=t, **spec.test_params)
        env.reset_arrays(seed=11)
        rng = np.random.default_rng(0)
        for _ in range(5):
            o, r, _, _ = env.step_arrays(rng.integers(0, env.config.num_actions, len(env.possible_agents)))
        outs.append((o.tobytes(), r.tobytes(), env.engine.state_digest()))
    assert all(x == outs[0] for x in outs), "thread counts differ"
    print("OK", sorted(seer_envs.registry()))
""")


def test_guide_pins_the_seer_it_builds_against():
    """The guide's pyproject.toml requires this checkout's SEER version,
    for the build and at run time (an unpinned ``seer`` resolves to an
    unrelated project on PyPI)."""
    import tomllib
    version = tomllib.load(open(os.path.join(ROOT, "pyproject.toml"), "rb"))["project"]["version"]
    doc = tomllib.loads(_doc_file("pyproject.toml"))
    pin = f"seer=={version}"
    assert pin in doc["build-system"]["requires"] and pin in doc["project"]["dependencies"]
    assert {"setuptools>=64", "Cython>=3.0"} <= set(doc["build-system"]["requires"])
    assert doc["project"]["entry-points"]["seer.scenarios"] == {"mygossip_v0": "mygossip.spec"}


def _pip(python, *args, cwd, timeout=900):
    r = subprocess.run([python, "-m", "pip", "--disable-pip-version-check", *args], cwd=cwd,
                       capture_output=True, text=True, timeout=timeout,
                       env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert r.returncode == 0, f"pip {' '.join(args)}:\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"


def _seer_wheelhouse(default):
    """A folder holding a SEER wheel of this checkout: built with ``pip
    wheel`` into ``default`` (about 5 minutes on 2 cores: every extension
    is compiled), or, where ``SEER_TEST_WHEELHOUSE`` names a folder, into
    (and reused from) its subfolder named by a hash of the sources a wheel
    holds, so a second run of an unchanged checkout skips SEER's build."""
    import hashlib
    cache = os.environ.get("SEER_TEST_WHEELHOUSE")
    if cache:
        h = hashlib.sha256()
        for top in ("setup.py", "pyproject.toml", "MANIFEST.in", "seer_runtime", "seer_envs", "stpa",
                    "seer", "seer_bench"):
            path = os.path.join(ROOT, top)
            files = [path] if os.path.isfile(path) else sorted(
                os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs
                if f.endswith((".py", ".pyx", ".pxd", ".pxi", ".h", ".txt", ".csv")))
            for f in files:
                h.update(os.path.relpath(f, ROOT).encode() + b"\0" + open(f, "rb").read())
        default = pathlib.Path(cache) / h.hexdigest()[:16]
        if list(default.glob("seer-*.whl")):
            return default
    _pip(sys.executable, "wheel", "--no-deps", ROOT, "-w", str(default), cwd=ROOT)
    return default


@pytest.fixture(scope="module")
def out_of_tree(tmp_path_factory):
    """The gossip copy installed as the guide says, in a fresh venv (no
    system site-packages, so nothing the build needs is there unless
    declared): SEER from a wheel of this checkout (``pip wheel``, itself
    an isolated build from SEER's declared requirements), then ``pip
    install . --find-links wheels`` in the package's folder.  Returns
    (the venv's python, a folder to run it in, its environment)."""
    if shutil.which(os.environ.get("CC", "cc")) is None and shutil.which("gcc") is None:
        pytest.fail("no C compiler: the out-of-tree build cannot be shown")
    tmp = tmp_path_factory.mktemp("out_of_tree")
    wheels, dest, run = tmp / "wheels", tmp / "pkg", tmp / "run"
    dest.mkdir()
    run.mkdir()
    _out_of_tree_copy(dest)
    wheels = _seer_wheelhouse(wheels)
    subprocess.run([sys.executable, "-m", "venv", str(tmp / "venv")], check=True, timeout=300)
    python = str(tmp / "venv" / "bin" / "python")
    [seer_wheel] = wheels.glob("seer-*.whl")
    _pip(python, "install", str(seer_wheel), cwd=tmp)
    _pip(python, "install", ".", "--find-links", str(wheels), cwd=dest)      # the guide's command
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return python, run, env


@pytest.mark.heavy
def test_out_of_tree_scenario_installs_with_pip_in_a_fresh_venv(out_of_tree):
    """A scenario outside the repo, installed with pip (build requirements
    declared), registered through the seer.scenarios entry-point group,
    identical at 1-4 threads; SEER and the scenario come from the venv."""
    python, run, env = out_of_tree
    r = subprocess.run([python, "-c", CHECK + WHERE], cwd=run, capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "'mygossip_v0'" in r.stdout and "'gossip_v0'" in r.stdout
    venv = os.path.dirname(os.path.dirname(python))
    for line in r.stdout.splitlines()[1:]:
        assert line.startswith(venv), f"imported from outside the venv: {line}"


#: Where the check's modules came from: the venv, not the checkout.
WHERE = textwrap.dedent("""
    import mygossip.model, seer_envs, seer_runtime
    for m in (mygossip.model, seer_envs, seer_runtime):
        print(m.__file__)
""")


@pytest.mark.slow
def test_out_of_tree_scenario_passes_the_generic_tests(out_of_tree):
    """The generic tests reach the out-of-tree scenario through the registry
    (run with the venv's python, where it is installed)."""
    python, run, env = out_of_tree
    _pip(python, "install", "pytest", cwd=run)
    g = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", ROOT,
                        "-c", os.path.join(ROOT, "pyproject.toml"),
                        os.path.join(ROOT, "tests", "envs", "test_generic.py"), "-k", "mygossip_v0"],
                       cwd=run, capture_output=True, text=True, env=env, timeout=900)
    assert g.returncode == 0, g.stdout[-3000:]
    assert int(re.search(r"(\d+) passed", g.stdout).group(1)) >= 15


def test_rgb_frame_has_the_ring_a_scale_and_the_time():
    """The frame is a picture a person can read (not a 16-pixel strip): the
    same size at every step, and it changes as rumours spread."""
    env = seer_envs.make("gossip_v0", num_threads=1, render_mode="rgb_array", num_agents=12, news_interval=2.0)
    env.reset(seed=0)
    first = env.render()
    for _ in range(6):
        env.step_arrays(np.ones(12, np.int64))
    later = env.render()
    assert first.shape == later.shape and first.shape[0] >= 300 and first.shape[1] >= 300
    assert first.dtype == np.uint8 and len(np.unique(first.reshape(-1, 3), axis=0)) > 50
    assert not np.array_equal(first, later)
