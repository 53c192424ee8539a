# SPDX-License-Identifier: BSD-3-Clause
"""The episode core and its rules, written once for every view:
:mod:`~seer_envs.episode.core` (:class:`EpisodeCore`: seeds, resets,
auto-reset, agents in play, returns, interrupts), :mod:`~.step` (what a step
hands a view, the infos keys), :mod:`~.actions` (action validation),
:mod:`~.arguments` (the core's argument checks), :mod:`~.worlds` (each
copy's world: per-copy parameters, the sampler), :mod:`~.snapshots` (the
core's snapshots and pickling) and :mod:`~.copying` (how an env is copied).

Nothing is imported here: the modules import each other and the layout
layer (:mod:`seer_envs.layout`), so each is imported by its own path."""
