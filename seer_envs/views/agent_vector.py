# SPDX-License-Identifier: BSD-3-Clause
"""One policy shared by every agent: :func:`agent_vector_env`, a Gymnasium
``VectorEnv`` with one sub-env per (copy, agent) pair.

>>> import numpy as np, seer_envs
>>> env = seer_envs.agent_vector_env("pcs_v0", 4, grid_width=4, grid_height=4)
>>> obs, infos = env.reset(seed=0)                  # (4 * 16, 11)
>>> obs, rew, term, trunc, infos = env.step(np.zeros(64, np.int64))

A view of the episode core (:mod:`seer_envs.episode.core`): its ``(copies,
agents)`` arrays reshaped to rows, copy ``c``'s agent ``i`` at row ``c *
agents + i``.  A row's episode is its agent's: it ends at the step the agent
stops (``terminated``) or its copy is truncated, with the return and length
to that step in ``infos["seer_episode"]`` (mask ``"_seer_episode"``).

**Rows out of play.**  A Gymnasium sub-env restarts after it ends, but an
agent that stopped inside a running copy cannot restart before its copy.
Its row therefore runs a placeholder episode from its autoreset until its
copy ends: reward 0, actions ignored, ``False`` in ``infos["mask"]``, and
``terminated`` at the copy's end, with no ``"_seer_episode"`` entry.  So
every segment between two flags is an episode, as Gymnasium's wrappers and
RLlib's runners assume, the row restarts with its copy, and no transition
crosses from a stopped agent into its next episode.  Loss code drops the
placeholder steps with the mask; ``RecordEpisodeStatistics`` counts the
placeholders too (return 0): SEER's ``infos["seer_episode"]`` holds the
agents' episodes alone.  Under ``NEXT_STEP`` an agent that stops at its
copy's second-to-last step has no room for a placeholder (its row's reset
step is its copy's last): its flag there marks an empty placeholder.
"""

import numpy as np
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space

from seer_envs.episode.copying import CopiesByReduce
from seer_envs.episode.step import EPISODE_KEY, MASK_KEY
from seer_envs.views.attributes import CopyAttributes
from seer_envs.views.vector import SeerVectorEnv

__all__ = ["agent_vector_env", "SeerAgentVectorEnv"]


def agent_vector_env(env_id, num_envs, num_threads="auto", autoreset_mode="next_step", **params):
    """A Gymnasium ``VectorEnv`` over every (copy, agent) pair of
    ``num_envs`` copies of ``env_id`` (see :class:`SeerAgentVectorEnv`)."""
    return SeerAgentVectorEnv(SeerVectorEnv(env_id, num_envs, num_threads=num_threads,
                                            autoreset_mode=autoreset_mode, **params))


class SeerAgentVectorEnv(CopiesByReduce, CopyAttributes, VectorEnv):
    """Gymnasium ``VectorEnv`` for one policy shared by every agent: each
    (copy, agent) pair is one sub-env, so ``num_envs = copies x agents``,
    observations are ``(num_envs, obs_dim)`` and actions ``(num_envs,)`` (or
    ``(num_envs,) + shape`` for a Box).

    Autoreset: the copy-level env's mode.  ``NEXT_STEP``: a copy restarts at
    the step after it ends; ``SAME_STEP``: within its ending step, with
    ``infos["final_obs"]`` ``(num_envs, obs_dim)`` and mask
    ``"_final_obs"``; ``DISABLED``: ``reset(options={"reset_mask": rows})``,
    whole copies at a time.  A bad action names its copy and agent.
    ``reset(seed=s)`` seeds copy ``c`` with ``s + c`` (``s * seed_stride +
    c`` when ``seed_stride`` is set: RLlib's runners); a list of seeds is
    one per row (a copy takes its first row's) or one per copy.

    ``render()`` (``render_mode="rgb_array"``) gives one frame per row, its
    copy's (the same array for every row of a copy, each copy drawn once):
    Gymnasium's ``RecordVideo`` tiles every row's frame, so
    ``RecordVideo(env, folder, record_first_only=True)`` records copy 0.
    ``get_attr`` / ``set_attr`` / ``call``: Gymnasium's ``SyncVectorEnv``
    semantics, a sub-env being a row with its copy's values (a copy's rows
    set together; :mod:`seer_envs.views.attributes`).

    ``vec`` is the underlying :class:`~seer_envs.views.vector.SeerVectorEnv`
    (engine, model, statistics, snapshots).
    """

    def __init__(self, vec):
        self.closed = True              # until built: nothing for __del__ to close
        self.vec = vec
        self.core = vec.core
        self.copies, self.agents_per_copy = vec.num_envs, vec.num_agents
        self.num_envs = vec.num_envs * vec.num_agents
        self.single_observation_space = vec.single_observation_space
        self.single_action_space = vec.single_action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.autoreset_mode = vec.autoreset_mode
        self.metadata = dict(vec.metadata)
        self._rows_per_copy = vec.num_agents
        self.render_mode = vec.render_mode
        self._mask = vec.core.mask if vec.core.started else None    # in play at the last observations
        names, A = vec.possible_agents, vec.num_agents
        self._label = lambda j: f"copy {j // A}, agent {names[j % A]!r}"       # a row's, in errors
        self.closed = False

    def reset(self, *, seed=None, options=None):
        """``seed``: an int, or one per row or per copy; ``options={"reset_mask":
        rows}`` under ``DISABLED`` (whole copies), ``{"params": {...}}`` as the
        copy-level env takes them.  Returns ``(obs, {"mask"})``, one entry per
        row; each copy's world is :attr:`params` (the infos keep one set of
        keys, which TorchRL's ``GymWrapper`` reads from the reset)."""
        C, A, N = self.copies, self.agents_per_copy, self.num_envs
        if isinstance(seed, (list, tuple, np.ndarray)) and len(seed) == N and A > 1:
            seed = list(seed)[::A]
        if isinstance(options, dict) and options.get("reset_mask") is not None:
            m = np.asarray(options["reset_mask"])
            if m.dtype != bool or m.shape != (N,):
                raise ValueError(f"options['reset_mask'] must be a bool array of shape ({N},), "
                                 f"got {m.dtype} {m.shape}")
            options = dict(options, reset_mask=self.core.whole_copies(m.reshape(C, A), "options['reset_mask']"))
        obs, info = self.vec.reset(seed=seed, options=options)
        self._mask = info[MASK_KEY]
        return obs.reshape(N, -1), {MASK_KEY: info[MASK_KEY].reshape(N)}

    @property
    def params(self):
        """Each copy's values of the per-copy fields: field -> array ``(copies,)``."""
        return self.vec.params

    def set_params(self, copies=None, **values):
        """Per-copy values for the next reset of each copy in ``copies``
        (copy ids, not rows; None: all): see
        :meth:`seer_envs.views.vector.SeerVectorEnv.set_params`."""
        self.vec.set_params(copies, **values)

    def step(self, actions):
        C, A, N = self.copies, self.agents_per_copy, self.num_envs
        core = self.core
        self.vec._check_nothing_in_flight("step()")
        a = core.check_step(actions, lead=(N,), label=self._label, rows=" (one row per copy and agent)")
        before = core.mask              # in play at the last observations (from the core: Ctrl-C safe)
        s = core.step(a.reshape((C, A) + a.shape[1:]))
        self._mask = s.mask
        infos = {MASK_KEY: s.mask.reshape(N)}
        term = s.term
        if s.stats is not None:
            infos[EPISODE_KEY] = {"r": s.stats[0].reshape(N), "l": s.stats[1].reshape(N)}
            infos["_" + EPISODE_KEY] = (s.term | s.trunc).reshape(N)
        if s.ended is not None:         # placeholders of stopped agents end with their copy
            term = term | (s.ended[:, None] & ~before)
        if s.final_obs is not None:
            infos["final_obs"] = s.final_obs.reshape(N, -1)
            infos["_final_obs"] = np.repeat(s.ended, A)
        return s.obs.reshape(N, -1), s.rew.reshape(N), term.reshape(N), s.trunc.reshape(N), infos

    @property
    def seed_stride(self):
        """``reset(seed=s)`` seeds copy ``c`` with ``s * seed_stride + c``."""
        return self.vec.seed_stride

    @seed_stride.setter
    def seed_stride(self, value):
        self.vec.seed_stride = int(value or 1)

    _vec = property(lambda self: self.vec)          # CopyAttributes: a sub-env is a row

    def render(self):
        """``render_mode="rgb_array"``: one H x W x 3 frame per row, its
        copy's (the same array for a copy's rows), as a tuple; else None."""
        frames = self.vec.render()
        if frames is None:
            return None
        return tuple(f for f in frames for _ in range(self.agents_per_copy))

    def close_extras(self, **kwargs):
        self.vec.close()

    def __reduce__(self):
        return (_restore_agent_vector, (type(self), self.vec, self.closed))


def _restore_agent_vector(cls, vec, closed):
    env = cls(vec)
    if closed:
        env.close()
    return env
