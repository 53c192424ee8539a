# SPDX-License-Identifier: BSD-3-Clause
"""SEER's worker team: serial equivalence with a worker made to sleep inside
a window and across team-size switches, fork safety, and one engine per
Python thread at a time (issue 11 item 1 tests, issue 16 items 6 and 7)."""

import multiprocessing as mp
import os
import threading
import time

import numpy as np
import pytest

import seer_runtime
from seer_runtime.loop import DEFAULT_PHASE_POLICY, _phase_width_for
from seer_runtime.models import phold

PARAMS = dict(num_lps=512, remote_fraction=0.5, lookahead=0.5, mean_delay=1.0, start_events=2)
parallel_only = pytest.mark.skipif(not seer_runtime.openmp_enabled(), reason="serial build")


def _digest(threads, end=20.0, seed=7, sleep=None, **params):
    p = dict(PARAMS, **params)
    _, eng = phold.make(num_threads=threads, seed=seed, **p)
    if sleep is not None:
        eng._set_test_sleep(*sleep)
    eng.run_until(end)
    return eng.state_digest(), eng.stats()["events"]


def test_worker_sleeping_inside_a_window_gives_the_serial_digest():
    ref = _digest(1)
    # Each member in turn sleeps 1 ms in every round, after its exec and
    # before the barrier: the others wait for it (block), then go on.
    for threads, tid in [(2, 1), (2, 0), (3, 2)]:
        assert _digest(threads, sleep=(tid, 0.001), end=6.0) == _digest(1, end=6.0)
    assert _digest(2, sleep=(1, 0.0002)) == ref


@parallel_only
def test_a_member_that_is_late_to_every_phase_holds_nothing_up():
    # Workers sleep 20 ms before each attempt to join (as if descheduled on a
    # busy machine).  A team that waited for every member would spend 20 ms
    # in each of ~2 phases x 120 rounds; the elastic one lets the caller do
    # the work, so the late member takes part in few phases, and the result
    # is the serial one.
    from seer_runtime import loop
    ref = _digest(1, end=60.0)
    _, eng = phold.make(num_threads=2, seed=7, **PARAMS)
    loop._set_test_join_delay(0.02)
    try:
        eng.run_until(60.0)
    finally:
        loop._set_test_join_delay(0)
    st = eng.stats()
    assert (eng.state_digest(), st["events"]) == ref
    caller, member = (t["phases"] for t in st["threads"])
    assert st["rounds"] > 100 and caller >= 2 * st["rounds"]
    assert member < caller / 4, (member, caller)


@parallel_only
def test_a_member_that_straggles_inside_phases_narrows_the_team():
    # Member 1 sleeps 2 ms holding its units in every exec phase it joins, as
    # a member preempted by another process does.  Under the phase policy
    # (not forced open) each such wait narrows the phases to half the team
    # for a while, so the member joins far fewer phases than when every
    # phase is forced open.  Results are the serial ones either way.
    params = dict(PARAMS, num_lps=4096)    # exec phases long enough for the member to join
    ref = _digest(1, end=60.0, **params)
    runs = {}
    for open_all in (False, True):
        _, eng = phold.make(num_threads=2, seed=7, **params)
        eng._set_test_sleep(1, 0.002, open_all)
        eng.run_until(60.0)
        st = eng.stats()
        assert (eng.state_digest(), st["events"]) == ref, open_all
        runs[open_all] = st
    narrowed, forced = runs[False], runs[True]
    assert forced["straggles"] == 0 and narrowed["straggles"] >= 1
    assert narrowed["threads"][1]["phases"] < forced["threads"][1]["phases"] / 2, \
        (narrowed["threads"][1]["phases"], forced["threads"][1]["phases"])
    # a larger team narrows by halves (4 -> 2 -> 1): the same results
    _, eng = phold.make(num_threads=4, seed=7, **params)
    eng._set_test_sleep(1, 0.002, False)
    eng.run_until(60.0)
    assert (eng.state_digest(), eng.stats()["events"]) == ref


@pytest.mark.parametrize("seed", [3, 11])
def test_team_size_switch_mid_run_in_both_directions(seed):
    ref_model, ref = phold.make(num_threads=1, seed=seed, **PARAMS)
    _, eng = phold.make(num_threads=1, seed=seed, **PARAMS)
    t = 0.0
    for threads in [1, 2, 4, 1, 3, 2, 1]:
        eng.num_threads = threads
        t += 3.0
        eng.run_until(t)
        ref.run_until(t)
        assert eng.state_digest() == ref.state_digest(), f"after a run at {threads} threads"
        # the tuner's cheap per-unit read agrees with stats() across team switches
        st = eng.stats()
        assert eng.counters() == (st["wall_s"], st["events"]) == (st["wall_s"], ref.stats()["events"])
    assert eng.stats()["events"] == ref.stats()["events"]
    assert eng.stats()["rounds"] == ref.stats()["rounds"]
    assert eng.stats()["ready_per_round"] == ref.stats()["ready_per_round"]


def test_inject_at_every_team_size_matches_serial():
    digests = []
    for threads in [1, 2, 3, 4]:
        _, eng = phold.make(num_threads=threads, seed=5, **PARAMS)
        for k in range(5):
            eng.inject(float(k), 0, 10 * k, 500 - k)
            eng.run_until(k + 1.0)
        digests.append(eng.state_digest())
    assert len(set(digests)) == 1


# --- fork (issue 16.6) -----------------------------------------------------------

def _child_phold(q):
    try:
        q.put(("ok", _digest(2)))
    except BaseException as e:  # report, never hang the parent
        q.put(("error", repr(e)))


def _child_pcs(q):
    try:
        import seer_envs
        env = seer_envs.make("pcs_v0", num_threads=2, grid_width=6, grid_height=5, max_cycles=40)
        env.reset_arrays(seed=4)
        acts = np.zeros(30, dtype=np.int64)
        out = None
        for _ in range(20):
            out = env.step_arrays(acts)
        q.put(("ok", (out[0].tobytes(), out[1].tobytes())))
    except BaseException as e:
        q.put(("error", repr(e)))


def _run_forked(target, timeout=60):
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=target, args=(q,))
    p.start()
    p.join(timeout)
    if p.is_alive():
        p.kill()
        p.join()
        pytest.fail("the forked child hung")
    assert p.exitcode == 0
    status, value = q.get(timeout=5)
    assert status == "ok", value
    return value


@parallel_only
def test_forked_child_steps_an_engine_with_two_threads():
    ref = _digest(1)
    # The parent's team exists (and its workers are parked) when it forks.
    assert _digest(2) == ref
    assert _run_forked(_child_phold) == ref
    # The parent's own team still works after the fork.
    assert _digest(2) == ref


@parallel_only
def test_forked_child_steps_an_env_with_two_threads():
    import seer_envs

    def run(threads):
        env = seer_envs.make("pcs_v0", num_threads=threads, grid_width=6, grid_height=5, max_cycles=40)
        env.reset_arrays(seed=4)
        acts = np.zeros(30, dtype=np.int64)
        for _ in range(20):
            out = env.step_arrays(acts)
        return out[0].tobytes(), out[1].tobytes()

    ref = run(1)
    assert run(2) == ref      # the boundary loops ran on the team in the parent
    assert _run_forked(_child_pcs) == ref


# --- one caller at a time (issue 16.7) -----------------------------------------

def test_second_thread_using_a_running_engine_gets_runtime_error():
    _, eng = phold.make(num_threads=2, seed=9, **PARAMS)
    # Slow the run down (the caller sleeps 1 ms per round: a member may or may
    # not join a given phase) so the first call is surely in progress.
    eng._set_test_sleep(0, 0.001)
    done = threading.Event()
    errors = []

    def long_run():
        try:
            eng.run_until(200.0)
        except BaseException as e:
            errors.append(e)
        done.set()

    th = threading.Thread(target=long_run)
    th.start()
    try:
        time.sleep(0.2)
        assert not done.is_set(), "the run ended too soon for the test"
        for call in (lambda: eng.run_until(300.0), lambda: eng.inject(250.0, 0),
                     lambda: eng.init(), lambda: setattr(eng, "num_threads", 3),
                     lambda: eng.state_digest(), lambda: eng.pending()):
            with pytest.raises(RuntimeError, match="in use by another thread"):
                call()
    finally:
        th.join(120)
    assert not th.is_alive() and not errors
    # the engine is intact: the run finished as a serial one does
    eng._set_test_sleep(0, 0)
    _, ref = phold.make(num_threads=1, seed=9, **PARAMS)
    ref.run_until(200.0)
    assert eng.state_digest() == ref.state_digest()
    eng.run_until(210.0)      # and usable again from this thread


def test_separate_engines_in_concurrent_threads():
    ref = _digest(1, end=30.0)
    results = [None] * 4

    def work(i):
        results[i] = _digest(2, end=30.0)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert results == [ref] * 4


# --- granularity policy (issue 11: elastic phases) -------------------------------

@pytest.fixture
def default_policy():
    """The shipped thresholds (the suite runs with every phase open)."""
    old = seer_runtime.phase_policy(*DEFAULT_PHASE_POLICY)
    yield
    seer_runtime.phase_policy(*old)


@parallel_only
def test_default_policy_gives_the_serial_digest(default_policy):
    # Big rounds open their phases, tiny ones run on the caller and narrow
    # to one partition; both give the serial digest at every count.  (Tiny:
    # 16 events in flight, a round well under the 2-us grain; 64 LPs opened
    # a phase now and then on a 2-core machine.)
    # Whether phases open follows measured costs, so a member preempted on a
    # loaded machine can tip one run either way: the policy must show in at
    # least one of three runs; the digest must be the serial one in every run.
    for params, end, opens in [(dict(num_lps=16384, start_events=4), 4.0, True),
                               (dict(num_lps=16, start_events=1), 40.0, False)]:
        ref = _digest(1, end=end, **params)
        for threads in (2, 3, 4):
            seen = []
            for _ in range(3):
                _, eng = phold.make(num_threads=threads, seed=7, **dict(PARAMS, **params))
                for k in range(1, 9):
                    eng.run_until(end * k / 8)      # several slices: narrow and wide
                    if k == 2:
                        # init opens its phases once; the rest is learned by now
                        opened = eng.stats()["phases_opened"]
                assert (eng.state_digest(), eng.stats()["events"]) == ref
                seen.append(eng.stats()["phases_opened"] > opened)
                if seen[-1] == opens:
                    break
            assert seen[-1] == opens, (params, threads, seen)


def test_phase_policy_round_trips_and_rejects_bad_values(default_policy):
    assert seer_runtime.phase_policy() == (2000.0, 100000.0) == DEFAULT_PHASE_POLICY
    assert seer_runtime.phase_policy(0, 5e4) == (2000.0, 100000.0)
    assert seer_runtime.phase_policy() == (0.0, 50000.0)
    for bad in (-1, True, "fast", float("nan")):
        with pytest.raises(ValueError, match="grain_ns must be a number >= 0"):
            seer_runtime.phase_policy(grain_ns=bad)
    assert seer_runtime.phase_policy() == (0.0, 50000.0)


def test_a_phase_opens_to_one_member_per_half_grain_of_its_estimate(default_policy):
    # 2 us grain: under it the caller alone; above, one member per 1 us of
    # estimated work, up to the team (or what a straggler left open).
    width = [_phase_width_for(est, 16) for est in (500, 1999, 2000, 2999, 3000, 9500, 16000, 1e6)]
    assert width == [1, 1, 2, 2, 3, 9, 16, 16]
    assert _phase_width_for(3000, 2) == 2 and _phase_width_for(1e6, 4) == 4
    seer_runtime.phase_policy(0, 0)        # everything open to everyone
    assert [_phase_width_for(est, 16) for est in (0, 500, 1e6)] == [16, 16, 16]


def test_phase_policy_environment_variable_is_checked():
    import os
    import subprocess
    import sys
    env = dict(os.environ, SEER_PHASE_GRAIN_NS="fast")
    r = subprocess.run([sys.executable, "-c", "import seer_runtime"], env=env,
                       capture_output=True, text=True)
    assert r.returncode != 0 and "SEER_PHASE_GRAIN_NS must be a number >= 0" in r.stderr
    env["SEER_PHASE_GRAIN_NS"] = "2500"
    r = subprocess.run([sys.executable, "-c", "import seer_runtime; print(seer_runtime.phase_policy()[0])"],
                       env=env, capture_output=True, text=True)
    assert r.stdout.strip() == "2500.0", r.stderr


@parallel_only
def test_default_policy_env_steps_match_one_thread(default_policy):
    import seer_envs

    def run(threads):
        env = seer_envs.make("pcs_v0", num_threads=threads, grid_width=24, grid_height=24, max_cycles=60)
        env.reset_arrays(seed=2)
        rng = np.random.default_rng(0)
        outs = []
        for _ in range(40):
            obs, rew, *_ = env.step_arrays(rng.integers(0, 3, 24 * 24))
            outs.append((obs.tobytes(), rew.tobytes()))
        return outs, env.engine.stats()["phases_opened"]

    ref, _ = run(1)
    outs, opened = run(2)
    assert outs == ref
    assert opened > 0        # 24x24 rounds are big enough to open phases


# --- wait policy (spin ceilings per kind of wait) -------------------------------

@pytest.fixture
def default_waits():
    old = seer_runtime.wait_policy()
    yield old
    seer_runtime.wait_policy(*old)


def test_wait_policy_round_trips_and_rejects_bad_values(default_waits):
    assert default_waits == (200000, 50000, 50000)
    assert seer_runtime.wait_policy(dock_ns=1e6) == default_waits
    assert seer_runtime.wait_policy() == (1000000, 50000, 50000)
    assert seer_runtime.wait_policy(join_ns=0, phase_ns=7) == (1000000, 50000, 50000)
    assert seer_runtime.wait_policy() == (1000000, 0, 7)
    for bad in (-1, True, "long", float("nan"), 2e9):
        with pytest.raises(ValueError, match="dock_ns must be a number from 0 to 1e9"):
            seer_runtime.wait_policy(dock_ns=bad)
    with pytest.raises(ValueError, match="phase_ns"):
        seer_runtime.wait_policy(dock_ns=5, phase_ns=-1)     # nothing set
    assert seer_runtime.wait_policy() == (1000000, 0, 7)


@parallel_only
def test_any_wait_policy_gives_the_serial_digest(default_waits):
    # no spinning at all (every wait parks) and long spins: the same events
    ref = _digest(1, end=4.0, num_lps=4096, start_events=4)
    for waits in ((0, 0, 0), (1e6, 1e6, 1e6)):
        seer_runtime.wait_policy(*waits)
        for threads in (2, 3):
            assert _digest(threads, end=4.0, num_lps=4096, start_events=4) == ref, (waits, threads)


@parallel_only
def test_any_yield_count_gives_the_serial_digest(default_waits):
    # yields between spinning and parking (none, the defaults, many, per
    # kind of wait), with no spinning so that every wait reaches them; round
    # by round and in copy groups
    from seer_runtime import loop

    def groups(threads):            # copy groups: 64 copies of 64 LPs, several runs
        model, eng = phold.make(4096, num_threads=threads, seed=4, remote_fraction=0.0)
        eng.set_copy_groups([(0, 64)], 64)
        for t in (1.0, 2.0, 4.0):
            eng.run_until(t)
        return model.digest(eng)

    ref = _digest(1, end=4.0, num_lps=4096, start_events=4)
    ref_groups = groups(1)
    seer_runtime.wait_policy(0, 0, 0)
    old = loop._set_team_yields(0)
    try:
        assert old == (2, 2, 2, 0)       # (dock, join, phase, groups): docs/runtime.md, "Waiting"
        for n in (0, (2, 2, 2, 0), 16, (16, 0, 3, 1)):
            loop._set_team_yields(n)
            assert loop._set_team_yields(n) == (n if isinstance(n, tuple) else (n,) * 4)
            for threads in (2, 3):
                assert _digest(threads, end=4.0, num_lps=4096, start_events=4) == ref, (n, threads)
                assert groups(threads) == ref_groups, (n, threads)
        for bad in (-1, 17, True, 1.0, "2", (1, 2, 3), (1, 2, 3, 17), (1, True, 0, 0)):
            with pytest.raises(ValueError, match="n must be an int from 0 to 16"):
                loop._set_team_yields(bad)
        assert loop._set_team_yields(old) == (16, 0, 3, 1)     # the bad values set nothing
    finally:
        loop._set_team_yields(old)


# --- spreading the team over CPUs (src/team.h, seer_spread) ---------------------

def _thread_masks():
    return {int(t): os.sched_getaffinity(int(t)) for t in os.listdir("/proc/self/task")}


@parallel_only
@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or not os.path.isdir("/proc/self/task")
                    or len(os.sched_getaffinity(0)) < 2,
                    reason="moving a member needs Linux and two allowed CPUs")
def test_a_member_moved_off_a_teammates_cpu_is_pinned_nowhere_and_changes_nothing():
    # Setting 2 moves a member at every join, as if it had woken on its
    # caller's CPU: the move narrows its affinity and restores it at once,
    # so afterwards every thread may run anywhere it could before.
    # Phases of 4096 LPs: long enough that the parked member wakes and joins
    # some (on a quiet machine the caller finished most 512-LP phases alone).
    from seer_runtime import loop
    big = dict(end=10.0, num_lps=4096, start_events=4)
    ref = _digest(1, **big)
    allowed = os.sched_getaffinity(0)
    moves0 = loop._team_spread_moves()
    old = loop._set_team_spread(2)
    try:
        got = _digest(2, **big)
    finally:
        loop._set_team_spread(old)
    assert got == ref
    assert loop._team_spread_moves() > moves0
    masks = _thread_masks()
    assert len(masks) >= 2 and all(m == allowed for m in masks.values()), masks


@parallel_only
def test_every_spread_setting_gives_the_serial_digest():
    from seer_runtime import loop
    ref = _digest(1, end=6.0)
    old = loop._set_team_spread(0)
    try:
        assert old == 1                         # on by default
        for mode in (0, 1, 2):
            loop._set_team_spread(mode)
            for threads in (2, 3):          # 3: more threads than CI's 2 CPUs
                assert _digest(threads, end=6.0) == ref, (mode, threads)
        with pytest.raises(ValueError, match="mode must be 0, 1 or 2"):
            loop._set_team_spread(True + 2)
    finally:
        loop._set_team_spread(old)
