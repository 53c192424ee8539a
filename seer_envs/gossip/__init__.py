# SPDX-License-Identifier: BSD-3-Clause
"""Gossip scenario: rumours spreading on a ring (docs/new_scenario.md).

Not one of a scenario's files: the registry finds ``spec.py`` without it.
It keeps, for one release, the names this package once exported
(``GossipConfig``, ``GossipEnv``); each warns and names its new home."""

import importlib
import warnings

_OLD = {"GossipConfig": "seer_envs.gossip.config.GossipConfig",
        "GossipEnv": "seer_envs.make('gossip_v0', ...) (its class: seer_envs.get('gossip_v0').env)"}


def __getattr__(name):
    if name not in _OLD:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"seer_envs.gossip.{name} is deprecated: use {_OLD[name]} "
                  "(the old name goes away in the next release)", DeprecationWarning, stacklevel=2)
    if name == "GossipConfig":
        return importlib.import_module("seer_envs.gossip.config").GossipConfig
    from seer_envs import get
    return get("gossip_v0").env
