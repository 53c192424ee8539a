# SPDX-License-Identifier: BSD-3-Clause
"""SEER's environments: PettingZoo ParallelEnvs on the SEER runtime.

>>> import seer_envs
>>> sorted(seer_envs.registry())
['aircraft_v0', 'pcs_v0']
>>> env = seer_envs.make("pcs_v0", grid_width=4, grid_height=4)
"""

import importlib

_REGISTRY = {
    "aircraft_v0": ("seer_envs.aircraft_v0", "Aircraft: UAV swarm control (compute-heavy events)"),
    "pcs_v0": ("seer_envs.pcs_v0", "PCS: cellular channel management (communication-heavy events)"),
}


def registry():
    """Registered env ids -> one-line descriptions."""
    return {k: v[1] for k, v in _REGISTRY.items()}


def module(env_id):
    """The PettingZoo-style module of a registered env id."""
    if env_id not in _REGISTRY:
        raise ValueError(f"unknown env {env_id!r}; registered: {', '.join(sorted(_REGISTRY))}")
    return importlib.import_module(_REGISTRY[env_id][0])


def make(env_id, aec=False, **kwargs):
    """Build a registered env: the ParallelEnv, or the AEC form with ``aec=True``."""
    mod = module(env_id)
    return mod.env(**kwargs) if aec else mod.parallel_env(**kwargs)
