# SPDX-License-Identifier: BSD-3-Clause
"""Snapshots, the data: :mod:`~seer_envs.snapshot.whole` (the bytes format,
:class:`Snapshot`, and the capture and restore of a whole batch) and
:mod:`~.copies` (single copies cut out of a batch and put into any slot).
The byte work is the compiled kernel :mod:`seer_envs._snapbytes` (kept
beside the package: its extension is built under that name).  The core's use
of them is :mod:`seer_envs.episode.snapshots`.

Nothing is imported here: each module is imported by its own path."""
