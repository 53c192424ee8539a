# SPDX-License-Identifier: BSD-3-Clause
"""Where the copies run: :mod:`~seer_envs.layout.batch` (:class:`Batch`,
copies in one engine), :mod:`~.groups` (groups of copies, an engine each),
:mod:`~.core_layout` (how the episode core chooses between them, STPA's
thread choice), :mod:`~.plans` (a step's plan of runs) and :mod:`~.guard`
(one caller at a time).

Nothing is imported here: each module is imported by its own path."""
