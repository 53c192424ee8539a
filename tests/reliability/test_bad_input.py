# SPDX-License-Identifier: BSD-3-Clause
"""Bad input everywhere a user touches: each case raises the expected
exception, whose message names the culprit; none crashes or hangs.
The catalogue is tests/reliability/bad_input_cases.py (docs/bad_input.md)."""

import re

import pytest

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bad_input_cases import CASES, HANG, NONSENSE  # noqa: E402

# The issue-16 cases run in a subprocess with a timeout (test_issue16.py).
IN_PROCESS = [c for c in CASES if c[1] not in (HANG, NONSENSE)]


@pytest.mark.parametrize("env, category, what, fn, exc, match", IN_PROCESS,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in IN_PROCESS])
def test_bad_input_is_a_clear_error(env, category, what, fn, exc, match):
    with pytest.raises(exc) as info:
        fn()
    assert re.search(match, str(info.value)), f"{what}: message {str(info.value)!r} does not match {match!r}"


def test_catalogue_covers_both_envs_and_every_category():
    cats = {(c[0], c[1]) for c in CASES}
    for env in ("pcs_v0", "aircraft_v0"):
        for cat in ("actions (dict)", "actions (array)", "config", "num_threads", "reset", "lifecycle"):
            assert (env, cat) in cats
