# SPDX-License-Identifier: BSD-3-Clause
"""What one step of the episode core hands a view (:class:`Step`), and the
keys of the infos every view writes (the episode statistics, the in-play
mask, each copy's per-copy parameter values)."""

import numpy as np

#: The key of the episode statistics in every view's infos.
EPISODE_KEY = "seer_episode"
#: The key of the in-play mask in every view (True: the agent acts on the observation).
MASK_KEY = "mask"
#: The key of each copy's per-copy parameter values in reset infos, and in
#: the infos of a step where copies restarted (with ``"_seer_params"``:
#: those copies).
PARAMS_KEY = "seer_params"


class Step:
    """What one step of the core hands a view: ``obs`` ``(copies, agents,
    ...)`` float32, ``rew`` float32, ``term`` / ``trunc`` bool ``(copies,
    agents)`` (each agent's end, reported once), ``mask`` (agents in play at
    ``obs``), ``ended`` (copies whose episode ended at this step, or None),
    ``final_obs`` (``SAME_STEP``: the ending copies' last observations, or
    None) and ``stats`` (``(returns, lengths)`` when an agent ended, else
    None) and ``restarted`` (copies that started an episode within this
    step, or None) with ``params`` (then each copy's per-copy values): the
    rows of the copies stepped, arrays the view owns."""

    __slots__ = ("obs", "rew", "term", "trunc", "_mask", "ended", "final_obs", "stats", "restarted", "params")

    def __init__(self, obs, rew, term, trunc, mask, ended, final_obs, stats, restarted=None, params=None):
        self.obs, self.rew, self.term, self.trunc, self._mask = obs, rew, term, trunc, mask
        self.ended, self.final_obs, self.stats = ended, final_obs, stats
        self.restarted, self.params = restarted, params

    @property
    def mask(self):
        """Agents in play at ``obs`` (a fresh array, made when first read:
        ``mask=None`` at construction says every agent is in play)."""
        m = self._mask
        if m is None:
            m = self._mask = np.ones(self.term.shape, bool)
        return m

    def infos(self):
        """Gymnasium-style infos of the multi-agent arrays: the mask always;
        when agents ended, ``"seer_episode"`` ``{"r", "l"}`` ``(copies,
        agents)`` (final for the agents whose flag is set) with
        ``"_seer_episode"`` (the copies holding such agents, Gymnasium's
        per-sub-env mask); ``"final_obs"`` / ``"_final_obs"`` under
        ``SAME_STEP``."""
        infos = {MASK_KEY: self.mask}
        if self.stats is not None:
            infos[EPISODE_KEY] = {"r": self.stats[0], "l": self.stats[1]}
            infos["_" + EPISODE_KEY] = (self.term | self.trunc).any(axis=1)
        if self.final_obs is not None:
            infos["final_obs"], infos["_final_obs"] = self.final_obs, self.ended.copy()
        if self.restarted is not None:
            infos[PARAMS_KEY], infos["_" + PARAMS_KEY] = self.params, self.restarted
        return infos
