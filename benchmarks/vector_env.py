# SPDX-License-Identifier: BSD-3-Clause
"""Many env copies in one engine (``seer_envs.vector_env``) against SuperSuit's
``concat_vec_envs_v1(..., num_cpus=0)`` (a Python loop over single envs),
side by side in one run.

Runners over the same configuration, interleaved in rounds (each
round times a block of steps of each, so load on the machine hits all
alike): the vector env at 1 thread and at 2 threads as it lays itself out
(every copy in one engine, run in copy groups: each thread takes whole
copies and runs each to the step's end), the same engine run round by round
over every copy (``copy_parallel=False``, the team, at 1 and 2 threads),
the 2-thread vector env with the team's spreading off ("unspread": a member
woken on the caller's CPU stays there; docs/runtime.md, "Waiting"),
``copy_parallel="engines"`` (groups of copies, an engine each on one
thread, stepped concurrently from Python), a plain Python loop of
``step_arrays`` over single envs, and SuperSuit over single envs (1 thread
each).  Actions are random (fixed generator), each
runner gets the same action arrays.  Reported: env steps/s (copies x steps
per second) from the median round, and the ratios vector/SuperSuit and
2-thread/1-thread as the median of per-round ratios (each round times the
runners back to back), with their range.

A fifth runner calibrates the machine: two processes, each stepping a
1-thread vector env of half the copies (the same actions), started together
each round.  They share nothing, so their speedup over the 1-thread vector
env is what this machine gives two independent workers at that moment (on a
virtual machine whose second core is sometimes shared, under 2); the 2-thread
vector env is reported against it too (timed right after it in each round;
``--no-halves`` skips it), and
each process's time per step outside ``run_until`` beside the vector
env's (its serial part: actions, injection, bookkeeping, Python).

Then (``--aircraft-copies``, default 256) Aircraft with 16 UAVs: the vector
env at 1 and 2 threads beside VMAS's ``discovery`` scenario (16 agents
searching 2 targets, continuous actions, ``num_envs`` = the same copies,
torch on the CPU with 1 thread), a benchmark-only dependency (``pip install
vmas==1.5.2``, the version measured; skipped when missing).  The scenarios
differ (VMAS: a vectorised physics step in torch; SEER: event-driven RK4
flight, sensing and messages), so the row is a throughput reference, not a
like-for-like race.

Last (``--no-pufferlib`` skips it), PufferLib's vectorisation of the single
PettingZoo env (``pufferlib.emulation.PettingZooPufferEnv`` in
``pufferlib.vector``'s ``Serial`` and ``Multiprocessing`` backends, 1 SEER
thread per copy; ``pip install --no-deps pufferlib-core==3.0.23``, the version
measured: its wheel pins torch 2.9.0, and its vectorisation imports only
numpy, gymnasium, psutil and torch; skipped when missing) beside the vector
env, on the PCS copies and on the Aircraft copies, in rounds of their own
(:func:`pufferlib_rows`).  There every runner exists only during its own
timed block
(:func:`interleave_built`): each round builds it (envs, worker processes),
resets it and steps it once untimed, times its steps, and closes it (worker
processes joined) before the next runner is built.  PufferLib's
``Multiprocessing`` workers poll shared memory in a busy loop (for 0.5 s
after their last step, then every 10 ms; PufferLib has no setting for
that), so a pool kept alive across the round takes a core from whatever
runs next; on 2 cores that cut the vector env's rate there to a half or a
third.

    python benchmarks/vector_env.py [--copies 64] [--grid 8] [--steps 40] [--rounds 5]
        [--busy 1]     # beside one busy-loop process (the PCS part)
"""

import argparse
import functools
import gc
import os
import statistics
import time

import numpy as np

import seer_envs
from seer_envs.views.vector import vector_env
from seer_runtime import loop

from seer_bench import interleave, median_rates, paired, start_busy, stop
from seer_bench.workloads import Halves, aircraft_workload, pcs_workload, supersuit_pcs
from seer_bench.workloads import steps_timed as _steps_timed
from seer_bench.vectorisers import puffer_vec


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--copies", type=int, default=64)
    p.add_argument("--grid", type=int, default=8)
    p.add_argument("--steps", type=int, default=40, help="steps per runner per round")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--no-supersuit", action="store_true")
    p.add_argument("--no-halves", action="store_true", help="skip the two-process calibration")
    p.add_argument("--aircraft-copies", type=int, default=256, help="0 skips the Aircraft part")
    p.add_argument("--aircraft-steps", type=int, default=10)
    p.add_argument("--no-pufferlib", action="store_true", help="skip the PufferLib rows")
    p.add_argument("--busy", type=int, default=0,
                   help="busy-loop processes beside the PCS rounds (a machine that is not idle)")
    args = p.parse_args()
    E, g = args.copies, args.grid
    A = g * g
    kw, acts = pcs_workload(E, g, args.steps)

    runners = {}
    engine_s = {}           # per round: seconds inside run_until (Engine.counters)
    vecs = {}
    for t in (1, 2):
        for name, cp in ((f"vector {t} thr", None), (f"vector {t} thr cg", True),
                         (f"vector {t} thr team", False)):
            v = vecs[name] = vector_env("pcs_v0", E, num_threads=t, copy_parallel=cp, **kw)
            v.reset(seed=0)
            engine_s[name] = []
            runners[name] = (lambda v=v, name=name: _steps_timed(v, acts, engine_s[name]))
    # the 2-thread vector env with the team's spreading off (src/team.h,
    # seer_spread): a member woken on the caller's CPU stays there
    v = vecs["vector 2 thr unspread"] = vector_env("pcs_v0", E, num_threads=2, **kw)
    v.reset(seed=0)
    engine_s["vector 2 thr unspread"] = []
    runners["vector 2 thr unspread"] = (lambda v=v: _unspread(v, acts, engine_s["vector 2 thr unspread"]))
    moves = {"steps": 0, "moves": 0}
    runners["vector 2 thr"] = (lambda f=runners["vector 2 thr"]: _moves_counted(f, moves, len(acts)))
    groups = vector_env("pcs_v0", E, num_threads=2, copy_parallel="engines", **kw)
    groups.reset(seed=0)
    runners["vector 2 thr groups"] = (lambda: [groups.step(a) for a in acts])
    singles = [seer_envs.make("pcs_v0", num_threads=1, **kw) for _ in range(E)]
    for i, e in enumerate(singles):
        e.reset_arrays(seed=i)
    runners["loop of singles"] = (lambda: [[e.step_arrays(a[i]) for i, e in enumerate(singles)]
                                           for a in acts])
    if not args.no_supersuit:
        ssv = supersuit_pcs(E, kw)
        ssv.reset(seed=0)
        flat = [a.reshape(-1) for a in acts]
        runners["supersuit 1 thr"] = (lambda: [ssv.step(a) for a in flat])
    halves = None if args.no_halves or E < 2 else Halves(E, kw, acts)
    if halves is not None:
        # timed right after the 2-thread vector env, whose ratio to it is the
        # headline: a spell of this shared machine then hits both alike
        order = list(runners)
        order.insert(order.index("vector 2 thr") + 1, "2 procs x half")
        runners["2 procs x half"] = halves.round
        runners = {k: runners[k] for k in order}
    for v in vecs.values():
        v.engine.reset_stats()
    busy = start_busy(args.busy)
    try:
        times = interleave(runners, args.rounds)
    finally:
        stop(busy)
        if halves is not None:
            halves.close()
    rate = median_rates(times, E * args.steps)
    print(f"PCS {g}x{g}, {E} copies, {args.steps} steps x {args.rounds} interleaved rounds (median round), "
          f"{args.busy} busy-loop processes beside them; load average {os.getloadavg()[0]:.1f}")
    print(f"{'runner':<21} {'env steps/s':>12} {'agent steps/s':>14}")
    for k, r in rate.items():
        print(f"{k:<21} {r:>12.0f} {r * A:>14.0f}")
    print("ratios: median of per-round ratios (range over rounds)")
    print(f"vector 1 thr / loop of singles: {paired(times, 'vector 1 thr', 'loop of singles')}")
    print(f"layouts: vector 1 thr {vecs['vector 1 thr'].layout}, vector 2 thr {vecs['vector 2 thr'].layout}")
    print(f"2-thread speedup of the vector env: {paired(times, 'vector 2 thr', 'vector 1 thr')}")
    print(f"  of its engine part (run_until): {paired(engine_s, 'vector 2 thr', 'vector 1 thr')}; "
          f"outside it, per step (median round): "
          + ", ".join(f"{k} {1e3 * statistics.median(w - e for w, e in zip(times[k], engine_s[k])) / args.steps:.3f} ms"
                      for k in engine_s))
    print(f"spreading (a member woken on the caller's CPU moves off it): vector 2 thr over the same "
          f"with it off (unspread): {paired(times, 'vector 2 thr', 'vector 2 thr unspread')}; "
          f"moves {moves['moves'] / max(moves['steps'], 1):.3f} a step")
    print(f"copy groups (cg, copy_parallel=True) over the team (round by round), same threads: "
          f"1 thread {paired(times, 'vector 1 thr cg', 'vector 1 thr team')}, "
          f"2 threads {paired(times, 'vector 2 thr cg', 'vector 2 thr team')}")
    for name in ("vector 2 thr cg", "vector 2 thr team"):
        st = vecs[name].engine.stats()
        wall = st["wall_s"]
        busy = ", ".join(f"{b / wall:.0%}" for b in st["busy_s"])
        what = ("windows a step, every copy's summed" if vecs[name].layout == "copy_groups"
                else "rounds a step")
        print(f"  {name} engine: {st['rounds'] / (args.rounds * args.steps):.0f} {what}; "
              f"busy {busy} of the time inside run_until (caller, member); "
              f"the caller waited {st['idle_s'][0] / wall:.0%} of it for the member; "
              f"{st['straggles']} straggles")
    if halves is not None:
        print(f"two processes, half the copies each, over vector 1 thr (this machine's 2-core "
              f"ceiling): {paired(times, '2 procs x half', 'vector 1 thr')}; each process outside "
              f"run_until, per step (median round): "
              + ", ".join(f"{1e3 * statistics.median(r[i] for r in halves.outside_s) / args.steps:.3f} ms"
                          for i in range(2)))
        print(f"vector 2 thr / two processes: {paired(times, 'vector 2 thr', '2 procs x half')} "
              f"({vecs['vector 2 thr'].layout})")
        print(f"vector 2 thr cg (copy groups, copy_parallel=True) / two processes: "
              f"{paired(times, 'vector 2 thr cg', '2 procs x half')}")
        print(f"vector 2 thr team (round by round, copy_parallel=False) / two processes: "
              f"{paired(times, 'vector 2 thr team', '2 procs x half')}")
        print(f"vector 2 thr groups ({groups.thread_choice.groups} groups of copies, an engine each, "
              f'copy_parallel="engines") / two processes: {paired(times, "vector 2 thr groups", "2 procs x half")}')
    if not args.no_supersuit:
        print(f"vector 1 thr / SuperSuit: {paired(times, 'vector 1 thr', 'supersuit 1 thr')}")
        print(f"vector 2 thr / SuperSuit: {paired(times, 'vector 2 thr', 'supersuit 1 thr')}")
    if args.aircraft_copies:
        aircraft(args)
    if not args.no_pufferlib:
        pufferlib_rows(args)


def _unspread(v, acts, engine_s):
    """_steps_timed with the team's spreading off (restored after)."""
    old = loop._set_team_spread(0)
    try:
        _steps_timed(v, acts, engine_s)
    finally:
        loop._set_team_spread(old)


def _moves_counted(run, moves, steps):
    """Run ``run()`` and add the team's moves off a teammate's CPU and the
    steps to ``moves``."""
    m0 = loop._team_spread_moves()
    run()
    moves["moves"] += loop._team_spread_moves() - m0
    moves["steps"] += steps


def aircraft(args):
    E, U, steps = args.aircraft_copies, 16, args.aircraft_steps
    kw, acts = aircraft_workload(E, steps, U)
    runners, layouts = {}, {}
    for name, t, cp in (("vector 1 thr", 1, None), ("vector 2 thr", 2, None),
                        ("vector 2 thr team", 2, False)):
        v = vector_env("aircraft_v0", E, num_threads=t, copy_parallel=cp, **kw)
        v.reset(seed=0)
        layouts[name] = v.layout
        runners[name] = (lambda v=v: [v.step(a) for a in acts])
    try:
        import torch
        import vmas
    except ImportError:
        vmas = None
        print("(VMAS not installed: pip install vmas==1.5.2 for its row)")
    if vmas is not None:
        torch.set_num_threads(1)
        venv = vmas.make_env("discovery", num_envs=E, device="cpu", continuous_actions=True,
                             n_agents=U, n_targets=2, seed=0)
        venv.reset()
        tacts = [[torch.from_numpy(a[:, i]) for i in range(U)] for a in acts]
        runners["VMAS discovery"] = (lambda: [venv.step(a) for a in tacts])
    times = interleave(runners, args.rounds)
    rate = median_rates(times, E * U * steps)
    print(f"\nAircraft {U} UAVs, {E} copies, {steps} steps x {args.rounds} interleaved rounds (median round)")
    print(f"{'runner':<21} {'agent steps/s':>14} {'env steps/s':>12}")
    for k, r in rate.items():
        print(f"{k:<21} {r:>14.0f} {r / U:>12.0f}")
    print(f"2-thread speedup of the vector env: {paired(times, 'vector 2 thr', 'vector 1 thr')}")
    if layouts["vector 2 thr"] != "team":
        print(f"vector 2 thr ({layouts['vector 2 thr']}) / the team (copy_parallel=False): "
              f"{paired(times, 'vector 2 thr', 'vector 2 thr team')}")
    if "VMAS discovery" in rate:
        print(f"vector 1 thr / VMAS: {paired(times, 'vector 1 thr', 'VMAS discovery')}")
        print(f"vector 2 thr / VMAS: {paired(times, 'vector 2 thr', 'VMAS discovery')}")


# --- PufferLib ---------------------------------------------------------------------


def _seer_block(env_id, E, t, kw, acts):
    """A vector env of ``E`` copies at ``t`` threads, reset and stepped once
    (warm-up); returns (timed steps, close)."""
    v = vector_env(env_id, E, num_threads=t, **kw)
    v.reset(seed=0)
    v.step(acts[0])
    return (lambda: [v.step(a) for a in acts]), v.close


def _puffer_block(env_id, E, kw, acts, backend, **extra):
    """PufferLib's ``backend`` over ``E`` single envs, reset and stepped once
    (warm-up: the workers' first step); returns (timed steps, close).  The
    close also joins the worker processes: ``Multiprocessing.close`` only
    sends them SIGTERM, and a worker still alive would take a core from the
    next runner."""
    pv = puffer_vec(env_id, E, backend, kw, **extra)
    pv.reset(seed=0)
    flat = [np.ascontiguousarray(a.reshape((-1,) + a.shape[2:])) for a in acts]
    pv.step(flat[0])

    def close():
        pv.close()
        for p in getattr(pv, "processes", ()):
            p.join(10)
    return (lambda: [pv.step(a) for a in flat]), close


def interleave_built(builders, rounds):
    """Like :func:`interleave`, but each runner exists only during its own
    timed block: each round, each builder makes its runner (env copies, worker
    processes), resets it and steps it once, untimed; the steps are timed; the
    runner is closed (worker processes joined), untimed, before the next is
    built.  So no runner's idle threads or processes (PufferLib's
    ``Multiprocessing`` workers poll their semaphore in a busy loop, for 0.5 s
    after their last step and then every 10 ms) run while another is timed."""
    times = {k: [] for k in builders}
    for _ in range(rounds):
        for k, build in builders.items():
            fn, close = build()
            try:
                t0 = time.perf_counter()
                fn()
                times[k].append(time.perf_counter() - t0)
            finally:
                close()
            gc.collect()
    return times


def _puffer_part(env_id, E, kw, acts, rounds):
    """Vector env (1 and 2 threads) against PufferLib's Serial and
    Multiprocessing (2 workers, one per core) over the same ``E`` copies and
    actions, interleaved in rounds, each runner built and closed around its
    own timed block (:func:`interleave_built`); prints rates and SEER's ratio
    to PufferLib's best backend per round."""
    import pufferlib.vector
    workers = min(2, os.cpu_count() or 1)
    builders = {f"vector {t} thr": functools.partial(_seer_block, env_id, E, t, kw, acts)
                for t in (1, 2)}
    builders["puffer Serial"] = functools.partial(_puffer_block, env_id, E, kw, acts,
                                                  pufferlib.vector.Serial)
    builders[f"puffer MP {workers}w"] = functools.partial(
        _puffer_block, env_id, E, kw, acts, pufferlib.vector.Multiprocessing,
        num_workers=workers, overwork=True)
    times = interleave_built(builders, rounds)
    puffer = [k for k in times if k.startswith("puffer")]
    times["puffer best"] = [min(r) for r in zip(*(times[k] for k in puffer))]
    rate = median_rates(times, E * len(acts))
    A = acts[0].shape[1]
    print(f"\n{env_id} {kw}, {E} copies, {len(acts)} steps x {rounds} interleaved rounds (median round; "
          f"each runner built before and closed after its own block); "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'runner':<21} {'env steps/s':>12} {'agent steps/s':>14}")
    for k, r in rate.items():
        print(f"{k:<21} {r:>12.0f} {r * A:>14.0f}")
    for t in (1, 2):
        print(f"vector {t} thr / PufferLib's best backend (each round's faster): "
              f"{paired(times, f'vector {t} thr', 'puffer best')}")


def pufferlib_rows(args):
    """PufferLib's Serial and Multiprocessing vectorisation of the single
    PettingZoo env beside the vector env: PCS ``--grid`` x ``--copies``
    and Aircraft 16 UAVs x ``--aircraft-copies`` (the target: the
    vector env >= 5x PufferLib's best backend on both)."""
    try:
        import pufferlib
        import pufferlib.vector  # noqa: F401
    except ImportError as e:
        print(f"\n(PufferLib not importable ({e}): pip install --no-deps pufferlib-core==3.0.23 "
              "for its rows; without --no-deps pip would replace torch with its pin, torch 2.9.0)")
        return
    print(f"\nPufferLib {pufferlib.__version__} (pufferlib-core), PettingZooPufferEnv over single envs")
    E, g = args.copies, args.grid
    kw, acts = pcs_workload(E, g, args.steps)
    _puffer_part("pcs_v0", E, kw, acts, args.rounds)
    if args.aircraft_copies:
        E = args.aircraft_copies
        kw, acts = aircraft_workload(E, args.aircraft_steps)
        _puffer_part("aircraft_v0", E, kw, acts, args.rounds)


if __name__ == "__main__":
    main()
