# SPDX-License-Identifier: BSD-3-Clause
"""The one place a ``num_threads`` setting becomes a count.

Everything that takes ``num_threads`` (Engine, the envs, the headless
runners, PHOLD, STPA's caps, the RLlib integration) resolves it here, so the
fallbacks and the bounds are the same everywhere.  The runtime imports
nothing above it: a caller that wants STPA for ``"auto"`` passes a
``choose`` callable.
"""

import os
import sys
import warnings

from seer_runtime.thread_choice import ThreadChoice

_warned = set()     # (count, cpus) already warned about; one warning per process
_reserved = [None]  # reserve_cores(n); None: the SEER_RESERVED_CORES variable decides

# SEER's own packages (siblings of this one): a warning about a setting is
# shown at the first line outside them, the user's call.
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_OWN = tuple(os.path.join(_ROOT, p) + os.sep for p in ("seer_runtime", "seer_envs", "seer", "stpa"))


def _internal(frame):
    # the frames warnings.warn itself skips when it counts a stacklevel
    name = frame.f_code.co_filename
    return "importlib" in name and "_bootstrap" in name


def user_stacklevel():
    """The ``stacklevel`` that makes a ``warnings.warn`` in the caller of
    this function point at the first frame outside SEER's packages, however
    deep the call (envs, vector envs, the CLI reach the resolver through
    different paths); 2 (the caller's caller) when every frame is SEER's.
    Counted as ``warnings.warn`` counts: importlib's bootstrap frames are
    not levels."""
    frame, level = sys._getframe(1), 1          # level 1: the function that warns
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_OWN):
        frame = frame.f_back
        while frame is not None and _internal(frame):
            frame = frame.f_back
        level += 1
    return level if frame is not None else 2


def available_cpus():
    """CPUs this process may run on: the affinity mask where the OS has one,
    else ``os.cpu_count()``."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _usable_cpu_ids():
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:
        return list(range(os.cpu_count() or 1))


def omp_num_threads_cap():
    """OMP_NUM_THREADS as a positive int (first entry of a list), or None."""
    v = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    return int(v) if v.isdigit() and int(v) >= 1 else None


def reserve_cores(n):
    """Keep ``n`` cores for work that runs beside the env in this process,
    a learner above all (torch's intra-op threads updating the policy
    while the env collects the next rollout, ``--overlap`` in the
    examples): ``num_threads="auto"`` and the thread tuner then use at
    most the usable CPUs minus ``n`` (never fewer than 1), and
    :class:`ThreadChoice` names the ``reserved`` cap when it binds.  The
    env cannot see a learner's threads itself: they belong to this
    process, so the load the tuner watches does not show them.  ``0``
    reserves nothing; the ``SEER_RESERVED_CORES`` environment variable
    sets the same where code cannot be changed (a call wins over it).
    Explicit thread counts are never changed.  Returns the previous
    setting."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"reserve_cores(n): n must be an int >= 0, got {n!r}")
    prev = reserved_cores()
    _reserved[0] = n
    return prev


def reserved_cores():
    """The cores kept for work beside the env (:func:`reserve_cores`,
    else ``SEER_RESERVED_CORES``, else 0)."""
    if _reserved[0] is not None:
        return _reserved[0]
    v = os.environ.get("SEER_RESERVED_CORES", "").strip()
    if not v:
        return 0
    if not v.isdigit():
        raise ValueError(f"SEER_RESERVED_CORES must be a whole number >= 0 (cores kept for the learner), got {v!r}")
    return int(v)


def thread_caps(physical_cores=None, affinity=None, extra=None):
    """The hard caps on a thread count and which of them bind: ``(cap, reasons)``.

    The caps are the affinity mask, ``OMP_NUM_THREADS`` when set, the
    physical cores when known (STPA's probe passes them), the cores left
    after :func:`reserve_cores` (``reserved``), and ``extra`` ({name:
    count}, e.g. an RLlib runner's CPUs).  1 without OpenMP.
    """
    from seer_runtime.loop import openmp_enabled
    caps = {"affinity": available_cpus() if affinity is None else int(affinity)}
    if physical_cores is not None:
        caps["physical_cores"] = int(physical_cores)
    kept = reserved_cores()
    if kept:
        caps["reserved"] = max(1, min(caps.values()) - kept)
    omp = omp_num_threads_cap()
    if omp is not None:
        caps["OMP_NUM_THREADS"] = omp
    for k, v in (extra or {}).items():
        if v is not None:
            caps[k] = int(v)
    if not openmp_enabled():
        caps["no_openmp"] = 1
    cap = max(1, min(caps.values()))
    return cap, {k: v for k, v in caps.items() if v == cap}


def check_num_threads(num_threads):
    """Validate a ``num_threads`` setting: ``"auto"`` or an int in [1, MAX_THREADS]."""
    from seer_runtime.loop import check_num_threads as _check
    if isinstance(num_threads, str):
        if num_threads != "auto":
            raise ValueError(f'num_threads must be "auto" or an int >= 1, got {num_threads!r}')
        return num_threads
    return _check(num_threads)


def warn_if_oversubscribed(n):
    """Warn once (RuntimeWarning) when an explicit count exceeds the usable
    cores: threads then share cores, and a phase waits for a worker that is
    preempted while it holds a unit of work."""
    cpus = available_cpus()
    if n <= cpus or (n, cpus) in _warned:
        return
    _warned.add((n, cpus))
    ids = _usable_cpu_ids()
    shown = ", ".join(map(str, ids[:16])) + (", ..." if len(ids) > 16 else "")
    warnings.warn(f"num_threads={n} exceeds the {cpus} usable CPU(s) of this process "
                  f"(affinity mask: {shown}); threads will share cores and run slower, "
                  f"not faster (results are unchanged)", RuntimeWarning, stacklevel=user_stacklevel())


def resolve_threads(num_threads="auto", choose=None, cap=None):
    """Resolve a ``num_threads`` setting: ``(count, ThreadChoice)``.

    An int >= 1 is used as given (clipped to ``cap`` when given; warns once
    when it exceeds the usable CPUs).  ``"auto"`` calls ``choose()`` when
    given (it returns the same pair; the envs pass one that asks STPA), and
    otherwise, or when ``choose`` raises ImportError, uses the hard caps:
    the affinity mask capped by OMP_NUM_THREADS (and ``cap``); 1 without
    OpenMP.  A bad setting raises ValueError naming the bound.
    """
    check_num_threads(num_threads)
    if num_threads == "auto":
        from seer_runtime.loop import openmp_enabled
        if choose is not None and openmp_enabled():
            try:
                return choose()
            except ImportError as e:
                warnings.warn(f"STPA unavailable ({e}); num_threads='auto' uses the hard caps",
                              RuntimeWarning, stacklevel=user_stacklevel())
        n, reasons = thread_caps(extra={"cap": cap})
        return n, ThreadChoice(chosen=n, method="caps", cap=n, caps=reasons)
    n = num_threads
    if cap is not None and n > cap:
        return max(1, int(cap)), ThreadChoice(chosen=max(1, int(cap)), method="user, capped",
                                              requested=n, cap=int(cap))
    warn_if_oversubscribed(n)
    return n, ThreadChoice(chosen=n, method="user")
