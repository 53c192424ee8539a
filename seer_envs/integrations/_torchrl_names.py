# SPDX-License-Identifier: BSD-3-Clause
"""TorchRL 0.14's collector under the name BenchMARL 1.5.2 imports, in any
import order.

BenchMARL 1.5.2 imports ``torchrl.collectors.SyncDataCollector``, which
TorchRL 0.14 calls ``Collector``; ``import benchmarl.experiment`` as a
script's first line fails unless something gave the collector its old name
first.  SEER installs ``seer-torchrl-names.pth`` (setup.py), whose one line
runs :func:`install` at interpreter start: it loads this file by its path
(neither ``seer_envs`` nor torch is imported, so a Python start costs a
meta path finder and nothing more) and puts :class:`AliasFinder` first on
``sys.meta_path``.  When ``torchrl.collectors`` is imported, by whoever, the
finder lets the usual finders find it and adds the alias once the module has
run.  :mod:`seer_envs.integrations.benchmarl` applies the same :func:`alias`
(for a run from a source tree, where no ``.pth`` was installed).
"""

import sys

TARGET = "torchrl.collectors"


def alias(module):
    """``module.SyncDataCollector = module.Collector`` where only the new name exists."""
    if not hasattr(module, "SyncDataCollector") and hasattr(module, "Collector"):
        module.SyncDataCollector = module.Collector


class _AliasingLoader:
    """The module's own loader, with :func:`alias` after it has run."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        alias(module)

    def __getattr__(self, name):         # resource readers, get_code, is_package, ...
        return getattr(self.loader, name)


class AliasFinder:
    """Finds nothing itself: for ``torchrl.collectors`` it asks the finders
    after it and wraps the loader of the spec they return."""

    def find_spec(self, name, path=None, target=None):
        if name != TARGET:
            return None
        for finder in sys.meta_path:
            if finder is self or type(finder).__name__ == "AliasFinder" or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _AliasingLoader(spec.loader)
                return spec
        return None


def install():
    """Alias an already imported ``torchrl.collectors``, else put the finder first (once)."""
    if TARGET in sys.modules:
        alias(sys.modules[TARGET])
    elif not any(type(f).__name__ == "AliasFinder" for f in sys.meta_path):
        sys.meta_path.insert(0, AliasFinder())
