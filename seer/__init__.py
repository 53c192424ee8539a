# SPDX-License-Identifier: BSD-3-Clause
"""The ``seer`` command line: run scenarios from config files, sweep their
parameters (locally or on Ray), list scenarios, check files."""

__version__ = "0.1.0"
