# SPDX-License-Identifier: BSD-3-Clause
"""Command line: ``python -m seer_runtime.models.phold [--num-lps N] ...``."""

import argparse
import dataclasses
import json

from seer_runtime import openmp_enabled
from seer_runtime.models.phold import PholdConfig, run


def _threads(text):
    return text if text == "auto" else int(text)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m seer_runtime.models.phold",
                                description="Run PHOLD on the SEER runtime and print a summary.")
    for f in dataclasses.fields(PholdConfig):        # the parameters, declared once
        p.add_argument("--" + f.name.replace("_", "-"), type=type(f.default), default=f.default,
                       help=f"{f.metadata['doc']} (default {f.default})")
    p.add_argument("--end-time", type=float, default=100.0)
    p.add_argument("--num-threads", type=_threads, default="auto", help='an int >= 1 or "auto"')
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print the full result as JSON")
    a = p.parse_args(argv)
    params = {f.name: getattr(a, f.name) for f in dataclasses.fields(PholdConfig)}
    try:
        r = run(end_time=a.end_time, num_threads=a.num_threads, seed=a.seed, **params)
    except ValueError as e:
        p.error(str(e))
    if a.json:
        print(json.dumps(dict(r, thread_choice=r["thread_choice"].to_dict()), indent=2))
        return 0
    print(f"PHOLD  {a.num_lps} LPs to t={a.end_time}  threads={r['num_threads']}"
          f"  (OpenMP {'on' if openmp_enabled() else 'OFF'})")
    print(f"  events      {r['events']:,}  ({r['remote_events']:,} remote)")
    print(f"  wall        {r['wall_s']:.3f} s   {r['events_per_s'] / 1e6:.2f} M events/s")
    print(f"  rounds      {r['rounds']:,}   {r['events_per_round']:.1f} events/round")
    print("  busy/idle   " + "  ".join(f"t{i}: {b:.3f}/{i_:.3f} s" for i, (b, i_) in
                                        enumerate(zip(r['busy_s'], r['idle_s']))))
    print(f"  inbox       {r['inbox_pushes']:,} pushes, {r['cas_retries']:,} CAS retries")
    print(f"  digest      {r['digest']}")
    return 0


def _main():
    """``main`` without tracebacks for a closed pipe (``... | head -1``) or Ctrl-C."""
    import os
    import sys
    try:
        rc = main()
        sys.stdout.flush()
        return rc
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())   # no second EPIPE at exit
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(_main())
