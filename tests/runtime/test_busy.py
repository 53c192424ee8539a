# SPDX-License-Identifier: BSD-3-Clause
"""One caller at a time, wherever the engine releases the GIL (issue 28,
Why 3): while one Python thread is inside any call that runs the team
(run_until, init, inject, inject_blocks, reset_lps), a second thread's call
raises EngineBusyError before it changes anything, and the first thread's
results are those of a run without the misuse, at 1 and 2 threads.
reset_lps and inject_blocks used to release the GIL without the guard."""

import threading
import time

import pytest

import seer_runtime
from seer_runtime import EngineBusyError
from seer_runtime.models import phold

PARAMS = dict(num_lps=512, remote_fraction=0.5, lookahead=0.5, mean_delay=1.0, start_events=2)
HOLD_S = 0.4         # the legitimate call sleeps this long inside its phase (test hook)

# The legitimate calls, each made long by the test hook: it sleeps in the
# caller's share of every inject and reset_lps phase (a long one), and in
# every exec phase of a run (a short one: a run has many).
LEGIT = {
    "reset_lps": (HOLD_S, lambda e: e.reset_lps(0, 256, start_time=5.0)),
    "inject_blocks": (HOLD_S, lambda e: e.inject_blocks(5.0, 0, [0, 256], 128, execute=True)),
    "inject": (HOLD_S, lambda e: e.inject(5.0, 0, 100, 400)),
    "run_until": (0.002, lambda e: e.run_until(60.0)),
}

# What a second thread tries meanwhile: every one must be refused untouched.
MISUSE = {
    "run_until": lambda e: e.run_until(100.0),
    "init": lambda e: e.init(),
    "inject": lambda e: e.inject(7.0, 0),
    "inject_blocks": lambda e: e.inject_blocks(7.0, 0, [0], 4),
    "reset_lps": lambda e: e.reset_lps(0, 8, start_time=5.0),
    "num_threads": lambda e: setattr(e, "num_threads", 3),
    "freeze_all_but": lambda e: e.freeze_all_but([0], 4),
    "thaw": lambda e: e.thaw(),
    "rewind": lambda e: e.rewind(5.0),
    "set_stream_keys": lambda e: e.set_stream_keys(0, 4, 1),
    "set_stream_keys_at": lambda e: e.set_stream_keys_at([0], 4, [1], [0]),
    "state_digest": lambda e: e.state_digest(),
    "pending": lambda e: e.pending(),
}


def test_engine_busy_error_is_exported_and_a_runtime_error():
    assert issubclass(EngineBusyError, RuntimeError)
    assert seer_runtime.EngineBusyError is seer_runtime._errors.EngineBusyError
    assert "EngineBusyError" in seer_runtime.__all__


def _engine(threads):
    _, eng = phold.make(num_threads=threads, seed=9, **PARAMS)
    eng.run_until(5.0)
    return eng


def _finish(eng):
    eng.run_until(80.0)
    return eng.state_digest(), eng.stats()["events"], eng.now


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("legit", sorted(LEGIT))
def test_second_thread_is_refused_and_the_first_is_unharmed(threads, legit):
    hold, call = LEGIT[legit]
    ref = _engine(threads)
    call(ref)
    expected = _finish(ref)

    eng = _engine(threads)
    eng._set_test_sleep(0, hold)
    errors, done = [], threading.Event()

    def first():
        try:
            call(eng)
        except BaseException as e:      # noqa: BLE001 - reported below
            errors.append(e)
        done.set()

    th = threading.Thread(target=first)
    th.start()
    try:
        # Wait until the first thread holds the engine (a read-only probe
        # that is refused while it does); before the fix reset_lps and
        # inject_blocks never took the guard, so this saw nothing.
        deadline = time.monotonic() + 30
        while not done.is_set() and time.monotonic() < deadline:
            try:
                eng.pending()
            except EngineBusyError:
                break
            time.sleep(0.0005)
        assert not done.is_set(), f"{legit} ran without the one-caller guard (or ended too soon)"
        refused = {}
        for name, misuse in MISUSE.items():
            with pytest.raises(EngineBusyError, match="in use by another thread") as info:
                misuse(eng)
            refused[name] = info.value
        assert not done.is_set(), "the first call ended before every misuse was tried: raise HOLD_S"
    finally:
        th.join(120)
    assert not th.is_alive() and not errors, errors
    eng._set_test_sleep(0, 0)
    # Nothing the refused calls tried took effect: the first thread's
    # results, and everything after, are those of a run without them.
    assert eng.num_threads == threads
    assert _finish(eng) == expected
