# SPDX-License-Identifier: BSD-3-Clause
"""``seer`` — run SEER scenarios from config files.

    seer run FILE [--set KEY=VALUE ...] [--num-threads N] [--json]
                                        one configuration, with a summary
    seer sweep FILE [--out DIR] [--ray] every point of a sweep -> CSV + PNG plots
    seer list [NAME]                    scenarios (or one) and their parameters
    seer check FILE [FILE ...] [--set KEY=VALUE ...]
                                        validate files without running them
    seer --version

Errors reach the user as one line on stderr (``seer: ...``), never as a
traceback: exit 2 for a bad config file (the same from ``check`` and
``run``), 1 for a run that failed, 130 for Ctrl-C.  ``SEER_DEBUG=1`` re-raises
instead, for a traceback.
"""

import argparse
import json
import os
import sys

from tqdm import tqdm

from seer import __version__

# seer.configfile (and numpy, the envs, ...) load inside main()'s handlers, so a
# Ctrl-C or an error during those imports is reported like any other.

EXIT_CONFIG, EXIT_FAILED, EXIT_INTERRUPTED = 2, 1, 130


class _RunBar:
    """tqdm for `seer run`: the ETA starts at the first step, so the reset
    and STPA's preflight before it do not inflate the first estimate."""

    def __init__(self, total, desc, disable=None, file=None):
        # disable=None: draw only on a terminal
        self.bar = tqdm(total=total, desc=desc, unit="step", disable=disable, file=file, leave=True,
                        dynamic_ncols=True)
        self.started = False

    def update(self, n=1):
        if not self.started:
            self.started = True
            if not self.bar.disable:
                self.bar.unpause()           # restart the clock: drop the time spent before step 1
        self.bar.update(n)

    def close(self):
        # an episode that ends early (max_cycles, every agent done) still completes the bar
        self.bar.total = self.bar.n
        self.bar.refresh()
        self.bar.close()


def _plain(o):
    """JSON for what ``json`` cannot write: a ThreadChoice as its fields, the rest as text."""
    return o.to_dict() if hasattr(o, "to_dict") else str(o)


def _fmt_choice(choice):
    """A ThreadChoice as the run summary's lines: the count it started on,
    why, then each switch the tuner made."""
    if choice is None:
        return "-"
    s = f"{choice.first} ({choice.method}"
    if choice.cap:
        s += f"; cap {choice.cap} from {', '.join(choice.caps)}"
    if choice.predicted_speedup:
        s += "; predicted " + ", ".join(f"{t}T {v:.2f}x" for t, v in choice.predicted_speedup.items())
    if choice.cached:
        s += "; cached"
    s += ")"
    for d in choice.adapted:
        s += (f"\n              threads {d.get('from', '?')} -> {d['to']}"
              + (f" at step {d['step']}" if d.get("step") is not None else "")
              + (f" ({d['reason']})" if d.get("reason") else
                 f" (contention: workers {d['idle_share']:.0%} idle, waiting for preempted ones)" if "idle_share" in d else ""))
    return s


def _plural(n, word):
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def _overrides(a):
    """``--set`` items, then ``--num-threads`` as ``run.num_threads``."""
    out = list(a.set or ())
    if getattr(a, "num_threads", None) is not None:
        out.append(f"run.num_threads={a.num_threads}")
    return out


def cmd_run(a):
    from seer.configfile import ConfigError, load
    spec = load(a.file, _overrides(a))
    if spec.sweep:
        raise ConfigError(f"{a.file}: has a [sweep] table; run it with `seer sweep {a.file}`")
    run = dict(spec.run)
    if a.save_state or a.from_state:
        if spec.vector:
            raise ConfigError(f"{a.file}: --save-state and --from-state run a single env; remove [run] copies "
                              "and [param_sampler]")
        if spec.scenario.kind != "env":
            raise ConfigError(f"{a.file}: --save-state and --from-state are for env scenarios; "
                              f"{spec.scenario.name} is headless")
        if len(run["seeds"]) != 1:
            raise ConfigError(f"{a.file}: --save-state and --from-state need one seed in [run] seeds, "
                              f"got {len(run['seeds'])}")
        if a.from_state and not os.path.isfile(a.from_state):
            raise ConfigError(f"--from-state {a.from_state}: no such file")
        run.update(save_state=a.save_state, from_state=a.from_state)
    total = run["steps"] * len(run["seeds"]) if spec.scenario.kind == "env" else len(run["seeds"])
    bar = _RunBar(total, f"seer run {spec.scenario.name}")
    try:
        kw = {"param_sampler": spec.param_sampler} if spec.param_sampler else {}
        res = spec.scenario.run(spec.params, run, progress=bar, **kw)
    finally:
        bar.close()
    if a.json:
        print(json.dumps(res, indent=2, default=_plain))
        return 0
    print(f"{a.file}: {spec.scenario.name}" + (f" — {spec.description}" if spec.description else ""))
    if spec.params:
        print("  params      " + ", ".join(f"{k}={v}" for k, v in spec.params.items()))
    if spec.param_sampler:
        print("  sampler     " + ", ".join(f"{k} {kind} {v}" for k, d in spec.param_sampler.items()
                                            for kind, v in d.items()) + " (drawn at every reset of every copy)")
    if spec.scenario.kind == "env":
        copies = f" x {res['copies']} copies" if "copies" in res else ""
        resumed = (f", resumed at step {res['resumed_at_step']} from {a.from_state}"
                   if res.get("resumed_at_step") is not None else "")
        print(f"  steps       {res['steps']:,}{copies} over {len(run['seeds'])} seed(s), policy {run['policy']}{resumed}")
        print(f"  speed       {res['steps_per_s']:,.1f} steps/s, {res['events_per_s'] / 1e6:.2f} M events/s")
        print(f"  reward      {res['mean_reward']:.4f} per agent per step "
              f"(per seed: {', '.join(f'{r:.4f}' for r in res['reward_per_seed'])})")
    else:
        print(f"  end time    {run['end_time']:g} over {len(run['seeds'])} seed(s)")
        print(f"  speed       {res['events']:,} events, {res['events_per_s'] / 1e6:.2f} M events/s")
        if "blocking_probability" in res:
            print(f"  blocking    {res['blocking_probability']:.5f}")
        if "digest" in res:
            print(f"  digest      {res['digest']}")
    print(f"  threads     {_fmt_choice(res.get('thread_choice'))}")
    print("  busy (s)    " + "  ".join(f"t{i}: {b:.3f}" for i, b in enumerate(res.get("busy_s") or [])))
    return 0


def cmd_sweep(a):
    from seer.configfile import load
    from seer.sweep import run_sweep
    spec = load(a.file)
    with tqdm(total=len(spec.points()), desc="seer sweep", unit="point", disable=None) as bar:
        rows, ran, csv_path, pngs = run_sweep(a.file, a.out, use_ray=a.ray, progress=bar,
                                              retry_failed=a.retry_failed, overwrite=a.overwrite)
    failed = [r for r in rows if r.get("error")]
    print(f"{a.file}: {_plural(len(rows), 'point')} ({ran} run now, {len(rows) - ran} already done); "
          f"{len(failed)} failed -> {csv_path}")
    for r in failed:
        print(f"  failed: {r['key']}: {r['error']}")
    for p in pngs:
        print(f"  plot: {p}")
    return 1 if failed else 0


def cmd_list(a):
    from seer.configfile import per_copy_fields
    from seer.configfile import ConfigError
    from seer.scenarios import registry
    scenarios = registry()
    if a.name is not None:
        if a.name not in scenarios:
            raise ConfigError(f"list: unknown scenario {a.name!r}; expected one of {', '.join(scenarios)}")
        scenarios = {a.name: scenarios[a.name]}
    for name, s in scenarios.items():
        print(f"{name}  ({s.kind}) — {s.description}")
        per_copy = per_copy_fields(s) if s.kind == "env" else ()
        for field, default, unit, doc in s.params():
            unit = f" [{unit}]" if unit else ""
            mark = " (per copy)" if field in per_copy else ""
            print(f"    {field:<24} {default!s:<10}{unit:<14} {doc}{mark}")
        print("    run: " + ("steps (100), " if s.kind == "env" else "end_time (100.0), ") +
              "seeds ([0]), num_threads (\"auto\")" +
              (", policy (random | fixed + action | heuristic), copies" if s.kind == "env" else ""))
        print()
    return 0


def cmd_check(a):
    """The same validation as `run`/`sweep` (they call the same `load`), the
    same message on stderr and the same exit code; ok lines on stdout."""
    from seer.configfile import ConfigError, load
    bad = 0
    for f in a.files:
        try:
            spec = load(f, _overrides(a))
        except ConfigError as e:
            print(f"seer: {e}", file=sys.stderr)
            bad += 1
        else:
            print(f"ok   {f}: {spec.scenario.name}, {_plural(len(spec.points()), 'point')}")
    return EXIT_CONFIG if bad else 0


def _set_options(parser):
    parser.add_argument("--set", action="append", metavar="KEY=VALUE",
                        help="override a [params] or [run] key (repeatable; VALUE as in TOML, e.g. "
                             "--set grid_width=32 --set run.seeds=[0,1]); checked like the file's own")


def main(argv=None):
    p = argparse.ArgumentParser(prog="seer", description="Run SEER scenarios from config files.")
    p.add_argument("--version", action="version", version=f"seer {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run one configuration and print a summary")
    r.add_argument("file")
    r.add_argument("--json", action="store_true", help="print the full result as JSON")
    r.add_argument("--save-state", metavar="FILE",
                   help="save the env's state at the end of the run (a snapshot; one seed)")
    r.add_argument("--from-state", metavar="FILE",
                   help="start from a saved state instead of a fresh episode (one seed)")
    _set_options(r)
    r.add_argument("--num-threads", metavar="N",
                   help='threads for the run: "auto" or an int >= 1 (as [run] num_threads)')
    s = sub.add_parser("sweep", help="run every point of a sweep into a CSV and PNG plots")
    s.add_argument("file")
    s.add_argument("--out", help="output folder (default sweeps/<file stem>)")
    s.add_argument("--ray", action="store_true", help="run the points as Ray tasks")
    s.add_argument("--retry-failed", action="store_true", help="rerun points recorded as failed")
    s.add_argument("--overwrite", action="store_true",
                   help="replace a results.csv written by a different version of the sweep file")
    ls = sub.add_parser("list", help="scenarios and their parameters")
    ls.add_argument("name", nargs="?", help="show this scenario only (a name `seer list` shows)")
    c = sub.add_parser("check", help="validate config files without running them")
    c.add_argument("files", nargs="+")
    _set_options(c)
    a = p.parse_args(argv)
    cmd = {"run": cmd_run, "sweep": cmd_sweep, "list": cmd_list, "check": cmd_check}[a.cmd]
    if os.environ.get("SEER_DEBUG"):
        return cmd(a)
    try:
        return cmd(a)
    except KeyboardInterrupt:
        print("\nseer: interrupted; rerun to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:          # `seer list | head`: the reader left; say nothing
        _silence_stdout()
        return 0
    except OSError as e:             # unwritable --out, full disk, ...
        where = f" {e.filename}" if e.filename else ""
        print(f"seer: cannot write or read{where}: {e.strerror or e}", file=sys.stderr)
        return EXIT_FAILED
    except Exception as e:           # a run that failed: one line, not a traceback
        if isinstance(e, getattr(sys.modules.get("seer.configfile"), "ConfigError", ())):
            print(f"seer: {e}", file=sys.stderr)
            return EXIT_CONFIG
        print(f"seer: {a.cmd} failed: {type(e).__name__}: {e} (SEER_DEBUG=1 shows the traceback)",
              file=sys.stderr)
        return EXIT_FAILED


def _silence_stdout():
    """After EPIPE, point stdout at /dev/null so the interpreter's final
    flush does not print 'Exception ignored ... BrokenPipeError'."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
