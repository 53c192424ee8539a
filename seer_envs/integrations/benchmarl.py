# SPDX-License-Identifier: BSD-3-Clause
"""SEER's scenarios as BenchMARL tasks, on SEER's native TorchRL env
(:mod:`seer_envs.integrations.torchrl`).

>>> from seer_envs.integrations.benchmarl import Experiment, ExperimentConfig, SeerTask
>>> task = SeerTask.PCS_HOTSPOT_V1.get_task()      # the PCS task with headroom (DEFAULT_TASK)
>>> # Experiment(task=task, algorithm_config=MappoConfig.get_from_yaml(), ...)

**Import order.**  BenchMARL 1.5.2 imports TorchRL's collector by its
pre-0.14 name (``SyncDataCollector``, see "Versions" below).  SEER's install
puts ``seer-torchrl-names.pth`` in site-packages, which gives the collector
that name whenever ``torchrl.collectors`` is imported
(:mod:`seer_envs.integrations._torchrl_names`), so ``import
benchmarl.experiment`` may come first, as in BenchMARL's own scripts.  Run
from a source tree without an install, import this module (or take
``Experiment`` and ``ExperimentConfig`` from it) first: it gives the name
itself; importing it after a failed ``benchmarl.experiment`` import also
works.

One task per scenario with a vector env (``seer_envs.views.vector.supported()``:
``SeerTask.PCS_HOTSPOT_V1``, ``SeerTask.PCS_V0``, ``SeerTask.AIRCRAFT_V0``,
``SeerTask.GOSSIP_V0``); a
task's config is the scenario's parameters (``seer list``), plus
``num_threads`` (default 1: BenchMARL's collector and torch share the
process).  ``get_task()`` without a config takes the scenario's defaults
(SEER ships no YAML in BenchMARL's tree).  BenchMARL's ``n_envs_per_worker``
copies run in one engine: the env is vectorised (``batch_size =
(copies,)``), so BenchMARL uses it as it is, with no ``SerialEnv``.  All
agents are one group, ``"agents"``; the scenario's global state is the
root ``"state"`` (MAPPO's and MASAC's centralised critics take it).

**Per-copy worlds.**  A task's config may give a per-copy field a list
of values (copy ``c`` of an env takes value ``c mod len``, so the
training env's ``n_envs_per_worker`` copies and the evaluation env's
``evaluation_episodes`` copies both take it) and a ``param_sampler`` (the
config-file form ``{field: {"uniform": [lo, hi]}}`` / ``{field:
{"choice": [...]}}``, as YAML writes it, or a callable), drawn at every
reset of every copy.  :meth:`SeerTaskClass.set_params` sets values for the
next reset of the copies of every env the task built (training and
evaluation), e.g. from a BenchMARL ``Callback`` as
``self.experiment.task.set_params(...)``: a curriculum (docs/training.md,
"Per-copy worlds").

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
import weakref

try:
    import torchrl.collectors as _collectors
except ImportError as e:
    raise ImportError("seer_envs.integrations.benchmarl needs torch, torchrl and benchmarl: "
                      'pip install torch==2.13.0 && pip install -e ".[torchrl]" && '
                      "pip install hydra-core && pip install --no-deps benchmarl==1.5.2") from e
from seer_envs.integrations._torchrl_names import alias as _alias

_alias(_collectors)      # BenchMARL 1.5.2 imports the name TorchRL used before 0.14 (module docstring)
try:
    from benchmarl.environments.common import Task, TaskClass
except ImportError as e:
    raise ImportError("seer_envs.integrations.benchmarl needs benchmarl: "
                      "pip install hydra-core && pip install --no-deps benchmarl==1.5.2 "
                      "(docs/training.md, BenchMARL)") from e
from torchrl.data import Composite

import seer_envs
from seer_envs.integrations.torchrl import torchrl_env
from seer_envs.views.vector import supported

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
        self.param_sampler = cfg.pop("param_sampler", None)
        self.params = cfg
        self.per_copy = {k: list(v) for k, v in cfg.items() if isinstance(v, (list, tuple))}
        one = {k: v[0] if k in self.per_copy and v else v for k, v in cfg.items()}
        self._config = spec.build_config(one)       # bad parameters fail here, named
        self._fields = {f.name for f in dataclasses.fields(self._config)}
        self._spec = spec
        self._check_per_copy(one)
        self._envs = weakref.WeakSet()             # every env built, for set_params

    def __getstate__(self):
        # BenchMARL pickles the task with the experiment's config; the envs it
        # built stay with this object (a restored task tracks the envs it builds)
        state = dict(self.__dict__)
        state.pop("_envs", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._envs = weakref.WeakSet()

    def _check_per_copy(self, one):
        """Per-copy lists and the sampler, checked as the vector env checks
        them (the config's own errors), before any env is built."""
        from seer_envs.episode.worlds import Sampler, per_copy_fields, refuse_field
        fields = per_copy_fields(self._spec.copies)
        for k, vs in self.per_copy.items():
            if k not in fields:
                raise refuse_field(self._config, k, fields, f"task config {k}=[...]")
            if not vs:
                raise ValueError(f"task config {k}: expected one value or a non-empty list (one per copy)")
            for v in vs:
                self._spec.build_config(dict(one, **{k: v}))
        if self.param_sampler is not None:
            Sampler(self.param_sampler, self._config, fields)

    def _action_space(self, params):
        return self._spec.copies.spaces(self._spec.build_config(params))[1]

    def get_env_fun(self, num_envs, continuous_actions, seed, device):
        params = copy.deepcopy(self.params)
        for k, vs in self.per_copy.items():        # copy c takes value c mod len
            params[k] = [vs[c % len(vs)] for c in range(num_envs)]
        if "continuous_actions" in self._fields:
            params["continuous_actions"] = bool(continuous_actions)
        has_state = self._spec.copies.state_space(self._config) is not None
        sampler = self.param_sampler

        def make():
            env = torchrl_env(self.env_id, num_envs, num_threads=self.num_threads,
                              include_state=has_state, param_sampler=sampler, **params)
            self._envs.add(env)
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

    def set_params(self, copies=None, **values):
        """Values of per-copy fields for the next reset of copies ``copies``
        (None: all) of every open env this task built (the training and
        the evaluation env; :meth:`SeerTorchRLEnv.set_params
        <seer_envs.integrations.torchrl.SeerTorchRLEnv.set_params>`); returns
        how many envs took them."""
        # The largest env first: its copies hold every combination of per-copy
        # values the others hold (copy c takes value c mod len), so a value
        # it accepts every env accepts, and a refusal changes nothing.
        envs = sorted((e for e in list(self._envs) if not e.vec.closed), key=lambda e: -e.vec.num_envs)
        if copies is None and any(isinstance(v, (list, tuple)) for v in values.values()):
            raise ValueError("set_params: a list of values (one per copy) needs copies=[...]: the task's "
                             "envs have different numbers of copies")
        if copies is not None and envs:
            ids = [copies] if isinstance(copies, int) else list(copies)
            n = min(e.vec.num_envs for e in envs)
            if any(not isinstance(c, int) or isinstance(c, bool) or not 0 <= c < n for c in ids):
                raise ValueError(f"set_params: copies must be in [0, {n - 1}] (the smallest env of the task "
                                 f"has {n} copies), got {copies!r}")
        for env in envs:
            env.set_params(copies, **values)
        return len(envs)

    def max_steps(self, env):
        mcs = self.per_copy.get("max_cycles", [self._config.max_cycles])
        return int(max(mcs))

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

#: The task the examples train by default: the PCS learning task, with load
#: that moves over the cells and the day, rush hours and the team's reward
#: (``pcs_hotspot_v1``, docs/pcs.md), where the guard follows the hour.
DEFAULT_TASK = SeerTask.PCS_HOTSPOT_V1


def __getattr__(name):
    # BenchMARL's Experiment and ExperimentConfig, imported on first use
    # (after the collector's old name is set above, whatever was imported before).
    if name in ("Experiment", "ExperimentConfig"):
        import benchmarl.experiment as experiment
        return getattr(experiment, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
