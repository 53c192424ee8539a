# SPDX-License-Identifier: BSD-3-Clause
"""Subprocess side of the issue-16 checks: run the ISSUE16 bad-input cases
(or a slice of them) at 1 and 2 threads and print one JSON line per case
with the exception type and message at each thread count.  The parent test
enforces the timeout, so a case that hangs fails instead of hanging CI.

    python issue16_worker.py [--full] [index ...]
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bad_input_cases import ISSUE16, make_issue16  # noqa: E402


def outcome(env, kwargs, threads, full):
    try:
        make_issue16(env, kwargs, num_threads=threads, full=full)
    except Exception as e:  # noqa: BLE001 - reported to the parent, which judges it
        return [type(e).__name__, str(e)]
    return ["accepted", ""]


def main(argv):
    full = "--full" in argv
    idx = [int(a) for a in argv if a != "--full"] or range(len(ISSUE16))
    for i in idx:
        env, _cat, what, kwargs, _match = ISSUE16[i]
        print(json.dumps({"i": i, "what": what,
                          "t1": outcome(env, kwargs, 1, full), "t2": outcome(env, kwargs, 2, full)}),
              flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
