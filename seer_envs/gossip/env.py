# SPDX-License-Identifier: BSD-3-Clause
"""Gossip — rumours spreading on a ring (``gossip_v0``), the worked example
of docs/new_scenario.md.

Agents ``agent_0 .. agent_{n-1}`` sit on a ring.  Each hears random rumours
by itself now and then; at every step each agent picks whom to message
(``Discrete(2 * reach + 1)``: 0 = quiet, ``k`` in 1..reach = the agent k
places clockwise, ``reach + k`` = k places anticlockwise).  A message
carries every rumour the sender knows and arrives ``latency`` plus a
uniform ``[0, jitter)`` later.  Observation (``Box(0, inf, (5,))``): own
share of rumours known, rumours learned and messages received this step,
and the two ring neighbours' shares.  Reward: rumours learned in the step
minus ``message_cost`` per message sent.  An agent terminates when it knows
every rumour; truncation after ``max_cycles`` steps.
"""

import sys

from seer_envs.views.parallel import SeerParallelEnv
from seer_envs.gossip.copies import OBS_LAYOUT


class GossipEnv(SeerParallelEnv):
    """The gossip ParallelEnv; the template supplies the lifecycle, both
    APIs, copies and interrupt safety, :class:`~seer_envs.gossip.copies.GossipCopies`
    the agents, spaces, actions and boundary."""

    metadata = {"render_modes": ["human", "rgb_array"], "name": "gossip_v0",
                "is_parallelizable": True, "render_fps": 4}
    obs_layout = OBS_LAYOUT
    _scenario_id = "gossip_v0"

    def _print_map(self):
        shades = " .:-=+*#%@"
        share = self._model.n_known / self.config.num_rumours
        print(f"gossip t={self._cycle * self.config.dt:g} s  "
              + "".join(shades[min(9, int(v * 10))] for v in share[:120]), file=sys.stdout)
