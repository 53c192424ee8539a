# SPDX-License-Identifier: BSD-3-Clause
"""SEER's vector env as a native TorchRL env (``pip install torch==2.13.0 &&
pip install -e ".[torchrl]"``).

>>> from seer_envs.integrations.torchrl import torchrl_env
>>> env = torchrl_env("pcs_v0", 16, grid_width=8, grid_height=8)   # batch_size (16,)
>>> td = env.rollout(10, break_when_any_done=False)                # (16, 10)
>>> td["next", "agents", "reward"].shape                           # copies, steps, agents, 1
torch.Size([16, 10, 64, 1])

:class:`SeerTorchRLEnv` is a ``torchrl.envs.EnvBase`` over one
:class:`~seer_envs.views.vector.SeerVectorEnv`: one engine steps every copy, and
one tensordict carries every copy's agents.  Where TorchRL's
``PettingZooWrapper`` steps single envs one by one and moves each agent's
data through dicts, here a step is one call of the vector env and its
arrays become tensors without a copy (``torch.from_numpy``: the vector env
hands out fresh arrays at every step and never writes them again).

**Layout** (TorchRL's multi-agent convention, as its VMAS env):
``batch_size = (num_envs,)``; every agent in one group (``group``,
``"agents"`` by default) with ``(num_envs, num_agents, ...)`` entries
``observation``, ``action``, ``reward`` (trailing 1), ``done``,
``terminated``, ``truncated`` (trailing 1) and ``mask``; root ``done``,
``terminated``, ``truncated`` ``(num_envs, 1)`` per copy; with
``include_state=True`` a root ``state`` ``(num_envs,) + state shape`` (the
scenario's global state, for centralised critics).

**Episode ends** (the core's rule, :mod:`seer_envs.episode.core`).  An agent's
``terminated`` / ``truncated`` / ``done`` is True at the step it ends, and
only then; from then until its copy restarts its row is out of play:
reward 0, ``mask`` False.  ``mask`` is True where the agent acts on the
observation (all False at a copy's end), as TorchRL's PettingZoo wrapper.
A copy ends when no agent is left in play: root ``truncated`` if it reached
``max_cycles``, else root ``terminated``.

**Resets** the TorchRL way: the vector env runs with ``autoreset_mode=
"disabled"``, and ``reset`` with a ``"_reset"`` entry (root ``(num_envs,
1)`` or the group's ``(num_envs, num_agents, 1)``, whole copies) restarts
only those copies (``reset_mask``), as ``rollout(...,
break_when_any_done=False)`` and TorchRL's collectors do.

**Seeds**: ``set_seed(s)`` seeds the next reset, copy ``c`` as a single
env's ``reset(seed=s + c)``; later episodes draw from each copy's
generator.  With the same seeds and actions every copy's observations and
rewards are the vector env's, bit for bit, at any thread count.

**Per-copy worlds**: a per-copy field may be a list of one value per copy
(``torchrl_env("aircraft_v0", 4, wind_sigma=[0.0, 0.5, 1.0, 1.5])``) and
``param_sampler`` draws per-copy values at every reset of every copy, as
:func:`seer_envs.vector_env` takes them; :meth:`SeerTorchRLEnv.set_params`
sets values for each named copy's next reset (a TorchRL ``"_reset"`` of
that copy), and :attr:`SeerTorchRLEnv.params` holds the values in force
(docs/training.md, "Per-copy worlds").  A ``TransformedEnv`` passes both
through to this env.
"""

import numpy as np

try:
    import torch
    from tensordict import TensorDict
    from torchrl.data import Bounded, Categorical, Composite, Unbounded
    from torchrl.envs import EnvBase
except ImportError as e:          # the optional extra
    raise ImportError(
        "seer_envs.integrations.torchrl needs torch and torchrl: "
        'pip install torch==2.13.0 && pip install -e ".[torchrl]"') from e

from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from seer_envs.episode.arguments import check_seed
from seer_envs.episode.step import MASK_KEY
from seer_envs.views.vector import SeerVectorEnv

__all__ = ["torchrl_env", "SeerTorchRLEnv"]


def torchrl_env(env_id, num_envs, num_threads="auto", group="agents", include_state=False,
                param_sampler=None, **params):
    """``num_envs`` copies of the registered env ``env_id`` as a TorchRL env
    (:class:`SeerTorchRLEnv` over ``seer_envs.vector_env(env_id, num_envs,
    autoreset_mode="disabled", ...)``); ``params`` are the env's config
    fields, a per-copy field a list of one value per copy if need be;
    ``param_sampler`` draws per-copy values at every reset of every copy."""
    vec = SeerVectorEnv(env_id, num_envs, num_threads=num_threads, autoreset_mode="disabled",
                        param_sampler=param_sampler, **params)
    return SeerTorchRLEnv(vec, group=group, include_state=include_state)


def _spec(space, lead, device):
    """A TorchRL spec of one agent's ``space`` batched to ``lead + shape``."""
    if isinstance(space, spaces.Discrete):
        if space.start != 0:
            raise ValueError(f"a Discrete action space must start at 0, got start={space.start}")
        return Categorical(int(space.n), shape=lead, dtype=torch.int64, device=device)
    if isinstance(space, spaces.Box):
        shape = lead + tuple(space.shape)
        dtype = getattr(torch, np.dtype(space.dtype).name)
        low = torch.as_tensor(np.broadcast_to(space.low, shape).copy(), dtype=dtype)
        high = torch.as_tensor(np.broadcast_to(space.high, shape).copy(), dtype=dtype)
        if torch.isfinite(low).all() and torch.isfinite(high).all():
            return Bounded(low, high, shape=shape, dtype=dtype, device=device)
        return Unbounded(shape=shape, dtype=dtype, device=device)
    raise TypeError(f"unsupported space {space!r}: SEER's TorchRL env takes Discrete and Box spaces")


class SeerTorchRLEnv(EnvBase):
    """A TorchRL env over a :class:`~seer_envs.views.vector.SeerVectorEnv` built
    with ``autoreset_mode="disabled"`` (module docstring: layout, episode
    ends, resets, seeds).

    Parameters
    ----------
    vec : SeerVectorEnv
        The copies (``seer_envs.vector_env(..., autoreset_mode="disabled")``);
        this env owns it and closes it.
    group : str
        The name of the one agent group (``"agents"``).
    include_state : bool
        Add the scenario's global state (``vec.state()``) as root
        ``"state"``, for a centralised critic (MAPPO).
    device : str or torch.device
        Where the tensors go; SEER runs on the CPU.
    """

    batch_locked = True

    def __init__(self, vec, group="agents", include_state=False, device="cpu"):
        if not isinstance(vec, SeerVectorEnv):
            raise TypeError(f"vec must be a SeerVectorEnv (seer_envs.vector_env(...)), "
                            f"got {type(vec).__name__}")
        if vec.autoreset_mode != AutoresetMode.DISABLED:
            raise ValueError('vec must be built with autoreset_mode="disabled": TorchRL resets ended '
                             f"copies itself (reset with '_reset'); got {vec.autoreset_mode.name}")
        if not isinstance(group, str) or not group:
            raise TypeError(f"group must be a non-empty str, got {group!r}")
        if include_state not in (True, False):
            raise TypeError(f"include_state must be a bool, got {include_state!r}")
        if include_state and getattr(vec, "single_state_space", None) is None:
            raise ValueError(f"include_state=True, but {vec.env_id} declares no global state")
        super().__init__(device=device, batch_size=torch.Size([vec.num_envs]))
        self.vec = vec
        self.group = group
        self.include_state = include_state
        self.group_map = {group: list(vec.possible_agents)}
        E, A = vec.num_envs, vec.num_agents
        self._pending_seed = None
        self._make_specs(E, A)

    def _make_specs(self, E, A):
        dev = self.device
        obs = Composite({"observation": _spec(self.vec.single_observation_space, (E, A), dev),
                         "mask": Categorical(2, shape=(E, A), dtype=torch.bool, device=dev)},
                        shape=(E, A), device=dev)
        observation = Composite({self.group: obs}, shape=(E,), device=dev)
        if self.include_state:
            observation["state"] = _spec(self.vec.single_state_space, (E,), dev)
        self.observation_spec = observation
        self.action_spec = Composite(
            {self.group: Composite({"action": _spec(self.vec.single_action_space, (E, A), dev)},
                                   shape=(E, A), device=dev)}, shape=(E,), device=dev)
        self.reward_spec = Composite(
            {self.group: Composite({"reward": Unbounded(shape=(E, A, 1), dtype=torch.float32,
                                                        device=dev)}, shape=(E, A), device=dev)},
            shape=(E,), device=dev)

        def flags(shape):
            return {k: Categorical(2, shape=shape, dtype=torch.bool, device=dev)
                    for k in ("done", "terminated", "truncated")}
        done = Composite(flags((E, 1)), shape=(E,), device=dev)
        done[self.group] = Composite(flags((E, A, 1)), shape=(E, A), device=dev)
        self.done_spec = done

    @property
    def num_agents(self):
        """Agents per copy."""
        return self.vec.num_agents

    # --- per-copy worlds ----------------------------------------------------------

    @property
    def params(self):
        """Each copy's values of the per-copy fields in force: field -> array ``(num_envs,)``."""
        return self.vec.params

    @property
    def per_copy_fields(self):
        """The config fields that may take one value per copy."""
        return self.vec.per_copy_fields

    def set_params(self, copies=None, **values):
        """Values of per-copy fields for the next reset of each copy in
        ``copies`` (None: every copy): the next ``reset`` that names it in
        ``"_reset"`` (a collector's reset of an ended copy) or resets all.
        One value, or one per named copy; checked now with the config's own
        errors, nothing changes on a refusal (:meth:`SeerVectorEnv.set_params
        <seer_envs.views.vector.SeerVectorEnv.set_params>`)."""
        self.vec.set_params(copies, **values)

    def set_param_sampler(self, sampler):
        """The parameter sampler drawn at every later reset of every copy (None: none)."""
        self.vec.set_param_sampler(sampler)

    # --- TorchRL's hooks ----------------------------------------------------------

    def _set_seed(self, seed):
        if seed is not None:
            check_seed(seed)
            seed = int(seed)
        self._pending_seed = seed

    def _copies_to_reset(self, tensordict):
        """The copies a ``"_reset"`` entry names (None: every copy)."""
        if tensordict is None:
            return None
        E, A = self.vec.num_envs, self.vec.num_agents
        mask = None
        root = tensordict.get("_reset", None)
        if root is not None:
            mask = root.reshape(E).cpu().numpy().astype(bool)
        sub = tensordict.get((self.group, "_reset"), None)
        if sub is not None:
            rows = self.vec.core.whole_copies(sub.reshape(E, A).cpu().numpy().astype(bool),
                                              f"'_reset' of group {self.group!r}")
            mask = rows if mask is None else mask | rows
        return mask

    def _reset(self, tensordict=None, **kwargs):
        vec = self.vec
        E, A = vec.num_envs, vec.num_agents
        mask = self._copies_to_reset(tensordict)
        seed = self._pending_seed
        self._pending_seed = None
        started = vec.core.started and not vec.closed
        if mask is None or not started or mask.all():
            obs, info = vec.reset(seed=seed)
            self._state = vec.state() if self.include_state else None
        else:
            idx = np.flatnonzero(mask)
            obs, info = vec.reset(seed=seed, options={"reset_mask": mask})
            if self.include_state:       # the other copies' state as last returned
                self._state = self._state.copy()
                self._state[idx] = vec.state()[idx]
        zeros = torch.zeros((E, A, 1), dtype=torch.bool, device=self.device)
        group = {"observation": torch.from_numpy(obs), "mask": torch.from_numpy(info[MASK_KEY]),
                 "done": zeros, "terminated": zeros.clone(), "truncated": zeros.clone()}
        root = torch.zeros((E, 1), dtype=torch.bool, device=self.device)
        out = {self.group: TensorDict(group, batch_size=(E, A), device=self.device),
               "done": root, "terminated": root.clone(), "truncated": root.clone()}
        if self.include_state:
            out["state"] = torch.from_numpy(self._state)
        return TensorDict(out, batch_size=(E,), device=self.device)

    def _step(self, tensordict):
        core = self.vec.core
        E, A = core.num_copies, core.num_agents
        action = tensordict.get((self.group, "action"))
        s = core.step(core.check_step(action.detach().cpu().numpy()))     # a view for a CPU tensor
        root_term, root_trunc = core.end_kind(s.ended, s.trunc)
        root_done = root_term | root_trunc
        group = {"observation": torch.from_numpy(s.obs),
                 "reward": torch.from_numpy(s.rew).unsqueeze(-1),
                 "mask": torch.from_numpy(s.mask),
                 "done": torch.from_numpy(s.term | s.trunc).unsqueeze(-1),
                 "terminated": torch.from_numpy(s.term).unsqueeze(-1),
                 "truncated": torch.from_numpy(s.trunc).unsqueeze(-1)}
        # separate arrays: TorchRL may write one flag in place
        out = {self.group: TensorDict(group, batch_size=(E, A), device=self.device),
               "done": torch.from_numpy(root_done.copy()).unsqueeze(-1),
               "terminated": torch.from_numpy(root_term.copy()).unsqueeze(-1),
               "truncated": torch.from_numpy(root_trunc.copy()).unsqueeze(-1)}
        if self.include_state:
            self._state = self.vec.state()
            out["state"] = torch.from_numpy(self._state)
        return TensorDict(out, batch_size=(E,), device=self.device)

    def close(self, *, raise_if_closed=True):
        """Close the vector env (its engine) and this env."""
        vec = self.__dict__.get("vec")     # absent when __init__ failed
        if vec is not None and not vec.closed:
            vec.close()
        super().close(raise_if_closed=raise_if_closed)
