# SPDX-License-Identifier: BSD-3-Clause
"""Helpers shared by test modules: tests/conftest.py puts this folder (only
it: tests/ itself would make its subfolders, such as tests/benchmarl,
shadow packages) on ``sys.path``, so ``from seer_test_helpers import
contract_error``."""

from seer_runtime import ContractViolation


def contract_error(fn):
    """Everything the ``ContractViolation`` that ``fn()`` raises says, as a
    tuple to compare across thread counts and layouts; AssertionError when
    ``fn`` raises none."""
    try:
        fn()
    except ContractViolation as e:
        return (type(e).__name__, e.reason, str(e), e.time, e.now, e.source, e.target,
                e.kind, e.code)
    raise AssertionError("no ContractViolation")
