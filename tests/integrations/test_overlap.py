# SPDX-License-Identifier: BSD-3-Clause
"""``--overlap`` in the CleanRL-style IPPO trainers (``seer_bench.ppo.Rollouts``):
the first rollout is the one without overlap, bit for bit; every later
batch comes from the policy one update behind the learner (its stored
log-probabilities are that policy's, not the learner's) and is corrected
by the update (advantages on the learner's critic, decoupled PPO); the
Aircraft alive masks are the env's; a KeyboardInterrupt in an overlapped update
stops the rollout thread and leaves the env usable."""

import copy
import inspect
import os
import threading
import time

import numpy as np
import pytest

import seer_envs

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
# batteries for about 10 steps: UAVs stop mid-episode
AIR_KW = dict(num_uavs=5, num_targets=2, dynamics_substeps=2, battery_capacity=30.0, continuous_actions=True)


def _load(script):
    import importlib.util
    spec = importlib.util.spec_from_file_location(script[:-3] + "_overlap_test", os.path.join(EXAMPLES, script))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _args_of(update, args):
    """The trainer's ``_update(...)`` call's arguments by name."""
    return inspect.signature(update).bind(*args).arguments


def _record(ex, monkeypatch):
    """Patch the trainer's update to record, at its start, the update's
    number, its batch and the learner's weights (policy k at update k);
    returns the list of them."""
    seen = []
    update = getattr(ex._update, "original", ex._update)

    def recording(*args):
        named = _args_of(update, args)
        seen.append((named["update"], tuple(b.clone() if torch.is_tensor(b) else b for b in named["batch"]),
                     copy.deepcopy(named["agent"].state_dict())))
        return update(*args)
    recording.original = update
    monkeypatch.setattr(ex, "_update", recording)
    return seen


def _pcs_logp(ex, agent, batch):
    obs, act = batch[0], batch[1]
    T, N = act.shape
    with torch.no_grad():
        return torch.stack([agent.act(obs[t], ex._time_input(t, T, N), act[t])[1] for t in range(T)])


def _air_logp(ex, agent, batch, T):
    obs, act = batch[0], batch[1]
    N = act.shape[1]
    with torch.no_grad():
        return torch.stack([agent.act(obs[t], torch.full((N,), t / T), act[t])[1] for t in range(len(obs))])


def _pcs_args(ex, overlap, updates=3, extra=()):
    return ex.make_parser().parse_args(["--updates", str(updates), "--num-envs", "2", "--seed", "3"]
                                       + (["--overlap"] if overlap else []) + list(extra))


def _air_args(ex, overlap, updates=3, episode=20, extra=()):
    return ex.make_parser().parse_args(["--updates", str(updates), "--num-envs", "3", "--num-uavs", "5",
                                        "--episode", str(episode), "--seed", "3", "--minibatches", "1"]
                                       + (["--overlap"] if overlap else []) + list(extra))


def _air_venv(T, mcs=None, **kw):
    return seer_envs.vector_env("aircraft_v0", 3, num_threads=1, autoreset_mode="same_step",
                                max_cycles=mcs or [4, T, 7], **dict(AIR_KW, **kw))


@pytest.mark.heavy
@pytest.mark.parametrize("task", ["pcs", "aircraft"])
def test_overlap_first_rollout_is_the_same_then_one_update_lag(task, monkeypatch):
    """Overlap on/off: rollout 0 equal bit for bit; with overlap the batch of
    update k >= 1 holds the log-probabilities of policy k - 1 (the learner
    at the start of update k - 1), not of policy k; without it, of policy
    k."""
    ex = _load("cleanrl_ippo_pcs.py" if task == "pcs" else "cleanrl_ppo_aircraft.py")
    T = 20
    runs = {}
    for overlap in (False, True):
        seen = _record(ex, monkeypatch)
        if task == "pcs":
            agent = ex.train(_pcs_args(ex, overlap), on_update=lambda r: None)
        else:
            agent = ex.train(_air_args(ex, overlap, episode=T), on_update=lambda r: None, venv=_air_venv(T))
        runs[overlap] = seen
    assert [k for k, _, _ in runs[True]] == [0, 1, 2]
    first = [(x, y) for x, y in zip(runs[False][0][1], runs[True][0][1]) if torch.is_tensor(x)]
    assert len(first) >= 5
    for x, y in first:
        assert torch.equal(x, y)                      # the first rollout, every buffer
    assert not torch.equal(runs[False][1][1][1], runs[True][1][1][1])   # then they part

    def logp(state, batch):
        agent.load_state_dict(state)
        return _pcs_logp(ex, agent, batch) if task == "pcs" else _air_logp(ex, agent, batch, T)

    def close(a, b):
        return torch.allclose(a, b, rtol=0, atol=1e-5)
    for overlap, seen in runs.items():
        for k, batch, state in seen:
            stored = batch[2]
            behaviour = seen[max(k - 1, 0)][2] if overlap else state
            assert close(logp(behaviour, batch), stored), (overlap, k)
            if k >= 1:                                # and not the other run's: no lag or the lag
                other = state if overlap else seen[k - 1][2]
                assert not close(logp(other, batch), stored), (overlap, k)


@pytest.mark.heavy
def test_overlap_aircraft_masks_are_the_envs(monkeypatch):
    """In overlapped mode (rollouts from the thread, plain and ``--async``)
    every batch's alive mask, done flags, observations and rewards are
    what the env gives for the recorded actions: copies that end early,
    UAVs that stop, padding rows (per-copy UAV counts) never alive."""
    ex = _load("cleanrl_ppo_aircraft.py")
    T = 30
    kw = dict(num_uavs=[5, 3, 4], num_targets=[2, 1, 2])
    for extra in ((), ("--async",)):
        seen = _record(ex, monkeypatch)
        venv = _air_venv(T, **kw, **({"batch_size": 1} if extra else {}))
        a = _air_args(ex, True, updates=3, episode=T, extra=extra)
        ex.train(a, on_update=lambda r: None, venv=venv)
        assert len(seen) == 3
        n = venv.num_agents
        for k, (obs_b, act_b, _, rew_b, _, alive_b, done_b), _ in seen:
            ref = _air_venv(T, **kw)
            obs, infos = ref.reset(seed=a.seed * 100_000 + k * a.num_envs)
            obs = obs.reshape(3 * n, -1)
            alive = np.asarray(infos["mask"], bool).reshape(-1).copy()
            assert not alive.all()                   # padding rows exist
            for t in range(len(rew_b)):
                m = alive_b[t].numpy() > 0
                np.testing.assert_array_equal(m, alive, err_msg=f"{extra} rollout {k} alive at {t}")
                np.testing.assert_array_equal(obs_b[t].numpy()[m], obs[m])
                o, rew, term, trunc, _ = ref.step(act_b[t].clamp(-1, 1).numpy().reshape(3, n, 2))
                obs = o.reshape(3 * n, -1)
                np.testing.assert_array_equal(rew_b[t].numpy(), rew.reshape(-1) * alive)
                ended = (term | trunc).reshape(-1)
                np.testing.assert_array_equal(done_b[t].numpy() > 0, ended & alive)
                alive &= ~ended
            assert not alive.any()


class _CountingVenv:
    """A vector env whose resets, steps and receives are counted; ``armed``
    is set at the first step of rollout 2 (the thread's, during update 1),
    from where each step takes 5 ms more (so the rollout is surely still
    running when the interrupt comes)."""

    def __init__(self, venv):
        self.v, self.n, self.resets, self.since_reset = venv, 0, 0, 0
        self.armed = threading.Event()

    def __getattr__(self, name):
        return getattr(self.v, name)

    def _count(self):
        self.n += 1
        self.since_reset += 1
        if self.resets >= 3:
            self.armed.set()
            time.sleep(0.005)

    def reset(self, *args, **kw):
        self.resets, self.since_reset = self.resets + 1, 0
        return self.v.reset(*args, **kw)

    def async_reset(self, *args, **kw):
        self.resets, self.since_reset = self.resets + 1, 0
        return self.v.async_reset(*args, **kw)

    def step(self, actions):
        out = self.v.step(actions)
        self._count()
        return out

    def recv(self):
        out = self.v.recv()
        self._count()
        return out


@pytest.mark.heavy
@pytest.mark.parametrize("task,extra", [("pcs", ()), ("pcs", ("--async",)), ("aircraft", ()),
                                        ("aircraft", ("--async",))])
def test_overlap_ctrl_c_in_the_update_leaves_the_env_usable(task, extra, monkeypatch):
    """A KeyboardInterrupt raised in update 1 while the thread is in the
    middle of rollout 2: ``train`` raises it, the rollout thread has ended
    (nothing steps the env afterwards), nothing is left in flight, and the
    env resets and steps as a fresh one."""
    ex = _load("cleanrl_ippo_pcs.py" if task == "pcs" else "cleanrl_ppo_aircraft.py")
    update = ex._update

    if task == "pcs":
        T = ex.episode_length()
        a = _pcs_args(ex, True, updates=4, extra=extra)
        def make(**k):
            return seer_envs.vector_env(ex.ENV_ID, 2, num_threads=1, **ex.ENV_KW, **k)
    else:
        T = 40                               # UAVs' batteries last the episode: every rollout is T steps
        a = _air_args(ex, True, updates=4, episode=T, extra=extra)
        kw = dict(AIR_KW, battery_capacity=600.0)
        def make(**k):
            return seer_envs.vector_env("aircraft_v0", 3, num_threads=1, autoreset_mode="same_step",
                                        max_cycles=T, **kw, **k)
    venv = _CountingVenv(make(**({"batch_size": 1} if extra else {})))
    full = T * (a.num_envs if extra else 1)  # steps (receives) of a whole rollout after its reset

    def interrupted(*args):
        if _args_of(update, args)["update"] == 1:
            assert venv.armed.wait(30)       # the thread is inside rollout 2
            raise KeyboardInterrupt
        return update(*args)
    monkeypatch.setattr(ex, "_update", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ex.train(a, on_update=lambda r: None, venv=venv)
    assert not [t for t in threading.enumerate() if t.name.startswith("rollout")]
    n = venv.n
    assert venv.resets == 3 and 0 < venv.since_reset < full    # rollout 2 was cut short
    time.sleep(0.2)
    assert venv.n == n                        # nothing steps the env any more
    assert not getattr(venv.v, "in_flight", False)
    fresh = make()
    o1, _ = venv.v.reset(seed=11)
    o2, _ = fresh.reset(seed=11)
    np.testing.assert_array_equal(o1, o2)
    acts = np.stack([venv.v.single_action_space.sample() for _ in range(venv.v.num_envs * venv.v.num_agents)])
    acts = acts.reshape((venv.v.num_envs, venv.v.num_agents) + acts.shape[1:])
    if extra:
        venv.v.async_reset(seed=11)
        while venv.v.in_flight:
            venv.v.recv()
        venv.v.reset(seed=11)
    r1 = venv.v.step(acts)
    r2 = fresh.step(acts)
    for x, y in zip(r1[:4], r2[:4]):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("overlap", [False, True])
def test_overlap_reserves_the_learners_cores_for_its_block(overlap, monkeypatch):
    """With overlap the update computes beside the env: Rollouts keeps the
    learner's cores (seer_runtime.reserve_cores) while it runs, and gives
    them back when it ends, by an exception too; without overlap the env
    and the update alternate and nothing is reserved."""
    import seer_runtime
    from seer_runtime import _threads
    _load("cleanrl_ippo_pcs.py")
    from seer_bench.ppo import Rollouts
    monkeypatch.setattr(_threads, "_reserved", [None])
    monkeypatch.delenv("SEER_RESERVED_CORES", raising=False)
    seen = []

    def collect(behaviour, k, stop):
        seen.append(seer_runtime.reserved_cores())
        return k
    with pytest.raises(KeyboardInterrupt):
        with Rollouts(collect, torch.nn.Linear(1, 1), 3, overlap, reserve=2) as rollouts:
            for k, batch in rollouts:
                if k == 1:
                    raise KeyboardInterrupt
    assert seen and set(seen) == {2 if overlap else 0}
    assert seer_runtime.reserved_cores() == 0


def test_wait_for_rollouts_joins_the_rollout_in_flight():
    """An ``on_update`` that calls ``wait_for_rollouts`` finds rollout k + 1
    finished before its own work starts (training_speed.py --to-target
    takes that work's time out of the wall clock); the run's batches are
    unchanged."""
    _load("cleanrl_ippo_pcs.py")
    from seer_bench.ppo import Rollouts, wait_for_rollouts
    done = []

    def collect(behaviour, k, stop):
        time.sleep(0.2 if k else 0.0)          # a rollout slower than the update
        done.append(k)
        return k
    got = []
    with Rollouts(collect, torch.nn.Linear(1, 1), 3, True) as rollouts:
        for k, batch in rollouts:
            got.append(batch)
            if k < 2:
                assert k + 1 not in done      # rollout k + 1 is in flight beside update k
                wait_for_rollouts()
                assert k + 1 in done
    assert got == [0, 1, 2]


def test_wait_for_rollouts_leaves_another_learners_rollout_running():
    """Two learners in one process, each on its thread: one's
    ``wait_for_rollouts`` joins its own rollout in flight, not the other's."""
    import threading
    _load("cleanrl_ippo_pcs.py")
    from seer_bench.ppo import Rollouts, wait_for_rollouts
    release, started, done = threading.Event(), threading.Event(), []

    def slow(behaviour, k, stop):              # learner B's: held until A has waited
        if k:
            started.set()
            assert release.wait(10)
        return k

    def quick(behaviour, k, stop):
        done.append(k)
        return k

    def learner_b():
        with Rollouts(slow, torch.nn.Linear(1, 1), 2, True) as rollouts:
            for _ in rollouts:
                pass
    b = threading.Thread(target=learner_b)
    b.start()
    assert started.wait(10)                    # B's rollout 1 is in flight
    try:
        with Rollouts(quick, torch.nn.Linear(1, 1), 2, True) as rollouts:
            for k, _ in rollouts:
                if k == 0:
                    t0 = time.perf_counter()
                    wait_for_rollouts()        # joins A's rollout 1 only: returns while B's waits
                    assert 1 in done and time.perf_counter() - t0 < 5
    finally:
        release.set()
        b.join(10)
    assert not b.is_alive()


@pytest.mark.parametrize("update", [0, 1])
def test_overlap_clips_against_the_proximal_policy_and_weights_by_the_behaviours(update, monkeypatch):
    """Decoupled PPO under overlap: from update 1 the ratio of the first
    minibatch is 1 (clipped against the learner as the update begins, not
    the stale behaviour policy), each sample's policy term is weighted by
    proximal / behaviour probability capped at ``WEIGHT_CAP``; update 0's
    batch is the learner's own, so nothing changes there (no weight)."""
    from seer_bench import ppo
    ex = _load("cleanrl_ippo_pcs.py")
    torch.manual_seed(0)
    agent = ex.Agent(11, 6)
    stale = copy.deepcopy(agent)
    with torch.no_grad():
        for p in stale.actor.parameters():
            p.add_(0.3 * torch.randn_like(p))
    n = 256
    obs, t = torch.rand(n, 11), torch.rand(n)
    with torch.no_grad():
        act, behaviour_logp, _, _ = stale.act(obs, t)
    seen = []
    real = ppo.ppo_loss

    def spy(*args, **kw):
        out = real(*args, **kw)
        weight = kw.get("weight", args[8] if len(args) > 8 else None)
        seen.append((out[1], None if weight is None else weight.detach().clone(), args[1].detach().clone()))
        return out
    monkeypatch.setattr(ppo, "ppo_loss", spy)

    class InOrder:                    # one minibatch in the batch's order
        @staticmethod
        def shuffle(idx):
            pass
    monkeypatch.setattr(ppo, "minibatch_rng", lambda seed, update: InOrder)
    for overlap in (False, True):
        a = ex.make_parser().parse_args(["--epochs", "1", "--minibatches", "1"] + (["--overlap"] if overlap else []))
        seen.clear()
        learner = copy.deepcopy(agent)
        ppo.ppo_epochs(learner, torch.optim.Adam(learner.parameters(), lr=1e-3), a, update, obs, t, act,
                       behaviour_logp, torch.randn(n), torch.randn(n))
        stats, weight, old = seen[0]
        if overlap and update > 0:
            with torch.no_grad():
                prox = agent.act(obs, t, act)[1]
            assert torch.allclose(old, prox)                         # clipped against the proximal policy
            assert stats["clipfrac"] == 0.0 and abs(stats["approx_kl"]) < 1e-6
            expected = (prox - behaviour_logp).exp().clamp(max=ppo.WEIGHT_CAP)
            assert torch.allclose(weight, expected)
            assert (weight < 1).any() and (weight > 1).any()        # the stale policy differs both ways
        else:
            assert weight is None and torch.equal(old, behaviour_logp)
            assert stats["clipfrac"] > 0                             # the stale ratio is far from 1


class _Captured(Exception):
    pass


@pytest.mark.parametrize("task", ["pcs", "aircraft"])
@pytest.mark.parametrize("update", [0, 1])
def test_overlap_advantages_come_from_the_learners_critic(task, update, monkeypatch):
    """From update 1 under overlap the batch's stored values are the
    behaviour critic's, one update old: GAE runs on the learner's values
    instead, so the advantages and returns reaching PPO's epochs are those
    of a synchronous update on the same rewards with the learner's values
    (``seer_bench.ppo.learner_values``).  Update 0's batch is the learner's
    own: its stored values are used, as without overlap."""
    ex = _load("cleanrl_ippo_pcs.py" if task == "pcs" else "cleanrl_ppo_aircraft.py")
    torch.manual_seed(0)
    T, N, d = 6, 10, 11 if task == "pcs" else 9
    agent = ex.Agent(d, 6) if task == "pcs" else ex.Agent(d, 2)
    opt = torch.optim.Adam(agent.parameters(), lr=1e-3)
    obs, rew, logp, stale = torch.rand(T, N, d), torch.randn(T, N), torch.randn(T, N), 5 * torch.randn(T, N)
    if task == "pcs":
        t_in = torch.arange(T).repeat_interleave(N).float().reshape(T, N) / T
        act = torch.randint(0, 6, (T, N))
        learner = agent.value(obs.reshape(-1, d), t_in.reshape(-1)).reshape(T, N).detach()

        def call(overlap, val):
            a = _pcs_args(ex, overlap, extra=["--no-reward-scaling"])
            ex._update(a, agent, opt, None, t_in, (obs, act, logp, rew, val, 0.0), update, T, N)
    else:
        act = torch.rand(T, N, 2) * 2 - 1
        alive, done = torch.ones(T, N), torch.zeros(T, N)
        done[-1] = 1.0
        tf = (torch.arange(T).float() / T).repeat_interleave(N)
        learner = agent.value(obs.reshape(-1, d), tf).reshape(T, N).detach()

        def call(overlap, val):
            a = _air_args(ex, overlap, episode=T, extra=["--no-reward-scaling"])
            ex._update(a, agent, opt, None, (obs, act, logp, rew, val, alive, done), update, d)
    seen = []

    def spy(*args):
        seen.append((args[8].clone(), args[9].clone()))      # b_adv, b_ret
        raise _Captured
    monkeypatch.setattr(ex, "ppo_epochs", spy)
    for overlap, val in ((True, stale), (False, learner if update else stale), (False, stale)):
        with pytest.raises(_Captured):
            call(overlap, val)
    (adv, ret), (want_adv, want_ret), (stale_adv, _) = seen
    assert torch.equal(adv, want_adv) and torch.equal(ret, want_ret)
    assert torch.equal(adv, stale_adv) == (update == 0)
