# SPDX-License-Identifier: BSD-3-Clause
import pytest

import seer_runtime
import warnings

from seer_runtime import Engine, ThreadChoice, resolve_threads
from seer_runtime import _threads
from seer_runtime.models import phold
from seer_runtime.models._faulty import FaultyModel


@pytest.mark.parametrize("bad", [0, -1, -8, 1.5, "2", "many", None, True, 10**6])
def test_bad_num_threads(bad):
    with pytest.raises(ValueError, match="num_threads"):
        phold.run(num_lps=8, end_time=2.0, num_threads=bad)


def test_num_threads_setter_validates():
    _, eng = phold.make(8)
    with pytest.raises(ValueError, match="num_threads"):
        eng.num_threads = 0
    eng.num_threads = 3
    assert eng.num_threads == 3


@pytest.mark.parametrize("bad", [-1.0, float("nan"), "soon", None])
def test_bad_end_time(bad):
    with pytest.raises(ValueError, match="end_time"):
        phold.run(num_lps=8, end_time=bad)


def test_run_until_rejects_negative_and_backwards_times():
    _, eng = phold.make(8)
    with pytest.raises(ValueError, match="t_end"):
        eng.run_until(-1.0)
    eng.run_until(5.0)
    with pytest.raises(ValueError, match="before the engine's current time"):
        eng.run_until(4.0)
    with pytest.raises(ValueError, match="start_time"):
        Engine(FaultyModel(4, "none"), num_threads=1).init(-2.0)


def test_inject_rejects_past_and_bad_ranges():
    _, eng = phold.make(8)
    eng.run_until(3.0)
    with pytest.raises(ValueError, match="cannot inject"):
        eng.inject(2.0, 0)
    with pytest.raises(ValueError, match="bad LP range"):
        eng.inject(3.0, 0, lo=4, hi=9)


@pytest.mark.parametrize("lookahead", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_lookahead(lookahead):
    with pytest.raises(ValueError, match="lookahead"):
        phold.run(num_lps=8, end_time=2.0, lookahead=lookahead, mean_delay=1.0)


@pytest.mark.parametrize("key, value, match", [
    ("num_lps", 0, "num_lps"),
    ("num_lps", 2.5, "num_lps"),
    ("remote_fraction", 1.5, "remote_fraction"),
    ("remote_fraction", -0.1, "remote_fraction"),
    ("mean_delay", 0.5, "mean_delay"),
    ("work_iters", -1, "work_iters"),
    ("start_events", -1, "start_events"),
    ("seed", -3, "seed"),
])
def test_bad_phold_parameters(key, value, match):
    kwargs = dict(num_lps=8, end_time=2.0)
    kwargs[key] = value
    with pytest.raises(ValueError, match=match):
        phold.run(**kwargs)


def test_unknown_phold_parameter_is_named():
    with pytest.raises(TypeError, match="remote_fracton"):
        phold.run(num_lps=8, end_time=2.0, remote_fracton=0.3)


def test_init_twice_is_an_error():
    _, eng = phold.make(8)
    eng.init()
    with pytest.raises(RuntimeError, match="already"):
        eng.init()


def auto_count():
    return resolve_threads("auto")[0]


def test_resolve_threads(monkeypatch):
    assert resolve_threads(1) == (1, ThreadChoice(chosen=1, method="user"))
    for bad in ("two", 0, 1.5, True, None):
        with pytest.raises(ValueError, match="num_threads"):
            resolve_threads(bad)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    n, choice = resolve_threads("auto")
    assert n == 1 and "OMP_NUM_THREADS" in choice.caps and choice.method == "caps"
    monkeypatch.delenv("OMP_NUM_THREADS")
    expected = seer_runtime.available_cpus() if seer_runtime.openmp_enabled() else 1
    assert auto_count() == expected
    # "auto" asks the chooser the caller passes (the envs pass STPA), unless OpenMP is off
    n, choice = resolve_threads("auto", choose=lambda: (3, ThreadChoice(chosen=3, method="test")))
    assert (n, choice.method) == ((3, "test") if seer_runtime.openmp_enabled() else (expected, "caps"))
    # an explicit count is clipped to a given cap (RLlib runners), "auto" is capped too
    assert resolve_threads(5, cap=2)[0] == 2
    assert resolve_threads("auto", cap=1)[0] == 1


def test_reserved_cores_cap_auto_and_leave_explicit_counts(monkeypatch):
    monkeypatch.delenv("SEER_RESERVED_CORES", raising=False)
    monkeypatch.setattr(_threads, "available_cpus", lambda: 8)
    monkeypatch.setattr(_threads, "_reserved", [None])
    assert _threads.thread_caps() == (8, {"affinity": 8})
    assert seer_runtime.reserve_cores(3) == 0            # returns the previous setting
    cap, reasons = _threads.thread_caps()
    assert cap == 5 and reasons == {"reserved": 5}
    assert _threads.thread_caps(physical_cores=4) == (1, {"reserved": 1})   # never below 1
    assert resolve_threads(7)[0] == 7                   # an explicit count is the user's
    seer_runtime.reserve_cores(0)
    monkeypatch.setenv("SEER_RESERVED_CORES", "2")       # the variable, where code cannot change
    seer_runtime.reserve_cores(0)
    assert _threads.thread_caps()[0] == 8               # a call wins over the variable
    monkeypatch.setattr(_threads, "_reserved", [None])
    assert _threads.thread_caps() == (6, {"reserved": 6})
    assert seer_runtime.reserved_cores() == 2
    for bad in ("two", "-1", "1.5"):                    # a bad variable is an error naming it
        monkeypatch.setenv("SEER_RESERVED_CORES", bad)
        with pytest.raises(ValueError, match="SEER_RESERVED_CORES"):
            _threads.thread_caps()
    for bad in (-1, 1.5, "2", True, None):
        with pytest.raises(ValueError, match="reserve_cores"):
            seer_runtime.reserve_cores(bad)


def test_a_missing_chooser_falls_back_to_the_caps():
    def choose():
        raise ImportError("no stpa here")
    if seer_runtime.openmp_enabled():
        with pytest.warns(RuntimeWarning, match="no stpa here"):
            n, _ = resolve_threads("auto", choose=choose)
        assert n == auto_count()


def test_engine_accepts_auto(monkeypatch):
    eng = Engine(phold.PholdModel(8, 1.0, 1.0, 0.5, 1, 0), num_threads="auto")
    assert eng.num_threads == auto_count()
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert Engine(phold.PholdModel(8, 1.0, 1.0, 0.5, 1, 0), num_threads="auto").num_threads == 1


def test_oversubscription_warns_once_naming_the_cores(monkeypatch):
    monkeypatch.setattr(_threads, "_warned", set())
    cpus = seer_runtime.available_cpus()
    n = cpus + 1
    with pytest.warns(RuntimeWarning, match=rf"num_threads={n} exceeds the {cpus} usable CPU") as rec:
        Engine(phold.PholdModel(8, 1.0, 1.0, 0.5, 1, 0), num_threads=n)
    ids = sorted(__import__("os").sched_getaffinity(0))
    assert str(ids[0]) in str(rec[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # the second time: silent
        phold.run(num_lps=8, end_time=2.0, num_threads=n)
        resolve_threads(n)
        resolve_threads(cpus)                # within the cores: never warns


def _pcs_env(n):
    import seer_envs
    return seer_envs.make("pcs_v0", grid_width=4, grid_height=4, num_threads=n).reset(seed=0)   # resolves here


def _pcs_headless(n):
    from seer_envs.pcs.headless import run_headless
    return run_headless(4, 4, end_time=1.0, num_threads=n)


@pytest.mark.parametrize("make", [
    lambda n: Engine(phold.PholdModel(8, 1.0, 1.0, 0.5, 1, 0), num_threads=n),
    lambda n: phold.run(num_lps=8, end_time=1.0, num_threads=n),
    _pcs_env, _pcs_headless], ids=["Engine", "phold.run", "env", "headless"])
def test_oversubscription_warning_points_at_the_users_line(monkeypatch, make):
    # not at seer_envs/views/parallel.py or another of SEER's own files, whatever
    # the depth of the call inside them
    monkeypatch.setattr(_threads, "_warned", set())
    n = seer_runtime.available_cpus() + 1
    with pytest.warns(RuntimeWarning, match=f"num_threads={n} exceeds") as rec:
        make(n)
    assert rec[0].filename == __file__, rec[0].filename


def test_auto_threads_run():
    r = phold.run(num_lps=64, end_time=5.0, num_threads="auto")
    assert r["num_threads"] == r["thread_choice"].chosen
    assert 1 <= r["num_threads"] <= auto_count()
