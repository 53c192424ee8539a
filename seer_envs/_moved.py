# SPDX-License-Identifier: BSD-3-Clause
"""The deprecated module paths, kept for one release (issue 53): the flat
layout's modules and the per-version modules (``seer_envs.pcs_v0``, ...).

``seer_envs`` once held every module at its top level; they now live in
subpackages named after their layer (``episode``, ``layout``, ``snapshot``,
``views``, ``scenario``).  Each old path in :data:`MOVED` still imports: a
meta path finder (installed by ``seer_envs/__init__.py``) builds an alias
module that holds the very same objects as the new modules (classes,
functions, private helpers included: a pickle names ``seer_envs.parallel._restore``,
an old import names ``seer_envs._batch.Batch``) and warns once, at its import,
with a ``DeprecationWarning`` naming the new path.  A finder, not one file per
old path, keeps the package's top level to the modules it really has.

The per-version modules (PettingZoo's ``<name>_v<N>`` convention) are made
from the registry, for every registered env (:func:`version_module`):
``parallel_env(**kwargs)``, ``env`` / ``raw_env`` (the AEC form), the env and
config classes under their own names and, where the scenario has one, its
headless run as ``run_headless``.  Importing one warns (``DeprecationWarning``)
and names the one constructor, ``seer_envs.make(id, ...)``.

SEER's own code imports the new paths only, so neither ``import seer_envs``
nor building or stepping an env warns."""

import importlib
import importlib.abc
import importlib.util
import re
import sys
import warnings

#: old module (under ``seer_envs``) -> the new modules it re-exports, the
#: first one the module it became (later ones: what was split off it).
MOVED = {
    "core": ("episode.core", "episode.step", "episode.arguments"),
    "_core_worlds": ("episode.worlds",),
    "_worlds": ("episode.worlds",),
    "_core_snapshots": ("episode.snapshots",),
    "_actions": ("episode.actions",),
    "_batch": ("layout.batch", "layout.plans", "layout.guard", "episode.copying"),
    "_groups": ("layout.groups",),
    "_core_layout": ("layout.core_layout",),
    "_snapshot": ("snapshot.whole",),
    "_snapshot_copies": ("snapshot.copies",),
    "parallel": ("views.parallel",),
    "vector": ("views.vector",),
    "asynchronous": ("views.asynchronous",),
    "attributes": ("views.attributes",),
    "agent_vector": ("views.agent_vector",),
    "copies": ("scenario.copies",),
    "_reference": ("scenario.reference",),
    "_config": ("scenario.config",),
    "_render": ("scenario.render",),
    # gossip's parts a scenario no longer needs (the registry makes its env
    # from the spec; the heuristic and the frames live with its copies)
    "gossip.env": ("gossip",),
    "gossip.heuristic": ("gossip.copies",),
    "gossip.render": ("gossip.copies",),
}

_PACKAGE = __name__.rpartition(".")[0]
_HERE = (__file__, __file__.rpartition("_moved")[0] + "__init__.py")


def _stacklevel():
    """The ``stacklevel`` of a warning in ``exec_module`` that points at the
    import statement: past this file, the package's ``__getattr__`` and
    importlib's frames (its bootstrap frames are no levels to ``warnings``)."""
    frame, level = sys._getframe(1), 1          # exec_module, the function that warns
    while frame is not None and (frame.f_code.co_filename in _HERE or "importlib" in frame.f_code.co_filename):
        frame = frame.f_back
        while frame is not None and "importlib" in frame.f_code.co_filename \
                and "_bootstrap" in frame.f_code.co_filename:
            frame = frame.f_back
        level += 1
    return level if frame is not None else 2


def new_path(old):
    """``"seer_envs.core"`` -> ``"seer_envs.episode.core"`` (the module it became)."""
    return f"{_PACKAGE}.{MOVED[_relative(old)][0]}"


def _relative(name):
    """``"seer_envs.gossip.env"`` -> ``"gossip.env"``; None outside the package."""
    return name[len(_PACKAGE) + 1:] if name.startswith(_PACKAGE + ".") else None


class _AliasLoader(importlib.abc.Loader):
    """Fills the alias module with the new modules' names and warns."""

    def create_module(self, spec):
        return None                     # the default module object

    def exec_module(self, module):
        targets = [importlib.import_module(f"{_PACKAGE}.{t}") for t in MOVED[_relative(module.__name__)]]
        # Later targets first, so the module it became wins a shared name.
        for target in reversed(targets):
            module.__dict__.update((k, v) for k, v in vars(target).items()
                                   if not (k.startswith("__") and k.endswith("__")))
        if hasattr(targets[0], "__all__"):
            module.__all__ = list(targets[0].__all__)
        module.__doc__ = (f"Deprecated alias of :mod:`{targets[0].__name__}` (issue 53); "
                          "import the new path.")

        def __getattr__(name, _targets=tuple(targets)):
            # names a target gained after this alias was made
            for t in _targets:
                if hasattr(t, name):
                    return getattr(t, name)
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
        module.__getattr__ = __getattr__
        warnings.warn(f"{module.__name__} is deprecated: import {targets[0].__name__} instead "
                      "(the old path goes away in the next release)", DeprecationWarning, stacklevel=_stacklevel())


#: A version module's name: a registered env id (PettingZoo's ``<name>_v<N>``).
_VERSION = re.compile(r"[a-z][a-z0-9_]*_v[0-9]+")


def _env_spec(short):
    """The registered env spec of the id ``short``, or None."""
    if not _VERSION.fullmatch(short):
        return None                    # without reading the registry (it imports the scenarios)
    from seer_envs import envs
    return envs().get(short)


def version_module(module, spec):
    """Fill ``module`` as ``seer_envs.<id>``: PettingZoo's per-version entry
    points for the registered env ``spec``, every one ``seer_envs.make``."""
    sid = spec.id

    def parallel_env(**kwargs):
        """The ParallelEnv: ``seer_envs.make(id, **kwargs)``."""
        from seer_envs import make
        return make(sid, **kwargs)

    def env(**kwargs):
        """The AEC form: ``seer_envs.make(id, aec=True, **kwargs)`` (SEER adds no
        AEC wrappers, so it is also PettingZoo's unwrapped ``raw_env``)."""
        from seer_envs import make
        return make(sid, aec=True, **kwargs)

    names = {"parallel_env": parallel_env, "env": env, "raw_env": env,
             spec.env.__name__: spec.env, spec.config.__name__: spec.config}
    if spec.headless is not None:
        names["run_headless"] = spec.headless
    for fn in (parallel_env, env):
        fn.__module__, fn.__qualname__ = module.__name__, fn.__name__
    module.__dict__.update(names)
    module.__all__ = list(names)
    module.__doc__ = (f"PettingZoo-style module of ``{sid}`` (deprecated: build it with "
                      f"``seer_envs.make({sid!r}, ...)``).\n\n{spec.description}")


class _VersionLoader(importlib.abc.Loader):
    """Makes ``seer_envs.<id>`` from the registry and warns."""

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        sid = module.__name__.rpartition(".")[2]
        version_module(module, _env_spec(sid))
        warnings.warn(f"{module.__name__} is deprecated: build the env with seer_envs.make({sid!r}, ...) "
                      f"(or seer_envs.vector_env({sid!r}, n, ...)); the module goes away in the next release",
                      DeprecationWarning, stacklevel=_stacklevel())


class MovedFinder(importlib.abc.MetaPathFinder):
    """Finds the old paths of :data:`MOVED` and the version module of every
    registered env, and nothing else."""

    _loader = _AliasLoader()
    _versions = _VersionLoader()

    def find_spec(self, name, path=None, target=None):
        if _relative(name) in MOVED:
            return importlib.util.spec_from_loader(name, self._loader, origin="alias of " + new_path(name))
        pkg, _, short = name.rpartition(".")
        if pkg != _PACKAGE:
            return None
        if _env_spec(short) is not None:
            return importlib.util.spec_from_loader(name, self._versions, origin="made from the registry")
        return None


def install():
    """Put the finder on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedFinder())


def module_getattr(name):
    """The package's ``__getattr__`` part for old names: ``seer_envs.core``
    or ``seer_envs.pcs_v0`` without an import of it gives the deprecated
    module (which warns); None for any other name."""
    if name in MOVED or _env_spec(name) is not None:
        return importlib.import_module(f"{_PACKAGE}.{name}")
    return None


__all__ = ["MOVED", "MovedFinder", "install", "new_path", "module_getattr", "version_module"]
