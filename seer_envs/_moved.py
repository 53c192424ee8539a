# SPDX-License-Identifier: BSD-3-Clause
"""The module paths of the flat layout, kept for one release (issue 53).

``seer_envs`` once held every module at its top level; they now live in
subpackages named after their layer (``episode``, ``layout``, ``snapshot``,
``views``, ``scenario``).  Each old path in :data:`MOVED` still imports: a
meta path finder (installed by ``seer_envs/__init__.py``) builds an alias
module that holds the very same objects as the new modules (classes,
functions, private helpers included: a pickle names ``seer_envs.parallel._restore``,
an old import names ``seer_envs._batch.Batch``) and warns once, at its import,
with a ``DeprecationWarning`` naming the new path.  A finder, not one file per
old path, keeps the package's top level to the modules it really has.

SEER's own code imports the new paths only, so neither ``import seer_envs``
nor building or stepping an env warns."""

import importlib
import importlib.abc
import importlib.util
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
}

_PACKAGE = __name__.rpartition(".")[0]


def new_path(old):
    """``"seer_envs.core"`` -> ``"seer_envs.episode.core"`` (the module it became)."""
    return f"{_PACKAGE}.{MOVED[old.rpartition('.')[2]][0]}"


class _AliasLoader(importlib.abc.Loader):
    """Fills the alias module with the new modules' names and warns."""

    def create_module(self, spec):
        return None                     # the default module object

    def exec_module(self, module):
        short = module.__name__.rpartition(".")[2]
        targets = [importlib.import_module(f"{_PACKAGE}.{t}") for t in MOVED[short]]
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
                      "(the old path goes away in the next release)", DeprecationWarning, stacklevel=2)


class MovedFinder(importlib.abc.MetaPathFinder):
    """Finds the old paths of :data:`MOVED`, and nothing else."""

    _loader = _AliasLoader()

    def find_spec(self, name, path=None, target=None):
        pkg, _, short = name.rpartition(".")
        if pkg != _PACKAGE or short not in MOVED:
            return None
        return importlib.util.spec_from_loader(name, self._loader, origin="alias of " + new_path(name))


def install():
    """Put the finder on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedFinder())


def module_getattr(name):
    """The package's ``__getattr__`` part for old names: ``seer_envs.core``
    without an import of it gives the alias module (which warns); None for
    any other name."""
    if name in MOVED:
        return importlib.import_module(f"{_PACKAGE}.{name}")
    return None


__all__ = ["MOVED", "MovedFinder", "install", "new_path", "module_getattr"]
