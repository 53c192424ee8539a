# SPDX-License-Identifier: BSD-3-Clause
"""The examples' first import: an optional library that is missing is one
line naming what to install and exit 2, not a ModuleNotFoundError traceback
(the examples need the RL extras, which the base install leaves out)."""

import importlib.util
import os
import sys

#: How to install each library an example needs (README.md, "Optional, for RLlib").
INSTALL = {
    "torch": 'pip install torch==2.13.0 && pip install -e ".[train]"',
    "ray": 'pip install torch==2.13.0 && pip install "ray[rllib]>=2.40"',
    "benchmarl": 'pip install torch==2.13.0 && pip install -e ".[torchrl]" && pip install hydra-core && '
                 "pip install --no-deps benchmarl==1.5.2",
}


def need(*modules):
    """Check that each of ``modules`` is installed, or print how to install
    the first that is missing and exit with status 2."""
    for name in modules:
        try:            # found, not imported: BenchMARL 1.5.2 cannot be imported before SEER's shim
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError, AttributeError):     # hidden (None in sys.modules)
            found = False
        if not found:
            script = os.path.basename(sys.argv[0]) or "this example"
            print(f"{script} needs {name}, which is not installed: {INSTALL[name]} "
                  '(README.md, "Optional, for RLlib")', file=sys.stderr)
            raise SystemExit(2) from None
