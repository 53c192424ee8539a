# SPDX-License-Identifier: BSD-3-Clause
import time

import pytest

from seer_runtime.models import phold


@pytest.mark.parametrize("budget", [None, 10**9])
def test_ctrl_c_interrupts_promptly_and_the_run_can_continue(budget, ctrl_c_after):
    end = 600.0     # about 0.7 s on two threads, so the signal lands mid-run
    model, eng = phold.make(4096, num_threads=2, seed=3, work_iters=400,
                            max_events_per_run=budget)
    t0 = time.perf_counter()
    with ctrl_c_after(0.15):
        eng.run_until(end)
    # Control returns to Python every 50 ms of wall time.
    assert time.perf_counter() - t0 < 0.45
    assert 0 < eng.stats()["events"] < 4096 * (end - 1)
    # The queues were left consistent between rounds: finishing the run gives
    # exactly what an uninterrupted run gives.
    t_stop = eng.now
    assert t_stop == 0.0   # run_until did not complete, so the time did not advance
    eng.run_until(end)
    ref_model, ref = phold.make(4096, num_threads=1, seed=3, work_iters=400)
    ref.run_until(end)
    assert model.digest(eng) == ref_model.digest(ref)
