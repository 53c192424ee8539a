# SPDX-License-Identifier: BSD-3-Clause
"""SEER's scenarios as BenchMARL tasks, on SEER's native TorchRL env
(:mod:`seer_envs.integrations.torchrl`).

>>> from seer_envs.integrations.benchmarl import Experiment, ExperimentConfig, SeerTask
>>> task = SeerTask.PCS_HOTSPOT_V0.get_task()      # the PCS task with headroom (DEFAULT_TASK)
>>> # Experiment(task=task, algorithm_config=MappoConfig.get_from_yaml(), ...)

**Import order.**  ``from benchmarl.experiment import Experiment`` on its
own fails with TorchRL 0.14 (``ImportError: cannot import name
'SyncDataCollector'``, see "Versions" below) unless this module was imported
first.  Take ``Experiment`` and ``ExperimentConfig`` from this module (as
above): it gives TorchRL's collector the old name before importing them, so
the order of imports no longer matters; importing this module after a
failed ``benchmarl.experiment`` import also works.

One task per scenario with a vector env (``seer_envs.vector.supported()``:
``SeerTask.PCS_HOTSPOT_V0``, ``SeerTask.PCS_V0``, ``SeerTask.AIRCRAFT_V0``,
``SeerTask.GOSSIP_V0``); a
task's config is the scenario's parameters (``seer list``), plus
``num_threads`` (default 1: BenchMARL's collector and torch share the
process).  ``get_task()`` without a config takes the scenario's defaults
(SEER ships no YAML in BenchMARL's tree).  BenchMARL's ``n_envs_per_worker``
copies run in one engine: the env is vectorised (``batch_size =
(copies,)``), so BenchMARL uses it as it is, with no ``SerialEnv``.  All
agents are one group, ``"agents"``; the scenario's global state is the
root ``"state"`` (MAPPO's and MASAC's centralised critics take it).

**Versions.**  BenchMARL 1.5.2 (the newest on PyPI) declares
``torchrl>=0.10,<0.12``, while SEER's ``torchrl`` extra takes TorchRL 0.14;
and it imports ``torchrl.collectors.SyncDataCollector``, which TorchRL 0.14
calls ``Collector``.  With TorchRL 0.14 installed, BenchMARL has to be
installed without its dependencies (``pip install hydra-core && pip install
--no-deps benchmarl==1.5.2``, as README's RL line does), and this module
gives TorchRL's collector its old name before importing BenchMARL
(docs/training.md, "BenchMARL").
"""

import copy
import dataclasses

try:
    import torchrl.collectors as _collectors
except ImportError as e:
    raise ImportError("seer_envs.integrations.benchmarl needs torch, torchrl and benchmarl: "
                      'pip install torch==2.13.0 && pip install -e ".[torchrl]" && '
                      "pip install hydra-core && pip install --no-deps benchmarl==1.5.2") from e
if not hasattr(_collectors, "SyncDataCollector") and hasattr(_collectors, "Collector"):
    # BenchMARL 1.5.2 imports the name TorchRL used before 0.14 (module docstring).
    _collectors.SyncDataCollector = _collectors.Collector
try:
    from benchmarl.environments.common import Task, TaskClass
except ImportError as e:
    raise ImportError("seer_envs.integrations.benchmarl needs benchmarl: "
                      "pip install hydra-core && pip install --no-deps benchmarl==1.5.2 "
                      "(docs/training.md, BenchMARL)") from e
from torchrl.data import Composite

import seer_envs
from seer_envs.integrations.torchrl import torchrl_env
from seer_envs.vector import supported

__all__ = ["DEFAULT_TASK", "Experiment", "ExperimentConfig", "SeerTask", "SeerTaskClass"]


class SeerTaskClass(TaskClass):
    """A BenchMARL task over SEER's TorchRL env: ``name`` is the scenario id
    in capitals (``"PCS_V0"``), ``config`` its parameters (and
    ``num_threads``)."""

    def __init__(self, name, config):
        super().__init__(name, config)
        self.env_id = name.lower()
        spec = seer_envs.get(self.env_id)
        cfg = dict(self.config)
        self.num_threads = cfg.pop("num_threads", 1)
        self.params = cfg
        self._config = spec.build_config(cfg)       # bad parameters fail here, named
        self._fields = {f.name for f in dataclasses.fields(self._config)}
        self._spec = spec

    def _action_space(self, params):
        return self._spec.copies.spaces(self._spec.build_config(params))[1]

    def get_env_fun(self, num_envs, continuous_actions, seed, device):
        params = copy.deepcopy(self.params)
        if "continuous_actions" in self._fields:
            params["continuous_actions"] = bool(continuous_actions)
        has_state = self._spec.copies.state_space(self._config) is not None

        def make():
            env = torchrl_env(self.env_id, num_envs, num_threads=self.num_threads,
                              include_state=has_state, **params)
            if str(device) != "cpu":
                env = env.to(device)
            if seed is not None:
                env.set_seed(seed)
            return env
        return make

    def _supports(self, continuous):
        if "continuous_actions" in self._fields:
            return True
        return hasattr(self._action_space(self.params), "n") != continuous

    def supports_continuous_actions(self):
        return self._supports(True)

    def supports_discrete_actions(self):
        return self._supports(False)

    def max_steps(self, env):
        return int(self._config.max_cycles)

    def has_render(self, env):
        return False

    def group_map(self, env):
        return env.group_map

    def observation_spec(self, env):
        spec = env.full_observation_spec_unbatched.clone()
        for group in self.group_map(env):
            for key in list(spec[group].keys()):
                if key != "observation":
                    del spec[group][key]
        if "state" in spec.keys():
            del spec["state"]
        return spec

    def state_spec(self, env):
        spec = env.full_observation_spec_unbatched
        if "state" in spec.keys():
            return Composite({"state": spec["state"].clone()})
        return None

    def info_spec(self, env):
        return None

    def action_spec(self, env):
        return env.full_action_spec_unbatched

    def action_mask_spec(self, env):
        return None

    @staticmethod
    def env_name():
        return "seer"


class _SeerTaskBase(Task):
    @staticmethod
    def associated_class():
        return SeerTaskClass

    def get_task(self, config=None):
        """The task with ``config`` (the scenario's parameters); None: the
        scenario's defaults."""
        return SeerTaskClass(self.name, {} if config is None else dict(config))


#: One member per scenario with a vector env (``PCS_V0``, ``AIRCRAFT_V0``, ...).
SeerTask = _SeerTaskBase("SeerTask", [sid.upper() for sid in supported()])

#: The task the examples train by default: PCS with load that moves over the
#: cells and the day (``pcs_hotspot_v0``, docs/pcs.md), where the guard is a
#: state-dependent decision.
DEFAULT_TASK = SeerTask.PCS_HOTSPOT_V0


def __getattr__(name):
    # BenchMARL's Experiment and ExperimentConfig, imported on first use
    # (after the collector's old name is set above, whatever was imported before).
    if name in ("Experiment", "ExperimentConfig"):
        import benchmarl.experiment as experiment
        return getattr(experiment, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
