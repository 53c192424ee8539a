# SPDX-License-Identifier: BSD-3-Clause
"""Models that ship with the runtime: PHOLD (the standard PDES benchmark)
and a deliberately faulty model used by the contract tests."""
