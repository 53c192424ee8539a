# SPDX-License-Identifier: BSD-3-Clause
"""``seer_runtime.get_include()``: what a scenario's own Cython build needs."""

import os

__all__ = ["get_include"]


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
    multiply-add would round differently from a pure-Python reference); add
    ``-fopenmp`` only if the scenario's own code uses ``prange``.
    (docs/new_scenario.md, section 9.)
    """
    here = os.path.dirname(os.path.abspath(__file__))
    return [here, os.path.dirname(here)]
