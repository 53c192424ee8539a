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
resolve_threads(num_threads, choose=None, cap=None)
    The one resolver of a ``num_threads`` setting (``"auto"`` or an int).
ScenarioSpec, Run, register, registry
    Scenario specs and their registry (``seer_runtime.spec``).
get_include()
    Directories a scenario's Cython build needs (``contract.pxd``, ``loop.pxd``
    and the C headers they include); see docs/new_scenario.md.
"""

import os as _os

from seer_runtime._errors import ContractViolation
from seer_runtime.loop import (Engine, Scenario, check_num_threads,
                               omp_max_threads, openmp_enabled)
from seer_runtime._threads import available_cpus, resolve_threads, thread_caps
from seer_runtime.spec import Run, ScenarioSpec, register, registry


def get_include():
    """Directories to pass to a scenario's Cython build, both as cythonize's
    ``include_path`` (so ``from seer_runtime.contract cimport *`` finds the
    ``.pxd`` files) and as the Extension's ``include_dirs`` (so the C
    compiler finds ``src/rng.h`` and the other headers those ``.pxd`` files
    name).  Like ``numpy.get_include()``, but a list::

        Extension("mypkg.model", ["mypkg/model.pyx"],
                  include_dirs=seer_runtime.get_include())
        cythonize(ext, include_path=seer_runtime.get_include())

    Compile with ``-ffp-contract=off`` as the runtime does (a fused
    multiply-add would round differently from the pure-Python reference);
    add ``-fopenmp`` only if the scenario's own code uses ``prange``.
    """
    here = _os.path.dirname(_os.path.abspath(__file__))
    return [here, _os.path.dirname(here)]


__all__ = ["get_include", "Engine", "Scenario", "ContractViolation", "openmp_enabled", "omp_max_threads",
           "resolve_threads", "thread_caps", "available_cpus", "check_num_threads",
           "ScenarioSpec", "Run", "register", "registry"]
