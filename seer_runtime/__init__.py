# SPDX-License-Identifier: BSD-3-Clause
"""SEER's event runtime: per-entity queues with CAS inboxes, an executive
list claimed with atomics, conservative windows, counter-based RNG, and
its own worker team (pthreads; spin, yield, then futex) whose results are
bit-identical at every thread count.

Python facade
-------------
Engine, Scenario
    The loop (``seer_runtime.loop``) and the base class of models
    (``seer_runtime.scenario``, all a model cimports besides the contract).
ContractViolation, OutOfMemory
    Raised when a model breaks the event-locality contract (or memory runs out).
EngineBusyError
    Raised when a second Python thread calls into an Engine in use.
openmp_enabled()
    Whether this build has OpenMP.
resolve_threads(num_threads, choose=None, cap=None)
    The one resolver of a ``num_threads`` setting (``"auto"`` or an int).
ThreadChoice
    How a thread count was chosen (``env.thread_choice``).
ScenarioSpec, Run, register, registry
    Scenario specs and their registry (``seer_runtime.spec``).
get_include()
    Directories a scenario's Cython build needs (docs/new_scenario.md).
"""

import os

from seer_runtime._errors import ContractViolation, EngineBusyError, OutOfMemory
from seer_runtime.loop import (Engine, check_num_threads, omp_max_threads, openmp_enabled,
                               phase_policy, wait_policy)
from seer_runtime.scenario import Scenario
from seer_runtime._threads import available_cpus, reserve_cores, reserved_cores, resolve_threads, thread_caps
from seer_runtime.thread_choice import ThreadChoice
from seer_runtime.spec import Run, ScenarioSpec, register, registry
from seer_runtime._include import get_include

__all__ = ["Engine", "Scenario", "ContractViolation", "OutOfMemory", "EngineBusyError", "get_include", "openmp_enabled", "omp_max_threads",
           "resolve_threads", "ThreadChoice", "thread_caps", "reserve_cores", "reserved_cores", "available_cpus", "check_num_threads",
           "ScenarioSpec", "Run", "register", "registry", "phase_policy", "wait_policy"]

# pip hides the build's own warning (it swallows setup.py's stderr), so the
# first import says it instead, where a user sees it.
if not openmp_enabled() and not os.environ.get("SEER_NO_OPENMP"):
    import warnings
    warnings.warn("seer_runtime was built without OpenMP: every run uses one thread. Install a C "
                  "compiler with OpenMP (gcc's libgomp or clang's libomp) and reinstall; set "
                  "SEER_NO_OPENMP=1 to silence this for a deliberately serial build.",
                  RuntimeWarning, stacklevel=2)
