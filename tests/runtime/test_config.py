# SPDX-License-Identifier: BSD-3-Clause
"""Config validation: ``validate``'s shortcut for a value already of its
field's exact type and in range gives what the full check gives, for every
declared field of every scenario's config: the same stored value and type,
or the same error."""

import dataclasses
import math

import numpy as np
import pytest

import seer_envs
from seer_runtime.config import _check, validate
from seer_runtime.models.phold.config import PholdConfig

CONFIGS = sorted({type(s.build_config({})) for s in seer_envs.envs().values()} | {PholdConfig},
                 key=lambda c: c.__name__)


def _probes(f, default):
    m = f.metadata
    out = [default, 0, 1, -1, 0.0, -0.0, 1.5, -1.5, 2**40, 1e300, math.inf, -math.inf, math.nan,
           True, "1", None, np.float64(2.0), np.int64(3), np.float32(0.5)]
    for b in (m.get("lo"), m.get("hi")):
        if b is not None:
            out += [b, float(b), math.nextafter(float(b), math.inf), math.nextafter(float(b), -math.inf)]
            if float(b).is_integer() and abs(b) < 2**53:
                out += [int(b), int(b) - 1, int(b) + 1]
    return out


def _outcome(fn):
    try:
        v = fn()
    except ValueError as e:
        return "error", str(e)
    return type(v), repr(v)


@pytest.mark.parametrize("cls", CONFIGS, ids=lambda c: c.__name__)
def test_the_shortcut_agrees_with_the_full_check(cls):
    base = cls()
    checked = 0
    for f in dataclasses.fields(cls):
        if not f.metadata:
            continue
        for value in _probes(f, getattr(base, f.name)):
            want = _outcome(lambda: _check(cls.__name__, f, value))
            cfg = dataclasses.replace(base)
            object.__setattr__(cfg, f.name, value)

            def run():
                validate(cfg)
                return getattr(cfg, f.name)
            assert _outcome(run) == want, (cls.__name__, f.name, value)
            checked += 1
    assert checked > 100
