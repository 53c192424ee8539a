# SPDX-License-Identifier: BSD-3-Clause
# Included by loop.pyx (one extension module); the tuning and test hooks, apart
# from the hot loop's files: the phase and wait policies (tuning, public), the
# team's spreading and yields (benchmarks and tests), and the test hooks that
# make an allocation fail, a join late or a member sleep.

# --- tuning -------------------------------------------------------------------

def phase_policy(grain_ns=None, wake_ns=None):
    """Get, or set, the engine's granularity thresholds (nanoseconds of
    estimated work in one phase of a round): below ``grain_ns`` a phase runs
    on the calling thread alone, above it opens to one worker per
    ``grain_ns / 2`` of its estimate (up to the team), from ``wake_ns`` on it
    also wakes parked workers.  Results never depend on them.  Returns the
    previous ``(grain_ns, wake_ns)``.  The environment variables
    ``SEER_PHASE_GRAIN_NS`` and ``SEER_PHASE_WAKE_NS`` set them at import;
    ``phase_policy(0, 0)`` opens every phase to every worker (what the
    equivalence tests use)."""
    global _grain_ns, _wake_ns
    old = (_grain_ns, _wake_ns)
    for name, v in (("grain_ns", grain_ns), ("wake_ns", wake_ns)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                              or not v >= 0):
            raise ValueError(f"{name} must be a number >= 0, got {v!r}")
    if grain_ns is not None:
        _grain_ns = float(grain_ns)
    if wake_ns is not None:
        _wake_ns = float(wake_ns)
    return old


def wait_policy(dock_ns=None, join_ns=None, phase_ns=None):
    """Get, or set, the ceilings (nanoseconds) of the workers' spin budgets
    per kind of wait: ``dock`` (a worker waiting for the next run, the gap
    between two env steps), ``join`` (the caller waiting for members to
    leave a phase), ``phase`` (a member waiting for the next phase of a
    run).  Each thread adapts its budget under the ceiling to the waits it
    measures, then yields and parks.  Results never depend on them.
    Returns the previous ``(dock_ns, join_ns, phase_ns)``."""
    old = tuple(int(seer_spin_get_max(k)) for k in range(3))
    new = (("dock_ns", dock_ns), ("join_ns", join_ns), ("phase_ns", phase_ns))
    for name, v in new:             # all checked before any is set
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                              or not 0 <= v <= 1e9):
            raise ValueError(f"{name} must be a number from 0 to 1e9, got {v!r}")
    for k, (name, v) in enumerate(new):
        if v is not None:
            seer_spin_set_max(k, <int64_t>v)
    return old


def _policy_from_environ():
    import os
    for name, key in (("grain_ns", "SEER_PHASE_GRAIN_NS"), ("wake_ns", "SEER_PHASE_WAKE_NS")):
        raw = os.environ.get(key)
        if raw:
            try:
                phase_policy(**{name: float(raw)})
            except ValueError:
                raise ValueError(f"{key} must be a number >= 0 (nanoseconds), got {raw!r}") from None


_policy_from_environ()


# --- benchmarks and tests -------------------------------------------------------

def _set_test_heap_slot_limit(slots):
    """Test hook: make any per-LP heap growth beyond ``slots`` fail as if the
    allocator had refused it (0 turns it off).  Call only between runs."""
    global seer_test_heap_slot_limit
    seer_test_heap_slot_limit = slots


def _set_test_join_delay(seconds):
    """Test hook: every worker of this module's teams sleeps ``seconds``
    before each attempt to join a phase, as if the OS had descheduled it
    (0 turns it off)."""
    global seer_test_join_delay_ns
    seer_test_join_delay_ns = <int64_t>(float(seconds) * 1e9)


def _set_team_spread(mode):
    """Whether a member woken into a phase on a teammate's CPU moves to
    another allowed CPU (src/team.h, "spreading the team"): 0 off, 1 on
    (the default), 2 every join moves as if stacked (tests).  Returns the
    previous setting.  For benchmarks and tests."""
    if mode not in (0, 1, 2):
        raise ValueError(f"mode must be 0, 1 or 2, got {mode!r}")
    old = seer_spread_get()
    seer_spread_set(mode)
    return old


def _set_team_yields(n):
    """How many times a waiting thread calls ``sched_yield`` between
    spinning and parking (src/team.h, ``seer_wait_change``): an int for
    every wait, or a ``(dock, join, phase, groups)`` tuple: a member waiting
    for the next run, the caller waiting for members to leave a phase, a
    member waiting for a run's next phase, and the same in a run of an
    engine in copy groups.  Returns the previous tuple (default
    ``(2, 2, 2, 0)``).  For benchmarks and tests."""
    counts = tuple(n) if isinstance(n, (tuple, list)) else (n,) * 4
    if len(counts) != 4 or not all(not isinstance(k, bool) and isinstance(k, int) and 0 <= k <= 16
                                   for k in counts):
        raise ValueError(f"n must be an int from 0 to 16 or a (dock, join, phase, groups) tuple "
                         f"of them, got {n!r}")
    old = tuple(seer_yields_get(k) for k in range(4))
    for k in range(4):
        seer_yields_set(k, counts[k])
    return old


def _team_spread_moves():
    """How many times members moved off a teammate's CPU (every team of
    this process, since it started)."""
    return seer_spread_moves


def _engine_test_sleep(Engine eng, tid, sleep_s, open_all):
    """Engine._set_test_sleep: worker ``tid`` sleeps ``sleep_s`` seconds in
    every exec phase it joins, holding its units (as a preempted member
    does), and in every inject and reset_lps phase (worker 0, the caller, is
    in each: a call made long, to test a second thread against it); 0 turns
    it off.  ``open_all``: every phase is also opened and wakes the team, and
    the straggler rule is off (else the phase policy and the straggler rule
    apply).  Costs one branch per phase when off."""
    eng._check_idle()
    eng.core.sh.test_sleep_tid = int(tid)
    eng.core.sh.test_sleep_ns = <int64_t>(float(sleep_s) * 1e9)
    eng.core.sh.test_sleep_force = bool(open_all)
