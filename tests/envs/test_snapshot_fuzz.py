# SPDX-License-Identifier: BSD-3-Clause
"""The seeded snapshot fuzz (tests/envs/_snapshot_fuzz.py) in a subprocess
with a timeout, so that a crash or a hang is a failure: every restore path
(single env, vector env whole and per copy, one-copy vector envs in every
layout, one copy into a single env; sources stepped with masked resets in
every autoreset mode), damaged bytes (overwritten
bytes, one bit, pairs of bits, the sign bits of two event times, truncation,
extension, swapped words) always refused with the env unchanged, and
resealed altered arrays refused or taken, the next steps never crashing or
hanging.  Zero accepted corruptions, zero other errors."""

import json
import os
import subprocess
import sys

import pytest

import seer_envs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(seer_envs.__file__)))     # the tree under test
FUZZ = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_snapshot_fuzz.py")


def _fuzz(seed, cases, timeout):
    r = subprocess.run([sys.executable, FUZZ, str(seed), str(cases)], capture_output=True, text=True,
                       timeout=timeout, env=dict(os.environ, PYTHONPATH=ROOT), cwd=ROOT)
    assert r.returncode == 0, f"the fuzz died (return code {r.returncode}): {r.stderr[-3000:]}"
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["cases"] == cases and out["refused"] == cases, (out, r.stderr[-3000:])
    assert out["accepted_corruptions"] == 0 and out["other_errors"] == 0, (out, r.stderr[-3000:])
    assert out["changed_on_refusal"] == 0, out
    assert out["resealed_refused"] > 0 and out["resealed_refused"] + out["resealed_taken"] == cases, out
    assert len(out["kinds"]) == 7, out
    # one-copy targets in every layout (and a single env), from every one-copy source
    assert set(out["targets"]) == {"env>1:team", "env>1:team-2", "env>1:groups", "vector1:team",
                                   "vector1:team-2", "vector1:single", "copies1:team", "copies1:team-2",
                                   "copies1:groups", "copies1:single"}, out
    # masked resets in every autoreset mode: taken under DISABLED, refused under the others
    m = out["masked"]
    assert m["disabled"]["taken"] > 0 and m["disabled"]["refused"] == 0, out
    for mode in ("next_step", "same_step"):
        assert m[mode]["refused"] > 0 and m[mode]["taken"] == 0, out
    return out


def test_snapshot_fuzz():
    _fuzz(0, 600, 300)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(1, 6))
def test_snapshot_fuzz_long(seed):
    _fuzz(seed, 10000, 1800)
