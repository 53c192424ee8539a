# SPDX-License-Identifier: BSD-3-Clause
"""The one view protocol (:class:`ViewProtocol`, mixed into
:class:`seer_envs.episode.core.EpisodeCore`): what every view calls around
the core's ``reset`` and ``step`` instead of writing it again.

- :meth:`~ViewProtocol.check_step`, the step preamble, in one order: the
  core is steppable (open, not used by another thread, not interrupted,
  reset), the copies stepping have not ended, then the actions are valid
  (:meth:`~ViewProtocol.check_actions`, or the view's own form through
  :func:`~seer_envs.episode.actions.check_action_dict`); errors name the copy
  and the agent.
- :meth:`~ViewProtocol.end_kind`: whether each copy that ended at a step
  ended terminated or truncated (RLlib's and TorchRL's per-copy flags).
- :meth:`~ViewProtocol.reset_mask` (the reset options) and
  :meth:`~ViewProtocol.whole_copies` (a per-agent reset mask holds whole
  copies); :meth:`~ViewProtocol.seeds`, the seed rule.
"""

import numpy as np
from gymnasium.vector import AutoresetMode

from seer_envs.episode.actions import check_action_dict, check_actions
from seer_envs.episode.arguments import check_seed

#: The reset options the core accepts; any other key is a ValueError.
RESET_OPTIONS = ("reset_mask", "params")
#: Keys accepted and ignored: PettingZoo's conformance test
#: (``pettingzoo.test.parallel_api_test``) resets with ``{"options": 1}``.
_IGNORED_OPTIONS = ("options",)


class ViewProtocol:
    """The view protocol part of the core: needs ``num_copies``,
    ``num_agents``, ``possible_agents``, ``action_spec``, ``autoreset_mode``,
    ``batch`` and the episode flags (``started``, ``closed``, ``broken``,
    ``ended``)."""

    # --- the step preamble -----------------------------------------------------------

    def check_step(self, actions, ids=None, lead=None, label=None, rows=None, check=None):
        """Every view's checks before a step, in one order: the core is
        steppable (:meth:`check_steppable`), the copies stepping (``ids``,
        sorted; None: every copy) have not ended (:meth:`check_not_ended`),
        then the actions: ``check(actions)`` for a view's own form (a dict,
        :meth:`check_action_dicts`), else :meth:`check_actions` (``lead``,
        ``label``, ``rows``: the view's rows, as there).  Returns the
        validated actions, for :meth:`~seer_envs.episode.core.EpisodeCore.step`."""
        self.check_steppable()
        if self._any_ended:
            self.check_not_ended(ids)
        if check is not None:
            return check(actions)
        return self.check_actions(actions, ids, lead, label, rows)

    def check_action_dicts(self, actions, out, skip=None):
        """One dict ``agent -> action`` per copy, of exactly the agents in
        play at the last observation (:attr:`mask`), validated into ``out``
        ``(copies, agents, ...)`` by the one dict validator; ``skip``: copies
        whose dicts are ignored (restarting).  Errors name the copy and the
        agent (``"copy 1: missing action for agent 'x'"``)."""
        E, names = self.num_copies, self.possible_agents
        if not hasattr(actions, "__len__") or len(actions) != E:
            got = len(actions) if hasattr(actions, "__len__") else type(actions).__name__
            raise ValueError(f"actions must hold one dict per copy ({E}), got {got}")
        mask, index, n, spec = self.mask, self._agent_index, self.num_agents, self.action_spec
        for c, d in enumerate(actions):
            if skip is not None and skip[c]:
                continue
            rows = np.flatnonzero(mask[c])
            live = [names[j] for j in rows]
            try:
                check_action_dict(d, live, set(live), rows, index, n, spec, out[c])
            except ValueError as e:
                raise ValueError(f"copy {c}: {e}") from None
        return out

    @staticmethod
    def end_kind(ended, trunc):
        """How each copy's episode ended at a step: ``(terminated,
        truncated)``, bool arrays ``(copies,)``.  ``ended``: the copies
        whose episode ended (None: none); ``trunc``: the step's truncations
        ``(copies, agents)``.  A copy ended truncated when an agent ending
        then was truncated (the copy reached its ``max_cycles``), else
        terminated (no agent left in play); both False for a copy going on."""
        if ended is None:
            none = np.zeros(len(trunc), bool)
            return none, none.copy()
        truncated = ended & trunc.any(axis=1)
        return ended & ~truncated, truncated

    # --- the rules of the arguments ------------------------------------------------

    def seeds(self, seed, stride=1):
        """The seed rule: None, or one int-or-None per copy.  An int ``s``
        seeds copy ``c`` with ``s * stride + c`` (``stride`` > 1: RLlib's
        runners, seeded ``seed + w``, so no two copies of any runners share
        a stream)."""
        if seed is None:
            return None
        E = self.num_copies
        if isinstance(seed, (list, tuple, np.ndarray)):
            seeds = list(seed)
            if len(seeds) != E:
                raise ValueError(f"seed must be an int, None or {E} seeds (one per copy), got {len(seeds)}")
            for s in seeds:
                if s is not None:
                    check_seed(s)
            return [None if s is None else int(s) for s in seeds]
        check_seed(seed)
        return [int(seed) * stride + c for c in range(E)]

    def reset_mask(self, options):
        """The reset options: None, or the copies a ``"reset_mask"`` names.
        An unknown key is a ValueError naming it and the accepted ones."""
        if options is None:
            return None
        if not isinstance(options, dict):
            raise TypeError(f"reset options must be a dict or None, got {type(options).__name__}")
        for key in options:
            if key not in RESET_OPTIONS and key not in _IGNORED_OPTIONS:
                raise ValueError(f"unknown reset option {key!r}; the accepted options are "
                                 + ", ".join(map(repr, RESET_OPTIONS)))
        mask = options.get("reset_mask")
        if mask is None:
            return None
        m = np.asarray(mask)
        if m.dtype != bool or m.shape != (self.num_copies,):
            raise ValueError(f"options['reset_mask'] must be a bool array of shape ({self.num_copies},), "
                             f"got {m.dtype} {m.shape}")
        if self.autoreset_mode != AutoresetMode.DISABLED:
            raise ValueError("options['reset_mask'] is for autoreset_mode DISABLED; this env "
                             f"auto-resets ({self.autoreset_mode.name})")
        return m.copy()

    def check_actions(self, actions, ids=None, lead=None, label=None, rows=None):
        """Validated actions of every copy ``(copies, agents, ...)``, or of copies ``ids``."""
        names, spec = self.possible_agents, self.action_spec
        if lead is None:
            E = self.num_copies if ids is None else len(ids)
            lead = (E, self.num_agents)
            copy = (lambda c: c) if ids is None else (lambda c: int(ids[c]))
            label = lambda c, i: f"copy {copy(c)}, agent {names[i]!r}"      # noqa: E731
            rows = " (copies, agents)" if spec[0] == "discrete" else " (copies, agents, ...)"
        return check_actions(actions, spec, lead, label, rows or "")

    # --- the state checks ----------------------------------------------------------

    def check_open(self):
        if self.closed:
            raise RuntimeError("this env was closed; create a new one")

    def check_steppable(self, what="a step"):
        """Open, not in use by another thread, not interrupted, reset."""
        if self.closed:
            self.check_open()
        self.batch.check_free()
        if self.broken is not None:
            raise RuntimeError(f"{self.interrupted} was interrupted (KeyboardInterrupt or an error "
                               "inside the engine), so the episode state is incomplete; call reset()")
        if not self.started:
            raise RuntimeError("call reset() first")

    @property
    def interrupted(self):
        """What was interrupted, or None."""
        what = self.broken
        if what == "a step" and self.num_copies == 1:
            return f"step {int(self.batch.cycle[0]) + 1}"
        return what

    def check_not_ended(self, ids=None):
        if not self._any_ended:
            return
        ended = self.ended if ids is None else self.ended[ids]
        if ended.any():
            if self.num_copies == 1:
                raise RuntimeError("the episode has ended (all agents are done); call reset() first")
            c = int(np.flatnonzero(self.ended)[0]) if ids is None else int(ids[ended][0])
            raise RuntimeError(f"copy {c} has ended (autoreset_mode DISABLED); call "
                               "reset(options={'reset_mask': mask}) for the ended copies first")

    # --- reset checks ----------------------------------------------------------------

    def whole_copies(self, rows, what):
        """The copies a per-agent reset mask ``rows`` ``(copies, agents)``
        names: each copy's agents end and restart together, so a copy partly
        set is a ValueError naming ``what`` (the view's argument) and the copy."""
        some, every = rows.any(axis=1), rows.all(axis=1)
        if (some != every).any():
            c = int(np.flatnonzero(some != every)[0])
            raise ValueError(f"{what} must hold whole copies (the agents of a copy end and restart "
                             f"together); copy {c} is partly set")
        return some
