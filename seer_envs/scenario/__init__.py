# SPDX-License-Identifier: BSD-3-Clause
"""The scenario author's kit (docs/new_scenario.md), public API:
:mod:`~seer_envs.scenario.copies` (:class:`Copies`, the contract a
scenario fills in), :mod:`~.config` (config fields, validation and the
shared model bounds), :mod:`~.reference` (:class:`ReferenceEngine`, the
pure-Python oracle's skeleton), :mod:`~.render` (matplotlib figures as
RGB arrays, ``human``-mode pacing, the declared render modes) and, for the
Cython model, ``per_copy`` (``PerCopy``: the per-copy parameter buffer,
each LP's copy and the copy's range check; ``cimport`` it).

Nothing is imported here: each module is imported by its own path."""
