# SPDX-License-Identifier: BSD-3-Clause
import os
import tempfile

import pytest

import seer_runtime

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
