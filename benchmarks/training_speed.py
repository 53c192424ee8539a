# SPDX-License-Identifier: BSD-3-Clause
"""Training throughput: the env steps per second that reach the learner.

The IPPO trainers of the examples (``examples/cleanrl_ippo_pcs.py`` on
``pcs_hotspot_v1``, ``examples/cleanrl_ppo_aircraft.py`` on ``aircraft_v0``)
train for a few updates on each path, with the same seeds, PPO settings and
torch thread count, at each number of copies:

- ``seer_sync``: SEER's vector env, the rollout then the update;
- ``seer_overlap``: the same with ``--overlap`` (rollout k+1 collected by a
  thread with a frozen copy of policy k while update k runs, the one-update
  lag of ``seer_bench.ppo.Rollouts``);
- ``supersuit``, ``supersuit_mp``: SuperSuit's ``concat_vec_envs_v1`` over
  single SEER envs (1 thread each), in-process (``num_cpus=0``) and in its
  multiprocessing mode (``num_cpus``: the cores, at most the copies and a
  divisor of them);
- ``puffer_serial``, ``puffer_mp``: PufferLib's vectorisation
  (``PettingZooPufferEnv`` in ``pufferlib.vector``'s ``Serial`` and
  ``Multiprocessing`` backends) of the same single envs, when PufferLib is
  importable (``pip install --no-deps pufferlib-core==3.0.23``);
- ``seer_sync_aa``: ``seer_sync`` again, last: the A/A pair, whose ratio is
  the run's noise beside every other ratio.

Each row: ``train_env_steps_per_s`` (env steps, copies x steps, per second
of training wall time, from the first rollout's reset to the end of the
last update; the env's construction stays out, the first rollout, which
no path overlaps, stays in: with U updates overlap can at best turn U
rollouts and U updates into U + 1 of the longer, so more updates
(``--updates``) come nearer its steady state), ``steady_env_steps_per_s``
(the same from the end of update 0 on: the rate of a long run, where
rollout 0 is one of hundreds; ``steady_ratio_to_sync`` its ratio), and the shares of that
wall time spent in the env (``env_share``; for the vectorisers the whole
vector step, their pickling and process hops included), the rollout's
policy forward (``policy_share``), the PPO update (``update_share``) and
the rest (``glue_share``: GAE, the buffers, the rollout loop's own
Python).  Without overlap they sum to 1.  With it the rollout thread's
env and policy seconds run beside the update's, so they sum to more (the
learner's waits for the rollout thread are in no share).
``ratio_to_sync`` is the row's rate over ``seer_sync``'s at the same task
and copies (``seer_sync_aa``'s is the A/A).

``--to-target`` trains each path instead until its greedy policy reaches
the learning target of docs/baselines.md (PCS: the best constant's
held-out mean; Aircraft: half the heuristic's; ``baselines.learning_target``,
from the fixed policies on ``--target-seeds`` held-out seeds): evaluated
after every update on ``--target-eval-seeds`` other held-out seeds, the
evaluations' time taken out of the wall clock (an overlapped run's rollout
in flight is joined first, so none runs on for free), at most
``--max-env-steps`` a run.  It writes ``time_to_target.csv``: the
updates, env steps and wall seconds to the target per task, copies and
path (nan where a run ends without it); the rows of the (task, copies)
it did not run stay, so each may run with its own ``--max-env-steps``.

    python benchmarks/training_speed.py [--copies 8 32 64 128] [--tasks pcs aircraft]
        [--updates 8] [--env-threads 1] [--torch-threads 1] [--device cpu] [--out DIR]
    python benchmarks/training_speed.py --to-target [--max-env-steps 98304] [--out DIR]
    python benchmarks/training_speed.py --quick --out /tmp/ts     # the tests' size
    python benchmarks/training_speed.py --busy 1 --out /tmp/loaded   # beside a busy loop

Writes ``DIR/training_speed.csv`` (default ``benchmarks/results/training_speed``).
Sizes: PCS at the task's defaults (8 x 8 cells, 48 steps an episode),
Aircraft with 64 UAVs and 100-step episodes (shorter than any battery lasts:
SuperSuit refuses agent death); ``--quick``: 4 x 3 cells, 4 UAVs and
10-step episodes, 2 and 4 copies, 2 updates.  Timings of one run on a shared
machine are noisy: read the A/A beside the ratios.  ``--busy N`` runs
``N`` busy-loop processes (one core each) beside the whole run, any mode:
the training of a shared machine, the A/A still beside it; each row's
``busy`` says its load, and such a run may not write docs/evaluation.
"""

import argparse
import csv
import math
import os
import sys
import time

import numpy as np

from run_all import write_block as write_between      # README's marked blocks, one writer
from seer_bench.examples import load as load_example
from seer_bench.ppo import device, positive_int, threads
from seer_bench.vectorisers import PufferVec, SuperSuitVec, puffer_available, workers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TASKS = ("pcs", "aircraft")
PATHS = ("seer_sync", "seer_overlap", "supersuit", "supersuit_mp", "puffer_serial", "puffer_mp", "seer_sync_aa")
FIELDS = ("task", "env_id", "path", "copies", "agents_per_copy", "updates", "env_steps", "wall_s",
          "train_env_steps_per_s", "ratio_to_sync", "steady_env_steps_per_s", "steady_ratio_to_sync", "env_share", "policy_share", "update_share", "glue_share",
          "torch_threads", "env_threads", "env_threads_used", "device", "busy")


# --- one training run ------------------------------------------------------------

def sizes(task, quick):
    """The trainer's command line and the single env's parameters of a task."""
    if task == "pcs":
        mod = load_example("cleanrl_ippo_pcs")
        kw = dict(mod.ENV_KW, **(dict(grid_width=4, grid_height=3) if quick else {}))
        return mod, mod.ENV_ID, kw, []
    mod = load_example("cleanrl_ppo_aircraft")
    uavs, episode = (4, 10) if quick else (64, 100)
    kw = dict(num_uavs=uavs, max_cycles=episode, continuous_actions=True)
    return mod, "aircraft_v0", kw, ["--num-uavs", str(uavs), "--episode", str(episode)]


def make_venv(path, env_id, copies, kw, env_threads):
    import seer_envs
    if path.startswith("seer"):
        mode = {"autoreset_mode": "same_step"} if env_id == "aircraft_v0" else {}
        return seer_envs.vector_env(env_id, copies, num_threads=env_threads, **mode, **kw)
    if path == "supersuit":
        return SuperSuitVec(env_id, copies, num_cpus=0, **kw)
    if path == "supersuit_mp":
        return SuperSuitVec(env_id, copies, num_cpus=workers(copies), **kw)
    return PufferVec(env_id, copies, "serial" if path == "puffer_serial" else "mp", **kw)


def warm_auto(a):
    """With ``--env-threads auto``, one untimed reset of SEER's vector env
    per (task, copies) before the timed runs: STPA's first resolution in a
    process (its model, the hardware probes, the preflight where no choice
    is cached) would otherwise fall on the first timed run, SEER
    synchronous, every ratio's reference.  A training run pays it once in
    hundreds of updates, not once in 8."""
    for task in a.tasks:
        _, env_id, kw, _ = sizes(task, a.quick)
        for copies in a.copies:
            venv = make_venv("seer_sync", env_id, copies, kw, "auto")
            try:
                venv.reset(seed=0)
            finally:
                venv.close()


class Reached(Exception):
    """Raised by a run's ``hook`` to end it at its target."""


def train_row(task, path, copies, a, env_threads=None, torch_threads=None, hook=None):
    """Train ``a.updates`` updates on one path; returns its CSV row.
    ``env_threads``, ``torch_threads``: the pair (default ``a``'s);
    ``hook(row)`` sees each update's row (it may change its times, or
    raise :class:`Reached` to end the run there); ``a.env_steps``, where
    set, gives the updates instead (``--total-timesteps``)."""
    import torch
    env_threads = a.env_threads if env_threads is None else env_threads
    torch_threads = a.torch_threads if torch_threads is None else torch_threads
    mod, env_id, kw, extra = sizes(task, a.quick)
    length = ["--total-timesteps", str(a.env_steps)] if getattr(a, "env_steps", None) else ["--updates", str(a.updates)]
    argv = ["--seed", str(a.seed), "--num-envs", str(copies),
            "--torch-threads", str(torch_threads), "--device", a.device] + length + extra
    if path == "seer_overlap":
        argv.append("--overlap")
    targs = mod.make_parser().parse_args(argv)
    # "auto" resolves at each reset: an overlapped trainer's first reset
    # already sees the learner's cores reserved (seer_bench.ppo.Rollouts).
    venv = make_venv(path, env_id, copies, kw, env_threads)
    rows = []

    def each(r):
        rows.append(r)
        if hook is not None:
            hook(r)
    try:
        try:
            mod.train(targs, venv=venv, on_update=each)
        except Reached:
            pass
        used = getattr(venv, "num_threads", 1)       # what "auto" resolved to (the last reset's)
    finally:
        venv.close()
    torch.set_num_threads(a.torch_threads)
    d = rows[-1]                        # the whole run: the figures are sums from its start
    wall = d["wall_s"]
    r0 = rows[0]                        # after update 0: what no path overlaps is behind
    steady = (d["env_steps"] - r0["env_steps"]) / (wall - r0["wall_s"]) if len(rows) > 1 else float("nan")
    return {"task": task, "env_id": env_id, "path": path, "copies": copies, "agents_per_copy": venv.num_agents,
            "updates": len(rows), "env_steps": int(d["env_steps"]), "wall_s": round(wall, 4),
            "train_env_steps_per_s": d["env_steps"] / wall, "steady_env_steps_per_s": steady,
            "env_share": d["env_s"] / wall, "policy_share": d["policy_s"] / wall,
            "update_share": d["update_s"] / wall, "glue_share": d["glue_s"] / wall,
            "torch_threads": torch_threads, "env_threads": env_threads,
            "env_threads_used": used if path.startswith("seer") else 1, "device": a.device, "busy": a.busy}


# --- wall time to the baselines' learning target ------------------------------------

TARGET_FIELDS = ("task", "env_id", "path", "copies", "agents_per_copy", "target", "eval_seeds", "max_env_steps", "updates",
                 "env_steps", "updates_to_target", "env_steps_to_target", "wall_s_to_target",
                 "train_env_steps_per_s", "last_eval_return", "torch_threads", "env_threads", "device", "busy")


def measured_target(task, a):
    """(target return, what it is): docs/baselines.md's learning target of
    ``task`` (``baselines.learning_target``: PCS the best constant's
    held-out mean, Aircraft half the heuristic's), from the fixed policies
    on ``--target-seeds`` of its held-out seeds."""
    import baselines

    import seer_envs
    _, env_id, kw, _ = sizes(task, a.quick)
    fixed = (baselines.pcs_fixed_policies(seer_envs.get(env_id).build_config(kw).num_guard_actions)
             if task == "pcs" else baselines.aircraft_fixed_policies())
    seeds = range(baselines.EVAL_SEED0, baselines.EVAL_SEED0 + a.target_seeds)
    means = {n: float(np.mean(baselines.evaluate(env_id, pol, seeds, kw))) for n, pol in fixed.items()
             if n != "random"}
    return baselines.learning_target(baselines.PCS if task == "pcs" else baselines.AIRCRAFT, means)


def target_row(task, path, copies, a, target):
    """One run of ``path`` until its greedy policy's mean return on
    ``--target-eval-seeds`` held-out seeds (other than the target's first
    ones: from ``EVAL_SEED0 + --target-seeds`` on) reaches ``target``,
    evaluated after every update, or until ``--max-env-steps``.  The
    evaluations' time is taken out of the wall clock; an overlapped run's
    rollout in flight is joined before each (the learner's wait, counted),
    so no rollout runs on during one."""
    import copy

    import baselines

    from seer_bench.ppo import wait_for_rollouts
    _, env_id, kw, _ = sizes(task, a.quick)
    first = baselines.EVAL_SEED0 + a.target_seeds
    seeds = range(first, first + a.target_eval_seeds)
    policies = baselines.pcs_policies if task == "pcs" else baselines.aircraft_policies
    spent, evals = [0.0], []

    def hook(r):
        wait_for_rollouts()
        t = time.perf_counter()
        r["wall_s"] -= spent[0]
        r["glue_s"] -= spent[0]
        greedy = policies(copy.deepcopy(r["agent"]).cpu())["greedy"]       # a copy: the learner may be on a GPU
        ret = float(np.mean(baselines.evaluate(env_id, greedy, seeds, kw)))
        evals.append((r["update"], r["env_steps"], r["wall_s"], ret))
        spent[0] += time.perf_counter() - t
        if ret >= target:
            raise Reached
    row = train_row(task, path, copies, a, hook=hook)
    hit = next((e for e in evals if e[3] >= target), None)
    nan = float("nan")
    return dict(row, target=target, eval_seeds=len(seeds), max_env_steps=a.max_env_steps, last_eval_return=evals[-1][3],
                updates_to_target=hit[0] if hit else nan, env_steps_to_target=hit[1] if hit else nan,
                wall_s_to_target=hit[2] if hit else nan)


def to_target(a, paths):
    """Every path at every copy count until the learning target (or
    ``--max-env-steps``); writes ``time_to_target.csv``, prints the table."""
    from tqdm import tqdm
    a.env_steps = a.max_env_steps
    targets = {}
    for task in a.tasks:
        targets[task] = ((a.target_return, "--target-return") if a.target_return is not None
                         else measured_target(task, a))
        print(f"{task}: target {targets[task][0]:.2f}, {targets[task][1]}"
              + ("" if a.target_return is not None else f" on {a.target_seeds} held-out seeds"))
    rows = []
    jobs = [(t, c, x) for t in a.tasks for c in a.copies for x in paths]
    with tqdm(total=len(jobs), desc="time to target", unit="run", file=sys.stderr) as bar:
        for task, copies, path in jobs:
            bar.set_postfix_str(f"{task} {copies} copies {path}")
            rows.append(target_row(task, path, copies, a, targets[task][0]))
            bar.update(1)
    os.makedirs(a.out, exist_ok=True)
    out = os.path.join(a.out, "time_to_target.csv")
    mine = {(t, c) for t in a.tasks for c in a.copies}
    kept = [r for r in _read(a.out, "time_to_target.csv") if (r["task"], int(r["copies"])) not in mine]
    write_rows(out, kept + rows, TARGET_FIELDS)       # this run's (task, copies) replace theirs; the others stay
    print(f"\nwall time to the learning target (greedy, {a.target_eval_seeds} held-out seeds after every update; "
          f"at most {a.max_env_steps} env steps a run):")
    print(f"{'task':<9}{'copies':>7}  {'path':<14}{'updates':>8}{'env steps':>10}{'wall s':>8}{'x sync':>8}"
          f"{'steps/s':>9}{'last eval':>10}")
    for r in rows:
        ref = next(s for s in rows if s["task"] == r["task"] and s["copies"] == r["copies"] and s["path"] == "seer_sync")
        print(f"{r['task']:<9}{r['copies']:>7}  {r['path']:<14}{r['updates_to_target']:>8}"
              f"{r['env_steps_to_target']:>10}{r['wall_s_to_target']:>8.1f}"
              f"{ref['wall_s_to_target'] / r['wall_s_to_target']:>8.2f}{r['train_env_steps_per_s']:>9.0f}"
              f"{r['last_eval_return']:>10.2f}")
    print(f"(x sync: seer_sync's wall time to the target over the row's; nan: not reached)\nwrote {out}"
          + (f" (kept its rows of {', '.join(sorted({r['task'] + ' ' + r['copies'] for r in kept}))})"
             if kept else ""))
    publish(a.out)
    return 0


# --- threads shared with the learner -------------------------------------------------

def _base_path(path):
    """The path a thread-pairs row ran: ``seer_sync_aa`` / ``seer_sync_first`` -> ``seer_sync``."""
    return path.removesuffix("_aa").removesuffix("_first")


def thread_pairs(a):
    """SEER sync and overlapped on each task at every fixed (env threads,
    torch threads) pair up to the usable CPUs and at env ``"auto"`` (which
    leaves an overlapped learner its cores: seer_runtime.reserve_cores),
    then (1, 1) again as the A/A.  ``"auto"`` runs twice at each torch
    count: first with STPA's cache emptied (path ``<path>_first``: the
    timed run pays the preflight and the tuner's closed loop, as a
    configuration's first run on a machine does), then with the choice
    cached (every later run).  STPA's cache is a file of this run's own,
    not the user's.  Writes ``thread_pairs.csv``; prints auto's rate over
    the best fixed pair's."""
    import tempfile

    import seer_runtime
    import stpa
    from tqdm import tqdm
    cpus = seer_runtime.available_cpus()
    counts = list(range(1, cpus + 1))
    jobs = []
    for task in a.tasks:
        copies = a.copies[0] if a.copies else (4 if a.quick else {"pcs": 64, "aircraft": 32}[task])
        for path in ("seer_sync", "seer_overlap"):
            for t in counts:
                jobs += [(task, copies, path, e, t) for e in counts]
                jobs += [(task, copies, path + "_first", "auto", t), (task, copies, path, "auto", t)]
            jobs.append((task, copies, path + "_aa", 1, 1))
    rows = []
    user_cache = os.environ.get("STPA_CACHE")
    os.environ["STPA_CACHE"] = os.path.join(tempfile.mkdtemp(prefix="seer-thread-pairs-"), "stpa.json")
    try:
        with tqdm(total=len(jobs), desc="thread pairs", unit="run", file=sys.stderr) as bar:
            for task, copies, path, e, t in jobs:
                bar.set_postfix_str(f"{task} {copies} copies {path} env {e} torch {t}")
                if path.endswith("_first"):
                    stpa.clear_cache(disk=True)
                r = train_row(task, _base_path(path), copies, a,
                              env_threads=e, torch_threads=t)
                rows.append(dict(r, path=path))
                bar.update(1)
    finally:
        if user_cache is None:
            os.environ.pop("STPA_CACHE", None)
        else:
            os.environ["STPA_CACHE"] = user_cache
    for r in rows:
        ref = next(s for s in rows if s["task"] == r["task"]
                   and s["path"] == _base_path(r["path"])
                   and s["env_threads"] == 1 and s["torch_threads"] == 1)
        r["ratio_to_sync"] = r["train_env_steps_per_s"] / ref["train_env_steps_per_s"]
        r["steady_ratio_to_sync"] = r["steady_env_steps_per_s"] / ref["steady_env_steps_per_s"]
    os.makedirs(a.out, exist_ok=True)
    out = os.path.join(a.out, "thread_pairs.csv")
    write_rows(out, rows)
    print(f"\ntraining env steps/s by (env threads, torch threads), {a.updates} updates a run, {cpus} usable CPUs:")
    for task in a.tasks:
        for path in ("seer_sync", "seer_overlap"):
            sel = [r for r in rows if r["task"] == task and r["path"] == path]
            fixed = max((r for r in sel if r["env_threads"] != "auto"), key=lambda r: r["train_env_steps_per_s"])
            aa = next(r for r in rows if r["task"] == task and r["path"] == path + "_aa")
            for r in sel:
                print(f"  {task:<9}{path:<14}env {str(r['env_threads']):>4} (used {r['env_threads_used']}) "
                      f"torch {r['torch_threads']}: {r['train_env_steps_per_s']:9.0f}")
            first = [r for r in rows if r["task"] == task and r["path"] == path + "_first"]
            print(f"  {task} {path}: best fixed pair env {fixed['env_threads']}, torch {fixed['torch_threads']}; "
                  + ", ".join(f"auto with torch {r['torch_threads']}: "
                              f"{r['train_env_steps_per_s'] / fixed['train_env_steps_per_s']:.2f}x of it"
                              for r in sel if r["env_threads"] == "auto")
                  + "; its first use: " + ", ".join(f"{r['train_env_steps_per_s'] / fixed['train_env_steps_per_s']:.2f}x"
                                                   for r in first)
                  + f"; A/A (1, 1) again: {aa['ratio_to_sync']:.2f}")
    print(f"wrote {out}")
    publish(a.out)
    return 0


def write_rows(path, rows, fields=FIELDS):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows:       # a column an older file lacks (its rows kept by --to-target) stays empty
            w.writerow({k: (f"{r[k]:.4g}" if isinstance(r.get(k), float) and not k.startswith("wall_s")
                            else r.get(k, "")) for k in fields})


# --- README's training-throughput block -----------------------------------------------

README = os.path.join(ROOT, "README.md")
PUBLISHED = os.path.join(ROOT, "docs", "evaluation")
BLOCK = ("<!-- written by benchmarks/training_speed.py: training throughput -->",
         "<!-- end of training_speed.py's training throughput -->")


def _read(folder, name):
    try:
        with open(os.path.join(folder, name), newline="") as f:
            return list(csv.DictReader(f))
    except OSError:
        return []


def readme_block(folder=PUBLISHED):
    """README's training-throughput table, from ``training_speed.csv`` (and
    ``thread_pairs.csv`` where present) in ``folder``; None without the
    first.  Per task and copies: SEER synchronous's rate, the others' over
    it, overlapped over the best vectoriser, and the A/A."""
    rows = _read(folder, "training_speed.csv")
    if not rows:
        return None
    rate = {(r["task"], int(r["copies"]), r["path"]): float(r["train_env_steps_per_s"]) for r in rows}
    # the rate from the end of update 0 on (absent from runs written before it was kept)
    steady = {(r["task"], int(r["copies"]), r["path"]): float(r["steady_env_steps_per_s"])
              for r in rows if r.get("steady_env_steps_per_s")}
    sync_rows = {(r["task"], int(r["copies"])): r for r in rows if r["path"] == "seer_sync"}
    r0 = rows[0]
    out = ["| task, copies | SEER's env alone: steps/s | SEER sync: training env steps/s (update's share) "
           "| SEER overlapped | SuperSuit, best mode | PufferLib, best backend "
           "| overlapped / best of SuperSuit and PufferLib | A/A |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for task, copies in sorted(sync_rows, key=lambda k: (TASKS.index(k[0]), k[1])):
        sr = sync_rows[(task, copies)]
        sync = rate[(task, copies, "seer_sync")]
        best = {fam: max((v for (t, c, x), v in rate.items() if t == task and c == copies and x.startswith(fam)),
                         default=None) for fam in ("supersuit", "puffer")}
        over = rate.get((task, copies, "seer_overlap"))
        vec = max((v for v in best.values() if v is not None), default=None)

        def cell(path_of, over_of=None):
            """``whole run (steady)`` ratio of a path over sync, or over ``over_of``'s best."""
            def ratio(r):
                num = max((v for (t, c, x), v in r.items() if t == task and c == copies and path_of(x)), default=None)
                den = (r.get((task, copies, "seer_sync")) if over_of is None else
                       max((v for (t, c, x), v in r.items() if t == task and c == copies and over_of(x)), default=None))
                return None if num is None or not den else num / den
            whole, st = ratio(rate), ratio(steady)
            return "-" if whole is None else f"{whole:.2f}x" + ("" if st is None else f" ({st:.2f}x)")
        is_vec = lambda x: x.startswith(("supersuit", "puffer"))  # noqa: E731
        alone = sync / float(sr["env_share"])      # the env's own seconds of the synchronous run
        out.append(f"| {task}, {copies} | {alone:,.0f} | {sync:,.0f} ({float(sr['update_share']):.0%}) "
                   f"| {cell(lambda x: x == 'seer_overlap')} "
                   f"| {cell(lambda x: x.startswith('supersuit'))} | {cell(lambda x: x.startswith('puffer'))} "
                   f"| {'-' if over is None or vec is None else cell(lambda x: x == 'seer_overlap', is_vec)} "
                   f"| {cell(lambda x: x == 'seer_sync_aa')} |")
    out.append("")
    out.append(f"The env alone: env steps over the env's own seconds in the synchronous run (the ceiling were the "
               f"policy and the update free). The other columns: ratios over SEER synchronous at the "
               f"same task and copies ({r0['updates']} PPO updates a run, "
               f"torch at {r0['torch_threads']} thread(s) on `{r0['device']}`, SEER's env at "
               f"{r0['env_threads']} thread(s)); the A/A is SEER synchronous run again last: ratios inside "
               f"its distance from 1 are noise. In brackets, where the run kept it: the same ratio from the end "
               f"of update 0 on, the steady state of a long run (rollout 0, which no path overlaps, is one "
               f"update in {r0['updates']} here and one in hundreds in training).")
    pairs = _read(folder, "thread_pairs.csv")
    for task in TASKS:
        for path in ("seer_sync", "seer_overlap"):
            sel = [r for r in pairs if r["task"] == task and r["path"] == path]
            fixed = [r for r in sel if r["env_threads"] != "auto"]
            if not fixed:
                continue
            top = max(fixed, key=lambda r: float(r["train_env_steps_per_s"]))
            def same_torch(r):        # auto picks the env's count only: the best at the user's torch count
                return max(float(x["train_env_steps_per_s"]) for x in fixed if x["torch_threads"] == r["torch_threads"])
            first = {r["torch_threads"]: float(r["train_env_steps_per_s"]) for r in pairs
                     if r["task"] == task and r["path"] == path + "_first"}

            def first_use(r):         # the run that found STPA's cache empty
                v = first.get(r["torch_threads"])
                return "" if v is None else f"; its first use {v / same_torch(r):.2f}x"
            autos = ", ".join(f"torch {r['torch_threads']}: "
                              f"{float(r['train_env_steps_per_s']) / float(top['train_env_steps_per_s']):.2f}x "
                              f"({float(r['train_env_steps_per_s']) / same_torch(r):.2f}x of the best env count "
                              f"at that torch count{first_use(r)})"
                              for r in sel if r["env_threads"] == "auto")
            aa = next((float(r["ratio_to_sync"]) for r in pairs if r["task"] == task and r["path"] == path + "_aa"),
                      float("nan"))
            out.append(f"- {task} ({sel[0]['copies']} copies), {path.replace('seer_', 'SEER ')}: env "
                       f"`\"auto\"` over the best fixed (env, torch) threads pair (env {top['env_threads']}, "
                       f"torch {top['torch_threads']}): {autos} (A/A {aa:.2f})")
    extra = [float(f["wall_s"]) - float(w["wall_s"]) for f in pairs if f["path"].endswith("_first")
             for w in pairs if w["task"] == f["task"] and w["path"] == f["path"].removesuffix("_first")
             and w["env_threads"] == "auto" and w["torch_threads"] == f["torch_threads"]]
    if extra:
        out.append("")
        out.append("`\"auto\"` with STPA's choice cached, as every run after a configuration's first on a "
                   "machine finds it; \"first use\": the same run with the cache emptied, which pays STPA's "
                   "preflight and the tuner's closed loop inside the timed run (its wall time minus the cached "
                   f"run's: {min(extra):.1f} to {max(extra):.1f} s here).")
    out += target_block(folder)
    return "\n".join(out)


#: The paths' names in README's tables.
NAMES = {"seer_sync": "SEER sync", "seer_overlap": "SEER overlapped", "supersuit": "SuperSuit in-process",
         "supersuit_mp": "SuperSuit multiprocessing", "puffer_serial": "PufferLib Serial",
         "puffer_mp": "PufferLib Multiprocessing", "seer_sync_aa": "A/A (SEER sync again)"}


def target_block(folder):
    """README's lines of the wall time to the learning target, from
    ``time_to_target.csv`` in ``folder`` (none without it): per task and
    copies, SEER synchronous's seconds and env steps to the target, every
    other path's speed-up over it (its seconds over theirs) and its own
    env steps to it."""
    rows = _read(folder, "time_to_target.csv")
    if not rows:
        return []
    got = {(r["task"], int(r["copies"]), r["path"]): (float(r["wall_s_to_target"]), r["env_steps_to_target"])
           for r in rows}
    tasks = sorted({r["task"] for r in rows}, key=TASKS.index)
    paths = [x for x in PATHS[1:] if any(r["path"] == x for r in rows)]
    def caps(t):                      # a (task, copies) may have run with its own --max-env-steps
        c = sorted({int(r["max_env_steps"]) for r in rows if r["task"] == t})
        return f"{c[0]:,}" if len(c) == 1 else f"{c[0]:,}-{c[-1]:,}"
    cap = " and ".join(f"{caps(t)} ({t})" for t in tasks)
    out = ["", "Wall time to the learning target of [docs/baselines.md](docs/baselines.md) (PCS: the best "
           "constant's held-out mean; Aircraft: half the heuristic's), from `python benchmarks/training_speed.py "
           "--to-target` (docs/evaluation/time_to_target.csv): the same trainer, paths and seed, each run "
           f"until its greedy policy reaches it on {rows[0]['eval_seeds']} held-out seeds, evaluated after every "
           f"update (the evaluations' time taken out), at most {cap} env steps a run. The other columns: SEER "
           "synchronous's time over the path's (above 1: sooner), and in brackets the path's own env steps to "
           "the target. SuperSuit in-process and PufferLib's `Serial` see SEER's episodes and learn its curve; "
           "the overlap learns from batches one update old, and the multiprocessing modes from other episodes "
           "(SuperSuit's workers seed their copies from overlapping seeds, PufferLib's reset once), so their "
           "env steps to the target differ: compare their times where the env steps agree (an evaluation on "
           f"{rows[0]['eval_seeds']} seeds is noisy, and a run can cross the line early by chance).", "",
           "| task, copies | SEER sync: wall s to target (env steps) | " + " | ".join(NAMES[x] for x in paths) + " |",
           "| --- | --- | " + " | ".join("---" for _ in paths) + " |"]
    for task, copies in sorted({(r["task"], int(r["copies"])) for r in rows}, key=lambda k: (TASKS.index(k[0]), k[1])):
        sync, steps = got[(task, copies, "seer_sync")]

        def cell(path):
            if (task, copies, path) not in got:
                return "-"
            wall, n = got[(task, copies, path)]
            if math.isnan(wall):
                return "not reached"
            return "-" if math.isnan(sync) else f"{sync / wall:.2f}x ({float(n):,.0f})"
        first = "not reached" if math.isnan(sync) else f"{sync:.1f} ({float(steps):,.0f})"
        out.append(f"| {task}, {copies} | {first} | " + " | ".join(cell(x) for x in paths) + " |")
    return out


def write_block(path, text):
    """Replace the text between the BLOCK markers of ``path`` (run_all's
    writer); False when it has none."""
    return write_between(path, text, BLOCK)


def publish(out):
    """A run written to docs/evaluation rewrites README's block from it."""
    if os.path.realpath(out) == os.path.realpath(PUBLISHED):
        text = readme_block(out)
        if text and write_block(README, text):
            print("wrote README.md's training-throughput block")


# --- the command line --------------------------------------------------------------

def make_parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="the tests' size: tiny envs, 2 and 4 copies, 2 updates")
    p.add_argument("--copies", type=positive_int, nargs="+", default=None,
                   help="numbers of copies (default 8 32 64 128; --quick: 2 4)")
    p.add_argument("--tasks", nargs="+", choices=TASKS, default=list(TASKS))
    p.add_argument("--paths", nargs="+", choices=PATHS, default=list(PATHS),
                   help="the paths to run (seer_sync always runs first: the ratios' reference)")
    p.add_argument("--updates", type=positive_int, default=None,
                   help="PPO updates per run (default 8; --quick: 2)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--torch-threads", type=positive_int, default=1, help="torch's intra-op threads, every path")
    p.add_argument("--env-threads", type=threads, default=1,
                   help='SEER vector env threads ("auto" or an int; the vectorisers\' single envs: 1)')
    p.add_argument("--device", type=device, default="cpu", help="the learner's torch device: cpu, cuda or cuda:N")
    p.add_argument("--thread-pairs", action="store_true",
                   help="instead of the paths: SEER sync and overlapped at every (env threads, torch threads) "
                        "pair up to the usable CPUs and with the env at \"auto\", plus an A/A of (1, 1); "
                        "writes thread_pairs.csv (default copies: PCS 64, Aircraft 32; --quick: 4)")
    p.add_argument("--to-target", action="store_true",
                   help="instead of the fixed updates: each path until its greedy policy reaches docs/baselines.md's "
                        "learning target (PCS: the best constant's held-out mean; Aircraft: half the heuristic's); "
                        "writes time_to_target.csv")
    p.add_argument("--target-return", type=float, default=None,
                   help="--to-target: this return instead of the baselines' target, on every task")
    p.add_argument("--max-env-steps", type=positive_int, default=None,
                   help="--to-target: a run's most env steps (default 98304; --quick: 400)")
    p.add_argument("--target-seeds", type=positive_int, default=None,
                   help="--to-target: held-out seeds of the target's fixed policies (default 64; --quick: 4)")
    p.add_argument("--target-eval-seeds", type=positive_int, default=None,
                   help="--to-target: held-out seeds of each evaluation of the learner (default 8; --quick: 2)")
    p.add_argument("--busy", type=int, default=0,
                   help="busy-loop processes (one core each) running beside the whole run: training on a "
                        "shared machine (the rows' busy column says so; not into docs/evaluation)")
    p.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "training_speed"),
                   help="folder of training_speed.csv")
    return p


def main(argv=None):
    p = make_parser()
    a = p.parse_args(argv)
    if a.device.startswith("cuda"):
        import torch
        if not torch.cuda.is_available():
            p.error(f"--device {a.device}: torch sees no CUDA device here")
    if a.to_target and a.thread_pairs:
        p.error("--to-target and --thread-pairs are two different runs: give one")
    given = [f for f in ("target_return", "max_env_steps", "target_seeds", "target_eval_seeds")
             if getattr(a, f) is not None]
    if given and not a.to_target:
        p.error(f"--{given[0].replace('_', '-')} is a setting of --to-target, which is not given")
    if a.to_target and a.updates is not None:
        p.error("--updates: --to-target runs each path until the target (--max-env-steps bounds it)")
    if a.busy < 0:
        p.error(f"--busy: a number of busy-loop processes, 0 or more, got {a.busy}")
    if a.busy and os.path.realpath(a.out) == os.path.realpath(PUBLISHED):
        p.error("--busy: a loaded run is not the published one: give another --out")
    a.updates = a.updates or (2 if a.quick else 8)
    from seer_bench import load1, start_busy, stop
    procs = start_busy(a.busy)
    try:
        if a.busy:
            print(f"{a.busy} busy-loop process(es) beside this run; load average {load1():.1f} at the start")
        return run(p, a)
    finally:
        stop(procs)
        if a.busy:
            print(f"load average {load1():.1f} at the end (the busy loops' included)")


def run(p, a):
    """The run :func:`main` parsed and checked, with its ``--busy`` load on."""
    if a.thread_pairs:
        return thread_pairs(a)
    a.copies = a.copies or ([2, 4] if a.quick else [8, 32, 64, 128])
    paths = ["seer_sync"] + [x for x in PATHS if x in a.paths and x != "seer_sync"]
    if not puffer_available() and any(x.startswith("puffer") for x in paths):
        print("PufferLib is not importable (pip install --no-deps pufferlib-core==3.0.23): "
              "its paths are left out", file=sys.stderr)
        paths = [x for x in paths if not x.startswith("puffer")]
    if any(x.startswith("supersuit") for x in paths):
        try:
            import supersuit  # noqa: F401
        except ImportError:
            p.error("SuperSuit is not importable (pip install supersuit), or leave its paths out (--paths)")
    if a.to_target:
        a.max_env_steps = a.max_env_steps or (400 if a.quick else 98_304)
        a.target_seeds = a.target_seeds or (4 if a.quick else 64)
        a.target_eval_seeds = a.target_eval_seeds or (2 if a.quick else 8)
        return to_target(a, paths)
    os.makedirs(a.out, exist_ok=True)
    from tqdm import tqdm
    rows = []
    t0 = time.perf_counter()
    if a.env_threads == "auto":
        warm_auto(a)
    jobs = [(t, c, x) for t in a.tasks for c in a.copies for x in paths]
    with tqdm(total=len(jobs), desc="training speed", unit="run", file=sys.stderr) as bar:
        for task, copies, path in jobs:
            bar.set_postfix_str(f"{task} {copies} copies {path}")
            rows.append(train_row(task, path, copies, a))
            bar.update(1)
    for r in rows:
        ref = next(s for s in rows if s["task"] == r["task"] and s["copies"] == r["copies"]
                   and s["path"] == "seer_sync")
        r["ratio_to_sync"] = r["train_env_steps_per_s"] / ref["train_env_steps_per_s"]
        r["steady_ratio_to_sync"] = r["steady_env_steps_per_s"] / ref["steady_env_steps_per_s"]
    path = os.path.join(a.out, "training_speed.csv")
    write_rows(path, rows)
    print(f"\ntraining env steps/s ({a.updates} updates a run, torch threads {a.torch_threads}, "
          f"SEER env threads {a.env_threads}, device {a.device}; {time.perf_counter() - t0:.0f} s):")
    print(f"{'task':<9}{'copies':>7}  {'path':<14}{'steps/s':>10}{'x sync':>8}{'steady':>8}{'x sync':>8}"
          f"{'env':>7}{'policy':>7}{'update':>7}{'glue':>7}")
    for r in rows:
        print(f"{r['task']:<9}{r['copies']:>7}  {r['path']:<14}{r['train_env_steps_per_s']:>10.0f}"
              f"{r['ratio_to_sync']:>8.2f}{r['steady_env_steps_per_s']:>8.0f}{r['steady_ratio_to_sync']:>8.2f}"
              f"{r['env_share']:>7.2f}{r['policy_share']:>7.2f}{r['update_share']:>7.2f}{r['glue_share']:>7.2f}")
    print(f"(x sync: over seer_sync at the same task and copies; seer_sync_aa's is the A/A; steady: "
          f"from the end of update 0 on)\nwrote {path}")
    publish(a.out)
    bad = [r for r in rows if not all(math.isfinite(r[k]) for k in ("train_env_steps_per_s", "env_share"))]
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
