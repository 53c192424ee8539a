# SPDX-License-Identifier: BSD-3-Clause
"""``python -m seer``: the ``seer`` command, for environments whose scripts
folder is not on PATH."""

import sys

from seer.cli import main

sys.exit(main())
