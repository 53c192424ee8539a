# SPDX-License-Identifier: BSD-3-Clause
"""Gossip's per-copy parameters: copy ``c`` of a vector env whose copies
have different values of a ``per_copy`` field gives, bit for bit, what the
single env built with copy ``c``'s values and seed gives, at 1, 2 and 4
threads, in every layout, across auto-resets (agents stop when they know
every rumour) and ``set_params``.  The checks every scenario owes
(``configure``'s range, reset options) are tests/envs/test_per_copy.py's."""

import dataclasses

import pytest

from seer_envs.gossip.config import GossipConfig
from seer_envs.gossip.copies import GossipCopies
from seer_test_helpers import per_copy_equals_singles

pytestmark = pytest.mark.filterwarnings("ignore:num_threads=.*exceeds:RuntimeWarning")

BASE = dict(num_agents=7, reach=2, num_rumours=6, news_interval=8.0, max_cycles=10)

#: field -> (copy 0's, copy 2's) values; copy 1 keeps the base config's.
VALUES = {
    "num_rumours": (3, 20),
    "news_interval": (2.0, 30.0),
    "jitter": (0.0, 9.0),
    "message_cost": (0.0, 1.5),
}
SEED = 3


def test_every_per_copy_field_is_tried():
    assert set(VALUES) == set(GossipCopies.per_copy)
    assert set(GossipCopies.per_copy) <= {f.name for f in dataclasses.fields(GossipConfig)}
    assert not {"num_agents", "reach", "latency", "dt", "max_cycles"} & set(GossipCopies.per_copy)


def _compare(field_values, threads, steps=25, **vkw):
    """Copy 1 keeps the base config; copies 0 and 2 take the values.
    Returns the agents that stopped, all copies together."""
    base = GossipConfig(**BASE)
    per = {f: [v0, getattr(base, f), v2] for f, (v0, v2) in field_values.items()}
    return per_copy_equals_singles("gossip_v0", BASE, per, threads, steps,
                                   lambda rng: rng.integers(0, base.num_actions, (3, base.num_agents)),
                                   SEED, **vkw).sum()


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("field", sorted(VALUES))
def test_per_copy_field_equals_single_envs(field, threads):
    assert _compare({field: VALUES[field]}, threads) > 0      # agents stopped (knew every rumour)


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("layout", [{}, {"copy_parallel": True}, {"batch_size": 2}])
def test_all_fields_at_once(threads, layout):
    assert _compare(VALUES, threads, **layout) > 0
