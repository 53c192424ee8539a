# SPDX-License-Identifier: BSD-3-Clause
"""PHOLD's parameters, declared once: the module, its command line, config
files, ``seer list``, STPA and the tests all read this class."""

import dataclasses

from seer_runtime.config import param, validate


@dataclasses.dataclass(frozen=True)
class PholdConfig:
    """Frozen, validated PHOLD parameters."""

    num_lps: int = param(1024, "LPs", "logical processes", lo=1, hi=2**32 - 2, integer=True)
    start_events: int = param(1, "events", "events seeded per LP", lo=0, hi=255, integer=True)
    remote_fraction: float = param(0.25, "", "probability an event goes to a uniform random LP",
                                   lo=0.0, hi=1.0)
    lookahead: float = param(1.0, "time", "minimum delay", lo=0.0, lo_open=True)
    mean_delay: float = param(1.0, "time", "mean delay (lookahead + Exp(mean_delay - lookahead))",
                              lo=0.0, lo_open=True)
    # hi: 10**8 iterations is ~0.13 s per event; more would make one event
    # outlast Ctrl-C's 0.2 s (the model rejects it too: _model.MAX_WORK_ITERS).
    work_iters: int = param(0, "iterations", "arithmetic loop per event: the granularity knob",
                            lo=0, hi=10**8, integer=True)

    def __post_init__(self):
        validate(self)
        if self.mean_delay < self.lookahead:
            raise ValueError(f"PholdConfig.mean_delay ({self.mean_delay}) must be >= lookahead "
                             f"({self.lookahead}): the delay is lookahead + Exp(mean_delay - lookahead)")
