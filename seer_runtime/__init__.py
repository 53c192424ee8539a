# SPDX-License-Identifier: BSD-3-Clause
"""SEER's event runtime: per-entity queues with CAS inboxes, an executive
list claimed with atomics, conservative windows, counter-based RNG, and
OpenMP worker threads whose results are bit-identical at every thread count.

Python facade
-------------
Engine, Scenario
    The loop and the base class of models (see ``seer_runtime.loop``).
ContractViolation
    Raised when a model breaks the event-locality contract.
openmp_enabled()
    Whether this build has OpenMP.
effective_n_threads(num_threads)
    Resolve ``"auto"`` or an int to the thread count a run will use.
"""

import os

from seer_runtime._errors import ContractViolation
from seer_runtime.loop import (Engine, Scenario, check_num_threads,
                               omp_max_threads, openmp_enabled)

__all__ = ["Engine", "Scenario", "ContractViolation", "openmp_enabled", "omp_max_threads",
           "effective_n_threads", "available_cpus"]

# pip hides the build's own warning (it swallows setup.py's stderr), so the
# first import says it instead, where a user sees it.
if not openmp_enabled() and not os.environ.get("SEER_NO_OPENMP"):
    import warnings
    warnings.warn("seer_runtime was built without OpenMP: every run uses one thread. Install a C "
                  "compiler with OpenMP (gcc's libgomp or clang's libomp) and reinstall; set "
                  "SEER_NO_OPENMP=1 to silence this for a deliberately serial build.",
                  RuntimeWarning, stacklevel=2)


def available_cpus():
    """CPUs this process may run on: the affinity mask where the OS has one,
    else ``os.cpu_count()``."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def effective_n_threads(num_threads="auto"):
    """Resolve a ``num_threads`` setting to a count.

    An int >= 1 is returned as given.  ``"auto"`` (before STPA chooses per
    configuration) is the CPUs in the affinity mask, capped by
    ``OMP_NUM_THREADS`` when that is set to a positive int; 1 in a build
    without OpenMP.
    """
    if num_threads == "auto":
        if not openmp_enabled():
            return 1
        n = available_cpus()
        env = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
        if env.isdigit() and int(env) >= 1:
            n = min(n, int(env))
        return max(1, n)
    if isinstance(num_threads, str):
        raise ValueError(f'num_threads must be "auto" or an int >= 1, got {num_threads!r}')
    return check_num_threads(num_threads)
