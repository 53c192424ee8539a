# SPDX-License-Identifier: BSD-3-Clause
"""Scenario specs: one frozen description per scenario, one registry.

A scenario package declares a :class:`ScenarioSpec` in its own ``spec.py``
and calls :func:`register`; everything else (``seer_envs.make``, the
``seer`` and ``stpa`` CLIs, the RLlib integration, the generic tests) reads
the registry, so a new scenario touches only its own folder.

Discovery: :func:`registry` imports the ``spec`` module of every package
under ``seer_runtime.models`` (PHOLD), of every package ``seer_envs`` adds
with :func:`add_search_package`, and every module named by an entry point
in the ``seer.scenarios`` group (out-of-tree scenarios).  A scenario whose
spec fails to import with ImportError (an extension not built, a typo) is
left out with a ``RuntimeWarning`` naming the module and the error.

A :class:`Run` is one opened configuration advanced one *unit* at a time
(an env step, or a slice of simulated time for a headless run); STPA's
preflight, ``stpa collect`` and the benchmarks measure runs, so they time
what a user runs.
"""

import dataclasses
import functools
import hashlib
import importlib
import os
import sys
import warnings
from typing import Any, Callable, Mapping, Optional

from seer_runtime.config import build

_SPECS = {}
#: The env_run of specs that set none (seer_envs sets its generic one at import).
_DEFAULT_ENV_RUN = []
_ENV_CLASS = []
_SEARCH = ["seer_runtime.models"]
_searched = set()


class Run:
    """An opened configuration: ``advance(n)`` runs n units; ``engine`` is
    the current Engine (an env may rebuild it at reset); ``n_entities``,
    ``n_agents``; ``workload_code`` (an STPA feature); ``units`` run so far."""

    def __init__(self, step, engine, n_entities, n_agents, workload_code=0, owner=None):
        self._step = step
        self._engine = engine          # an Engine, or a callable returning the current one
        self.n_entities = int(n_entities)
        self.n_agents = int(n_agents)
        self.workload_code = workload_code
        self.owner = owner             # the env, for a run of an env
        self.units = 0

    @property
    def engine(self):
        return self._engine() if callable(self._engine) else self._engine

    def advance(self, n=1):
        for _ in range(n):
            self._step()
            self.units += 1


def headless_run(model, num_threads, seed, unit_time, workload_code=0):
    """A :class:`Run` of ``model`` with no agents: each unit runs
    ``unit_time`` more simulated time."""
    from seer_runtime.loop import Engine
    engine = Engine(model, num_threads=num_threads, seed=seed)
    engine.init(0.0)
    state = {"t": 0.0}

    def step():
        state["t"] += unit_time
        engine.run_until(state["t"])
    return Run(step, engine, engine.num_lps, 0, workload_code)


@dataclasses.dataclass(frozen=True)
class ScenarioSpec:
    """Everything the layers above need to know about one scenario.

    id : str
        The one name used everywhere (``"pcs_v0"``, ``"phold"``).
    description : str
        One line for ``seer list``.
    config : type
        Frozen dataclass with defaults and validation (fields declared with
        :func:`seer_runtime.config.param`).
    model : type
        The :class:`seer_runtime.Scenario` subclass.
    env : type or None
        The PettingZoo ParallelEnv class (keyword arguments: config fields,
        ``num_threads``, ``render_mode``).  Optional: for a scenario with
        ``copies`` and no ``env``, :func:`register` puts in the env
        template's class for its id (``seer_envs`` provides it); None only
        for a headless-only model.
    copies : type or None
        The scenario's copies interface (``seer_envs.scenario.copies.Copies``): its
        agents, spaces, action writes, boundary and restart over a range of
        copies, which the single env, the vector env, the CLI's action
        checks, RLlib and STPA all read; None for a headless-only model.
    headless : callable or None
        ``headless(end_time=, num_threads=, seed=, choose=None, **params) -> dict``
        runs to an end time with no agents (``events``, ``wall_s``,
        ``num_threads``, ``thread_choice``, ``busy_s``, counters).
    heuristic : callable or None
        ``heuristic(env, obs_array) -> actions array``: a hand-written policy.
    test_params : mapping
        Small parameters for the generic tests (fast, all code paths).
    test_params_stopping : mapping or None
        Small parameters under which agents stop at different steps well
        before ``max_cycles`` (every agent within it): the generic tests of
        agents that leave a running episode use them too; None for a
        scenario whose agents never stop on their own.
    new_model : callable or None
        ``new_model(config) -> model``; default ``model(config)``.
    unit_time : callable or None
        ``unit_time(config) -> float``: simulated time of one headless unit;
        default ``config.dt`` where it has one, else 1.0.
    env_run : callable or None
        ``env_run(spec, config_dict, num_threads, seed) -> Run`` for the env
        form; None (the default) is ``seer_envs``' generic one (zero actions,
        re-reset when the episode ends), set with :func:`set_default_env_run`.
    workload_codes : mapping
        STPA's ``workload_code`` feature per form (``"env"``, ``"headless"``).
    headless_ignores : tuple of str
        Config fields the headless form never reads (a config file that
        sets one for a headless run is refused).
    """

    id: str
    description: str
    config: type
    model: type
    env: Optional[type] = None
    copies: Optional[type] = None
    headless: Optional[Callable] = None
    heuristic: Optional[Callable] = None
    test_params: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    test_params_stopping: Optional[Mapping[str, Any]] = None
    new_model: Optional[Callable] = None
    unit_time: Optional[Callable] = None
    env_run: Optional[Callable] = None
    workload_codes: Mapping[str, int] = dataclasses.field(default_factory=dict)
    headless_ignores: tuple = ()

    @property
    def kind(self):
        """``"env"`` when the scenario has agents, else ``"headless"``."""
        return "env" if self.env is not None else "headless"

    def build_config(self, params=None):
        """A validated config instance; unknown keys raise ValueError naming them."""
        if isinstance(params, self.config):
            return params
        return build(self.config, dict(params or {}))

    def normalize(self, params=None):
        """Full parameter dict (defaults filled, validated)."""
        return dataclasses.asdict(self.build_config(params))

    def make_model(self, params=None):
        cfg = self.build_config(params)
        return (self.new_model or self.model)(cfg)

    def spaces(self, params=None):
        """``(observation_space, action_space)`` of one agent under
        ``params``, from the copies interface alone (no model is built);
        None for a headless-only model."""
        if self.copies is None:
            return None
        return self.copies.spaces(self.build_config(params))

    def make_env(self, **kwargs):
        """The env with ``kwargs`` (config fields, ``num_threads``, ``render_mode``)."""
        if self.env is None:
            raise ValueError(f"{self.id} is a headless model: it has no env")
        return self.env(**kwargs)

    def stpa_key(self, params=None, headless=None):
        """JSON-able identity of a configuration, for STPA's cache: the
        scenario, its form, its full parameters, the package version and
        :meth:`code_hash` (a rebuilt model, another checkout or venv does
        not reuse a thread choice measured on other code)."""
        return [self.id, self._form(headless), self.normalize(params),
                {"version": package_version(), "code": self.code_hash()}]

    def code_hash(self):
        """A hash of the code that runs this scenario: the files of the
        modules of its model, config, copies and env, and of the runtime's
        event loop (the compiled extensions as built)."""
        mods = [getattr(x, "__module__", None) for x in (self.model, self.config, self.copies, self.env)]
        mods.append("seer_runtime.loop")
        files = sorted({f for f in (getattr(sys.modules.get(m), "__file__", None) for m in mods if m) if f})
        return _files_hash(tuple(files))

    def _form(self, headless):
        if headless is None:
            headless = self.env is None
        if not headless and self.env is None:
            raise ValueError(f"{self.id} is a headless model: it has no env form")
        if headless and self.headless is None:
            raise ValueError(f"{self.id} has no headless form (no headless runner)")
        return "headless" if headless else "env"

    def open_run(self, params, num_threads, seed, headless=None):
        """Open ``params`` as a :class:`Run` at ``num_threads`` threads.

        ``headless`` picks the form: None is the env when there is one."""
        form = self._form(headless)
        cfg = self.build_config(params)
        code = self.workload_codes.get(form, 0)
        if form == "env":
            env_run = self.env_run or (_DEFAULT_ENV_RUN[0] if _DEFAULT_ENV_RUN else None)
            if env_run is None:
                raise ValueError(f"{self.id}: no env_run set (register it from seer_envs)")
            run = env_run(self, dataclasses.asdict(cfg), num_threads, seed)
            run.workload_code = code
            return run
        ut = self.unit_time(cfg) if self.unit_time else float(getattr(cfg, "dt", 1.0))
        return headless_run(self.make_model(cfg), num_threads, seed, ut, code)

    def opener(self, params, headless=None):
        """``open_run`` with the configuration bound: ``(num_threads, seed) -> Run``
        (what STPA's preflight takes)."""
        cfg = self.build_config(params)
        return lambda num_threads, seed: self.open_run(cfg, num_threads, seed, headless)


_HASHES = {}


def _files_hash(files):
    """sha256 (16 hex digits) of ``files``' names and bytes, cached per
    file state (size, mtime) so an env built again hashes nothing."""
    state = tuple((f, *_stat(f)) for f in files)
    h = _HASHES.get(state)
    if h is None:
        d = hashlib.sha256()
        for f in files:
            d.update(os.path.basename(f).encode() + b"\0")
            try:
                with open(f, "rb") as fh:
                    d.update(fh.read())
            except OSError:
                d.update(b"?")
        h = _HASHES[state] = d.hexdigest()[:16]
    return h


def _stat(f):
    try:
        st = os.stat(f)
    except OSError:
        return (None, None)
    return (st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=None)
def package_version():
    """The installed SEER distribution's version (``"unknown"`` when it is
    run from a source tree that is not installed)."""
    from importlib import metadata
    try:
        return metadata.version("seer")
    except metadata.PackageNotFoundError:
        return "unknown"


def register(spec):
    """Add ``spec`` to the registry (once per id; re-registering the same
    scenario, e.g. on a module reload, replaces it)."""
    if not isinstance(spec, ScenarioSpec):
        raise TypeError(f"register() takes a ScenarioSpec, got {type(spec).__name__}")
    old = _SPECS.get(spec.id)
    if old is not None and old.config.__qualname__ != spec.config.__qualname__:
        raise ValueError(f"scenario id {spec.id!r} is already registered by {old.config.__module__}")
    if spec.env is None and spec.copies is not None:
        if not _ENV_CLASS:
            raise ValueError(f"{spec.id}: a scenario with copies and no env is registered "
                             "through seer_envs (import seer_envs first)")
        spec = dataclasses.replace(spec, env=_ENV_CLASS[0](spec))
    _SPECS[spec.id] = spec
    return spec


def set_env_class(env_class):
    """``env_class(spec) -> class``: the env of a spec that has copies and
    names no env (``seer_envs`` gives its template's: the runtime does not
    know the env layer)."""
    _ENV_CLASS[:] = [env_class]


def set_default_env_run(env_run):
    """The ``env_run`` of every spec that sets none (``seer_envs`` gives its
    generic one: the runtime does not know the env layer)."""
    _DEFAULT_ENV_RUN[:] = [env_run]


def add_search_package(package):
    """Have :func:`registry` look for ``<package>.<sub>.spec`` modules."""
    if package not in _SEARCH:
        _SEARCH.append(package)


def _discover():
    for pkg_name in list(_SEARCH):
        if pkg_name in _searched:
            continue
        _searched.add(pkg_name)
        pkg = importlib.import_module(pkg_name)
        # every folder with a spec.py (an __init__.py is not required: a
        # scenario folder is its own files only)
        names = sorted({e.name for d in pkg.__path__ if os.path.isdir(d) for e in os.scandir(d)
                        if e.is_dir() and e.name.isidentifier() and os.path.isfile(os.path.join(e.path, "spec.py"))})
        for name in names:
            _import_spec(f"{pkg_name}.{name}.spec")
    if "<entry points>" not in _searched:
        _searched.add("<entry points>")
        try:
            from importlib.metadata import entry_points
            eps = entry_points(group="seer.scenarios")
        except Exception:   # a broken metadata install must not hide the built-in scenarios
            eps = []
        for ep in eps:
            _import_spec(ep.value)


def _import_spec(module):
    try:
        importlib.import_module(module)
    except ImportError as e:
        # Left out of the registry (an extension not built, a typo in an
        # import), but said: a scenario must not vanish from `seer list` silently.
        warnings.warn(f"scenario module {module!r} failed to import and is left out of the "
                      f"registry: {type(e).__name__}: {e}", RuntimeWarning, stacklevel=2)


def registry():
    """id -> :class:`ScenarioSpec` for every scenario found, sorted by id."""
    _discover()
    return dict(sorted(_SPECS.items()))


def get(scenario_id):
    """The spec of ``scenario_id``; ValueError naming the known ids."""
    reg = registry()
    if scenario_id not in reg:
        raise ValueError(f"unknown scenario {scenario_id!r}; registered: {', '.join(reg)}")
    return reg[scenario_id]
