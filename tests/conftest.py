# SPDX-License-Identifier: BSD-3-Clause
import contextlib
import os
import signal
import sys
import tempfile
import threading

import pytest

# Open every phase of every round to every worker (the engine's granularity
# policy would run a small test model's phases on one thread): the
# equivalence tests then exercise the parallel path, here and in the
# subprocesses tests start.  tests/runtime/test_team.py checks the default
# policy separately.
os.environ.setdefault("SEER_PHASE_GRAIN_NS", "0")
os.environ.setdefault("SEER_PHASE_WAKE_NS", "0")

import seer_runtime  # noqa: E402

# Test modules share helpers through tests/_shared/seer_test_helpers.py (the
# suite imports with --import-mode=importlib: no package to import them from).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "_shared"))

# STPA keeps preflight results in a user cache file; tests must neither read
# a developer's nor leave one behind.
os.environ["STPA_CACHE"] = os.path.join(tempfile.mkdtemp(prefix="seer-tests-"), "stpa.json")


def pytest_report_header(config):
    return (f"seer_runtime: openmp={seer_runtime.openmp_enabled()} "
            f"cpus={seer_runtime.available_cpus()} OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")


@pytest.fixture
def thread_counts():
    """Thread counts every equivalence test compares (1 is the reference).
    More threads than cores is deliberate: it forces preemption mid-round."""
    return (1, 2, 3, 4)


@contextlib.contextmanager
def _ctrl_c_after(delay):
    # Python's own handler, even where SIGINT came in ignored (a shell
    # without job control starts `cmd &` so): the signal must reach Python
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            yield
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, old)


@pytest.fixture
def ctrl_c_after():
    """``with ctrl_c_after(seconds): ...``: a real SIGINT to this process
    that long after entering, and the ``KeyboardInterrupt`` it must raise
    inside the block (a test fails if none does)."""
    if not hasattr(signal, "SIGINT") or os.name == "nt":
        pytest.skip("POSIX signals")
    return _ctrl_c_after
