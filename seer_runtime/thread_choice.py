# SPDX-License-Identifier: BSD-3-Clause
"""How a thread count was chosen: one typed record that the resolver, STPA,
the thread tuner and the vector env's layout fill in, and the envs, the
headless runners, the CLI and the docs read (``env.thread_choice``)."""

import dataclasses
from dataclasses import dataclass, field
from typing import Optional


@dataclass
class ThreadChoice:
    """Why an engine runs on ``chosen`` threads, and every change since.

    Filled in layers: the resolver sets ``chosen``, ``method`` and the caps;
    STPA (``num_threads="auto"``) adds its prediction; the thread tuner adds
    the closed loop and each switch; a vector env adds its layout.
    ``to_dict()`` gives plain JSON-able data (``seer run --json``).
    """

    #: The thread count in use (the env's ``num_threads``).
    chosen: int
    #: ``"user"``, ``"user, capped"``, ``"caps"`` ("auto" without STPA: the
    #: affinity mask capped by ``OMP_NUM_THREADS``), or STPA's: ``"lightgbm"``
    #: (the law with its learned residual), ``"usl"`` (the law alone),
    #: ``"analytic"`` (no probes), ``"cap"`` (one thread usable).
    method: str
    #: The explicit count asked for, when a cap lowered it.
    requested: Optional[int] = None
    #: The hard cap on the count, and the caps that bind ({name: count}).
    cap: Optional[int] = None
    caps: dict = field(default_factory=dict)

    # --- STPA ("auto") ---------------------------------------------------------
    #: {threads: predicted speedup} for 1..cap.
    predicted_speedup: Optional[dict] = None
    #: {threads: measured speedup} of the preflight's probes.
    probe_speedup: Optional[dict] = None
    #: The fitted scaling law ({"s", "k"}), the preflight's trace features and
    #: the hardware probe.
    law: Optional[dict] = None
    features: Optional[dict] = None
    hardware: Optional[dict] = None
    #: Seconds the preflight took (0 when cached).
    preflight_s: Optional[float] = None
    #: Why STPA fell back from its learned model, if it did.
    model_warning: Optional[str] = None
    #: The preflight came from a cache: None, ``"memory"`` or ``"disk"``.
    cache: Optional[str] = None

    # --- the thread tuner ("auto", over the run) -------------------------------
    #: The thread tuner adjusts this run (``"auto"`` with more than one usable CPU).
    tuned: bool = False
    #: Each switch of the count: {step, from, to, reason, ...}.
    adapted: list = field(default_factory=list)
    #: The closed loop over the first steps ({start, picked, units, ...}), or None.
    closed_loop: Optional[dict] = None
    #: Trials and probes that changed nothing (counted, not listed).
    trials_not_kept: int = 0
    #: Larger teams not tried because other processes held the CPUs.
    larger_teams_skipped: int = 0
    #: Switches beyond the listed ones (the list is bounded).
    adapted_dropped: int = 0

    # --- a vector env's layout -------------------------------------------------
    #: ``"team"`` or ``"groups"`` (docs/runtime.md, "Copies in groups").
    layout: Optional[str] = None
    #: Groups of copies and the threads stepping them (``"groups"`` layout).
    groups: Optional[int] = None
    workers: Optional[int] = None

    @property
    def cached(self):
        """True when STPA's preflight came from a cache."""
        return self.cache is not None

    @property
    def first(self):
        """The count the run started on (before the tuner's first switch)."""
        return self.adapted[0].get("from", self.chosen) if self.adapted else self.chosen

    def replace(self, **changes):
        """A copy with ``changes`` applied (the record a layer hands on)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self):
        """Plain data: every field that is set (None and empty ones left out),
        ``cached`` included."""
        out = {k: v for k, v in dataclasses.asdict(self).items() if v not in (None, [], {})}
        out["cached"] = self.cached
        return out
