# SPDX-License-Identifier: BSD-3-Clause
import os

import pytest

import seer_runtime
from seer_runtime.queue import stress_inbox


@pytest.mark.skipif(bool(os.environ.get("SEER_SKIP_OPENMP_TEST")),
                    reason="SEER_SKIP_OPENMP_TEST is set (a deliberately serial build)")
def test_built_with_openmp():
    assert seer_runtime.openmp_enabled(), (
        "seer_runtime was built without OpenMP; install libgomp/libomp and rebuild "
        "(pip install -e .), or set SEER_SKIP_OPENMP_TEST=1 for a serial build")


@pytest.mark.skipif(not seer_runtime.openmp_enabled(), reason="serial build")
def test_runtime_really_starts_a_team():
    # The harness reports how many threads actually ran in its parallel region.
    assert stress_inbox(producers=2, per_producer=10, num_threads=3)["team"] == 3
