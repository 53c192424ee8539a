# SPDX-License-Identifier: BSD-3-Clause
"""Baselines a researcher can cite, in one command.

    python benchmarks/baselines.py [--quick] [--budget X] [--train-seeds N] [--eval-seeds N]
        [--tasks pcs_hotspot_v1,aircraft_v0] [--no-speed] [--speed-seeds N]
        [--aircraft-target F] [--out DIR] [--report PATH]

For each task (``pcs_hotspot_v1``; ``aircraft_v0``) it evaluates a uniformly
random policy, every constant action (PCS: each guard; Aircraft: zero
acceleration) and the task's hand-written heuristic, and trains IPPO and
MAPPO (the CleanRL examples' trainers, imported from ``examples/``:
``cleanrl_ippo_pcs``, ``cleanrl_mappo_pcs``, ``cleanrl_ppo_aircraft`` (the
parameter-shared PPO, i.e. IPPO) and ``cleanrl_mappo_aircraft``) on ``--train-seeds``
seeds; every policy is evaluated on ``--eval-seeds`` held-out seeds
(10000, 10001, ...; training never uses them).  Means come with 95%
bootstrap confidence intervals (``scipy.stats.bootstrap``): over the
evaluation seeds for the fixed policies, over the training seeds (each
run's mean over the evaluation seeds) for the learned ones; the adaptive
rule's advantage over the best constant is a paired bootstrap over the
evaluation seeds.

The speed part trains the same IPPO on each task through SEER's vector
env and through SuperSuit's ``concat_vec_envs_v1`` over single SEER envs,
with the same seeds, the two paths alternating (and checks that the
training returns of every update are the same on both): training env steps
per second, and the env steps and wall time at which the training return
first reaches a target: the best constant's held-out mean on PCS,
``--aircraft-target`` (0.5) x the heuristic's held-out mean on Aircraft
(the report says why, from the run's own curves).

Writes raw CSVs (``curves.csv``: one row per update of every run;
``eval.csv``: one row per policy, run and evaluation seed;
``speed.csv``) and the learning-curve PNGs (return against env steps and
against wall time) to ``--out``, and the report (``--report``, default
docs/baselines.md, its PNGs under ``plots/baselines/`` beside it), which
names the machine, the versions, the budget and the command.

``--budget`` scales every training budget (updates) by X: 1.0 is PCS 150
updates of 16 copies and Aircraft 200 updates of 2 copies of 64 UAVs (the
report gives the run's wall time); a bigger machine can raise it.
``--quick`` is the test's size: 2 training seeds, 4 evaluation seeds,
2 updates, small Aircraft.
"""

import argparse
import csv
import json
import os
import platform
import sys
import time

import numpy as np

from seer_bench.examples import load as load_example
from seer_bench.vectorisers import SuperSuitVec

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

EVAL_SEED0 = 10_000
PCS = "pcs_hotspot_v1"
AIRCRAFT = "aircraft_v0"
TASKS = (PCS, AIRCRAFT)
#: The speed part's Aircraft target: this fraction of the heuristic's held-out mean.
AIRCRAFT_TARGET = 0.5


# --- budgets -----------------------------------------------------------------

def budgets(a):
    """Per task: the trainers' settings at this budget."""
    if a.quick:
        return {PCS: dict(updates=2, num_envs=2),
                AIRCRAFT: dict(updates=2, num_envs=2, num_uavs=8, episode=20)}
    return {PCS: dict(updates=max(1, round(150 * a.budget)), num_envs=16),
            AIRCRAFT: dict(updates=max(1, round(200 * a.budget)), num_envs=2, num_uavs=64, episode=100)}


# --- statistics ----------------------------------------------------------------

def ci95(values):
    """(mean, low, high): the mean and its 95% bootstrap interval (BCa where
    it is defined, else percentile; a single value: itself)."""
    from scipy.stats import bootstrap
    x = np.asarray(values, np.float64)
    m = float(x.mean())
    if len(x) < 2 or np.all(x == x[0]):
        return m, m, m
    res = bootstrap((x,), np.mean, confidence_level=0.95, n_resamples=4999, random_state=0,
                    method="BCa" if len(x) >= 8 else "percentile")
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        lo, hi = float(np.percentile(x, 2.5)), float(np.percentile(x, 97.5))
    return m, lo, hi


def plural(n, word):
    return f"{n} {word}" + ("" if n == 1 else "s")


def ci95_diff(x, y, n_resamples=4999):
    """(mean(x) - mean(y), low, high): the difference of two independent
    groups' means with a 95% percentile interval from resampling each group."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    d = float(x.mean() - y.mean())
    rng = np.random.default_rng(0)
    boots = [x[rng.integers(0, len(x), len(x))].mean() - y[rng.integers(0, len(y), len(y))].mean()
             for _ in range(n_resamples)]
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return d, float(lo), float(hi)


def iqm95(runs, n_resamples=2000):
    """(IQM, low, high) of the scores of ``runs`` (a list of per-seed score
    lists): the 25%-trimmed mean of every score, and a 95% percentile
    interval from resampling the runs with replacement (one run: its seeds)."""
    from scipy.stats import trim_mean
    runs = [np.asarray(r, np.float64) for r in runs]
    pooled = np.concatenate(runs)
    q = float(trim_mean(pooled, 0.25))
    rng = np.random.default_rng(0)
    if len(runs) == 1:
        x = runs[0]
        boots = [trim_mean(x[rng.integers(0, len(x), len(x))], 0.25) for _ in range(n_resamples)]
    else:
        boots = [trim_mean(np.concatenate([runs[i] for i in rng.integers(0, len(runs), len(runs))]), 0.25)
                 for _ in range(n_resamples)]
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return q, float(lo), float(hi)


#: How a learned policy is evaluated: its most likely action, and an action drawn from it.
MODES = ("greedy", "sampled")


# --- evaluation ----------------------------------------------------------------

def evaluate(env_id, policy, seeds, env_kw, num_threads=1):
    """Per-seed mean-per-agent episode returns of ``policy(env, obs, rng)``."""
    import seer_envs
    out = []
    for s in seeds:
        env = seer_envs.make(env_id, num_threads=num_threads, **env_kw)
        obs = env.reset_arrays(seed=s)
        rng = np.random.default_rng(s)
        ret = 0.0
        while env.agents:
            obs, rew, _, _ = env.step_arrays(policy(env, obs, rng))
            ret += float(rew.mean(dtype=np.float64))
        out.append(ret)
    return out


def pcs_fixed_policies(n_actions):
    from seer_envs.pcs.heuristic import rush_guard
    pols = {"random": lambda e, o, rng: rng.integers(0, n_actions, len(o))}
    for g in range(n_actions):
        pols[f"constant guard {g}"] = lambda e, o, rng, g=g: np.full(len(o), g, np.int64)
    pols["heuristic (rush rule)"] = lambda e, o, rng: rush_guard(e, o)
    return pols


def aircraft_fixed_policies():
    from seer_envs.aircraft.heuristic import heuristic_command

    def clip(x):
        return np.clip(x, -1, 1).astype(np.float32)
    return {"random": lambda e, o, rng: clip(rng.uniform(-1, 1, (len(o), 2))),
            "constant zero acceleration": lambda e, o, rng: np.zeros((len(o), 2), np.float32),
            "heuristic (steer + separate)": lambda e, o, rng: clip(heuristic_command(e, o))}


# --- training -----------------------------------------------------------------

def pcs_policies(agent):
    """{"greedy": the actor's most likely guard, "sampled": a guard drawn
    from it with the evaluation's generator} of a PCS agent."""
    import torch

    def greedy(env, obs, rng):
        with torch.no_grad():
            return agent.actor(torch.from_numpy(obs)).argmax(-1).numpy()

    def sampled(env, obs, rng):
        with torch.no_grad():
            p = torch.softmax(agent.actor(torch.from_numpy(obs)).double(), -1).numpy()
        return np.minimum((rng.random((len(p), 1)) > np.cumsum(p, -1)).sum(-1), p.shape[-1] - 1)
    return {"greedy": greedy, "sampled": sampled}


def aircraft_policies(agent):
    """{"greedy": the mean action, "sampled": an action drawn from the
    Gaussian with the evaluation's generator} of an Aircraft agent."""
    import torch

    def greedy(env, obs, rng):
        with torch.no_grad():
            return np.clip(agent.policy_mean(torch.from_numpy(obs)).numpy(), -1, 1).astype(np.float32)

    def sampled(env, obs, rng):
        with torch.no_grad():
            mean = agent.policy_mean(torch.from_numpy(obs)).numpy()
        std = agent.log_std.detach().exp().numpy()
        return np.clip(mean + std * rng.standard_normal(mean.shape), -1, 1).astype(np.float32)
    return {"greedy": greedy, "sampled": sampled}


#: The example that trains each (task, algorithm).
EXAMPLES = {(PCS, "ippo"): "cleanrl_ippo_pcs", (PCS, "mappo"): "cleanrl_mappo_pcs",
            (AIRCRAFT, "ippo"): "cleanrl_ppo_aircraft", (AIRCRAFT, "mappo"): "cleanrl_mappo_aircraft"}


def example_ppo(task, algo):
    """The learning rate, epochs and minibatches the example of (task,
    algorithm) trains with by default (BenchMARL's runs beside it get the
    same)."""
    d = load_example(EXAMPLES[(task, algo)]).make_parser().parse_args([])
    return dict(lr=d.lr, epochs=d.epochs, minibatches=d.minibatches)


def train(task, algo, seed, b, num_threads, venv=None, overlap=False, on_update=None):
    """One run of the examples' IPPO or MAPPO on ``task`` (PCS:
    ``cleanrl_ippo_pcs`` / ``cleanrl_mappo_pcs``; Aircraft:
    ``cleanrl_ppo_aircraft``, parameter-shared PPO, i.e. IPPO, /
    ``cleanrl_mappo_aircraft``) at the budget ``b``; ``venv`` (IPPO only):
    the vector env to train on (default SEER's); ``overlap`` (IPPO only):
    the actor-learner overlap.  Returns ({"greedy": policy, "sampled":
    policy}, curve rows); ``on_update(row)`` sees each row first, with
    the live agent in ``row["agent"]`` (the rows returned do not keep it)."""
    mod = load_example(EXAMPLES[(task, algo)])
    argv = ["--seed", str(seed), "--updates", str(b["updates"]), "--num-envs", str(b["num_envs"]),
            "--num-threads", str(num_threads)]
    if task == AIRCRAFT:
        argv += ["--num-uavs", str(b["num_uavs"]), "--episode", str(b["episode"])]
    if overlap:
        argv += ["--overlap"]
    a = mod.make_parser().parse_args(argv)
    rows = []

    def each(r):
        if on_update is not None:
            on_update(r)
        rows.append({k: v for k, v in r.items() if k != "agent"})
    agent = mod.train(a, on_update=each, **({} if venv is None else {"venv": venv}))
    return (pcs_policies if task == PCS else aircraft_policies)(agent), rows


# --- jobs: one training run (or the fixed policies) of one task, evaluated -----
# A job returns plain data, so ``--jobs N`` can run them in N processes.

def job_key(j):
    """What a job is: kind, task, algorithm, seed, variant, updates and
    held-out seeds (a resumed run keeps only results of the same)."""
    return (j["kind"], j["task"], j.get("algo", ""), j.get("seed", 0), j.get("variant", ""),
            j.get("b", {}).get("updates", 0), len(j["seeds"]))


def run_job(j):
    """One job: ``kind`` "fixed" (every fixed policy of ``task``),
    "learn" (one of our runs; ``variant`` "" for the full budget,
    "overlap" for IPPO with the actor-learner overlap, "fraction" for the
    BenchMARL comparison's budget) or "benchmarl" (BenchMARL's run at that
    budget); each policy evaluated on the held-out ``seeds``.  Returns
    ``{"scores": {policy or mode: per-seed returns}, "rows": curve rows,
    "run": BenchMARL's wall time and iterations}``."""
    task, seeds, env_kw, threads = j["task"], j["seeds"], j["env_kw"], j["num_threads"]
    if j["kind"] == "fixed":
        import seer_envs
        fixed = (pcs_fixed_policies(seer_envs.get(task).build_config({}).num_guard_actions) if task == PCS
                 else aircraft_fixed_policies())
        return {"scores": {name: evaluate(task, pol, seeds, env_kw, threads) for name, pol in fixed.items()}}
    if j["kind"] == "learn":
        pols, rows = train(task, j["algo"], j["seed"], j["b"], threads, overlap=j["variant"] == "overlap")
        return {"rows": rows, "scores": {m: evaluate(task, pols[m], seeds, env_kw, threads) for m in MODES}}
    import benchmarl_check
    b = j["b"]
    steps = 48 if task == PCS else b["episode"]
    frames = b["updates"] * b["num_envs"] * steps
    pols, wall, iters = benchmarl_check.train(task, j["algo"], j["seed"], frames, dict(env_kw, max_cycles=steps),
                                              b["num_envs"], steps, **example_ppo(task, j["algo"]))
    return {"scores": {m: evaluate(task, pols[m], seeds, env_kw, threads) for m in MODES},
            "run": dict(algo=j["algo"], seed=j["seed"], wall_s=wall, iterations=iters, env_steps=frames)}


#: Rough cost of a job per update, to start the longest first.
COST = {"benchmarl": 6, "learn": 1, "fixed": 0}


def load_done(a):
    """The results an interrupted run with the same ``--out`` wrote to its
    ``jobs.jsonl`` (a job's key names its budget and evaluation seeds, so
    runs of other settings are not kept)."""
    out = {}
    try:
        with open(os.path.join(a.out, "jobs.jsonl")) as f:
            for line in f:
                if line.strip():
                    d = json.loads(line)
                    out[tuple(d["key"])] = d["result"]
    except FileNotFoundError:
        pass
    return out


def run_jobs(jobs, n, on_done, fn=None):
    """Run ``fn(job)`` (default :func:`run_job`) for each of ``jobs`` in this
    process (``n`` 1) or in ``n`` worker processes (spawned: no forked torch
    threads), in order (the longest first); ``on_done(job, result)`` as each
    finishes.  Ctrl-C or a SIGTERM (``kill``, ``pkill``) ends the workers
    with this process."""
    fn = fn or run_job
    if n == 1:
        for j in jobs:
            on_done(j, fn(j))
        return
    import functools
    import multiprocessing
    import signal
    # A SIGTERM would end this process at once and leave the workers running
    # (their command line is multiprocessing's, not this script's): raise
    # instead, so the pool's exit terminates them.
    old = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        with multiprocessing.get_context("spawn").Pool(n) as pool:
            for i, result in pool.imap_unordered(functools.partial(_indexed, fn), enumerate(jobs)):
                on_done(jobs[i], result)
    finally:
        signal.signal(signal.SIGTERM, old)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def _indexed(fn, item):
    i, job = item
    return i, fn(job)


def time_to_target(evals, target):
    """(env steps, wall s) at the first evaluation ``(env steps, wall s,
    held-out return)`` that reaches ``target``; (nan, nan) if none does."""
    for steps, wall, ret in evals:
        if ret >= target:
            return steps, wall
    return float("nan"), float("nan")


# --- output --------------------------------------------------------------------

def write_csv(path, rows, fields):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows:
            w.writerow({k: r[k] for k in fields})


def plot_curves(curves, refs, task, path):
    """Training return against env steps and against wall time, one line
    per run and one colour per method, the fixed policies' held-out means as
    horizontal lines; the legend sits below the plots, over no data."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(12, 5), dpi=110)
    colours = {"ippo": "tab:blue", "mappo": "tab:orange"}
    dashes = {"": "-", "overlap": "--"}
    labelled = set()
    for (algo, variant, seed), rows in sorted(curves.items()):
        if variant not in dashes:        # the BenchMARL comparison's short runs: in the tables only
            continue
        label = None if (algo, variant) in labelled else (
            LABEL[variant].format(A=algo.upper()) + " (one line per training seed)")
        labelled.add((algo, variant))
        for ax, key in zip(axes, ("env_steps", "wall_s")):
            ax.plot([r[key] for r in rows], [r["episode_return"] for r in rows], linestyle=dashes[variant],
                    color=colours.get(algo, "tab:green"), alpha=0.7, marker="." if len(rows) < 10 else None,
                    label=label if ax is axes[0] else None)
    styles = ["--", ":", "-."]
    for i, (name, value) in enumerate(refs.items()):
        for ax in axes:
            ax.axhline(value, color="grey", linestyle=styles[i % 3],
                       label=f"{name} (held-out mean)" if ax is axes[0] else None)
    axes[0].set_xlabel("env steps (copies x steps)")
    axes[1].set_xlabel("wall time (s)")
    for ax in axes:
        ax.set_ylabel("training episode return per agent (sampled policy)")
        ax.grid(alpha=0.3)
    fig.legend(loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.suptitle(f"{task}: learning curves")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(path)
    plt.close(fig)


def versions():
    out = {"python": platform.python_version()}
    for name in ("numpy", "scipy", "torch", "gymnasium", "pettingzoo", "supersuit"):
        try:
            out[name] = __import__(name).__version__
        except Exception:               # not installed: left out of the report
            pass
    return out


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{cpu}, {usable} usable CPU(s), {platform.system()} {platform.release()}"


def fmt(m, lo, hi):
    return f"{m:.2f} [{lo:.2f}, {hi:.2f}]"


# --- the suite -------------------------------------------------------------------

def env_kw_of(task, b):
    return {} if task == PCS else dict(num_uavs=b["num_uavs"], max_cycles=b["episode"], continuous_actions=True)


def fraction_budget(a, b):
    """The budget of the BenchMARL comparison: ``--benchmarl-budget`` of
    ``b``'s updates (BenchMARL's runs cost 5-9 times ours per env step)."""
    return dict(b, updates=max(1, round(b["updates"] * a.benchmarl_budget)))


def task_jobs(task, a, b):
    """Every job of ``task``: the fixed policies; IPPO and MAPPO on the
    training seeds; IPPO with the actor-learner overlap on the same seeds;
    BenchMARL's MAPPO and IPPO and ours at the comparison's budget; on the
    tasks of ``--benchmarl-full``, BenchMARL's MAPPO and IPPO at the full
    budget too (ours there are the IPPO and MAPPO rows)."""
    base = dict(task=task, seeds=list(range(EVAL_SEED0, EVAL_SEED0 + a.eval_seeds)), env_kw=env_kw_of(task, b),
                num_threads=a.num_threads)
    jobs = [dict(base, kind="fixed")]
    for seed in range(1, a.train_seeds + 1):
        jobs += [dict(base, kind="learn", algo=algo, seed=seed, variant="", b=b) for algo in ("ippo", "mappo")]
        if not a.no_overlap:
            jobs.append(dict(base, kind="learn", algo="ippo", seed=seed, variant="overlap", b=b))
    for seed in range(1, a.benchmarl_seeds + 1):
        for algo in ("mappo", "ippo"):
            jobs += [dict(base, kind="benchmarl", algo=algo, seed=seed, b=fraction_budget(a, b)),
                     dict(base, kind="learn", algo=algo, seed=seed, variant="fraction", b=fraction_budget(a, b))]
            if task in a.benchmarl_full:
                jobs.append(dict(base, kind="benchmarl", algo=algo, seed=seed, variant="full", b=b))
    return jobs


LABEL = {"": "{A}", "overlap": "{A} overlapped", "fraction": "{A} at the BenchMARL budget"}
#: BenchMARL's rows: at the comparison's fraction of the budget, and at the full budget.
BM_LABEL = {"fraction": "BenchMARL {A}", "full": "BenchMARL {A} at the full budget"}


def assemble(task, a, jobs, done, eval_rows, curve_rows):
    """The report's figures of ``task`` from its finished jobs (``done``:
    results by :func:`job_key`); appends the raw rows to ``eval_rows`` and
    ``curve_rows``."""
    seeds = jobs[0]["seeds"]
    per_seed = done[job_key(jobs[0])]["scores"]
    for name, rets in per_seed.items():
        eval_rows += [dict(task=task, policy=name, train_seed="", eval_seed=s, episode_return=r)
                      for s, r in zip(seeds, rets)]
    table = [(name, "fixed", len(seeds), ci95(v), iqm95([v])) for name, v in per_seed.items()]
    constants = {n: v for n, v in per_seed.items() if n.startswith("constant")}
    best_const = max(constants, key=lambda n: np.mean(constants[n]))
    heur = [n for n in per_seed if n.startswith("heuristic")][0]
    scores, curves, bm_runs = {}, {}, []         # scores[(who, algo, variant, mode)]: per-run seed lists
    for j in jobs[1:]:
        r = done[job_key(j)]
        who, variant = (("benchmarl", j.get("variant", "fraction")) if j["kind"] == "benchmarl"
                        else ("ours", j["variant"]))
        for mode in MODES:
            scores.setdefault((who, j["algo"], variant, mode), []).append(r["scores"][mode])
            policy = (BM_LABEL[variant].format(A=j["algo"]).replace("BenchMARL", "benchmarl") + f" ({mode})"
                      if who == "benchmarl" else
                      LABEL[variant].format(A=j["algo"]) + f" ({mode})")
            eval_rows += [dict(task=task, policy=policy, train_seed=j["seed"], eval_seed=s, episode_return=x)
                          for s, x in zip(seeds, r["scores"][mode])]
        if who == "ours":
            curves[(j["algo"], variant, j["seed"])] = r["rows"]
            curve_rows += [dict(task=task, algo=j["algo"], variant=variant, train_seed=j["seed"], **row)
                           for row in r["rows"]]
        else:
            bm_runs.append(dict(r["run"], variant=variant))
    learned = {}
    for (who, algo, variant, mode), runs in scores.items():
        means = [float(np.mean(x)) for x in runs]
        name = (BM_LABEL[variant].format(A=algo.upper()) + f" ({mode})" if who == "benchmarl" else
                LABEL[variant].format(A=algo.upper()) + f" ({mode})")
        kind = f"learned, {plural(len(means), 'training seed')}"
        table.append((name, kind, len(seeds), ci95(means), iqm95(runs)))
        learned[(who, algo, variant, mode)] = means
    diff = np.asarray(per_seed[heur]) - np.asarray(per_seed[best_const])
    return dict(table=table, best_const=best_const, heuristic=heur, advantage=ci95(diff),
                heuristic_ci=ci95(per_seed[heur]),
                refs={best_const: float(np.mean(per_seed[best_const])), heur: float(np.mean(per_seed[heur]))},
                learned=learned, benchmarl_runs=bm_runs, curves=curves)


def learning_target(task, means, aircraft_target=AIRCRAFT_TARGET):
    """(target return, what it is) of the time to target on ``task``, from
    the fixed policies' held-out means (``means``: by policy name): on PCS
    the best constant's, on Aircraft ``aircraft_target`` x the
    heuristic's.  The speed part here and ``training_speed.py
    --to-target`` share it."""
    if task == PCS:
        best = max((n for n in means if n.startswith("constant")), key=means.get)
        return means[best], f"the best constant's held-out mean ({best})"
    heur = means[next(n for n in means if n.startswith("heuristic"))]
    return aircraft_target * heur, f"{aircraft_target:g} x the heuristic's held-out mean ({heur:.2f})"


def speed_target(task, res, a):
    """(target return, what it is) of the speed part on ``task``."""
    return learning_target(task, res["refs"], a.aircraft_target)


def run_speed(a, b, tasks, targets, progress):
    """IPPO through SEER's vector env and through SuperSuit, the same
    seeds, on each of ``tasks`` (``targets[task]``: the target return):
    training steps/s and time to target on held-out evaluation returns.
    Every ``eval_every`` updates (and after the last) the greedy policy is
    evaluated on ``--speed-eval-seeds`` held-out seeds; the time spent
    evaluating is taken out of the wall times.  The two paths alternate
    seed by seed (SEER's first on odd seeds, SuperSuit's on even ones), so
    drifts of a shared machine's load fall on both."""
    import seer_envs
    ex = load_example("cleanrl_ippo_pcs")
    seeds = list(range(EVAL_SEED0, EVAL_SEED0 + a.speed_eval_seeds))
    out = []
    for task in tasks:
        bt = b[task]
        env_id, kw = (ex.ENV_ID, dict(ex.ENV_KW)) if task == PCS else (AIRCRAFT, env_kw_of(task, bt))
        every = max(1, bt["updates"] // 15)
        for seed in range(1, a.speed_seeds + 1):
            paths = ("seer vector env", "supersuit concat_vec_envs_v1")
            for path in paths if seed % 2 else paths[::-1]:
                if path == "seer vector env":
                    venv = seer_envs.vector_env(env_id, bt["num_envs"], num_threads=a.speed_threads,
                                                **(kw if task == PCS else dict(kw, autoreset_mode="same_step")))
                else:
                    venv = SuperSuitVec(env_id, bt["num_envs"], **kw)
                evals, spent = [], [0.0]

                def on_update(r):
                    t = time.perf_counter()
                    r["wall_s"] -= spent[0]
                    if r["update"] % every == 0 or r["update"] == bt["updates"]:
                        pol = (pcs_policies if task == PCS else aircraft_policies)(r["agent"])["greedy"]
                        evals.append((r["env_steps"], r["wall_s"],
                                      float(np.mean(evaluate(task, pol, seeds, env_kw_of(task, bt))))))
                    spent[0] += time.perf_counter() - t
                    progress.update(1)
                try:
                    _, rows = train(task, "ippo", seed, bt, a.speed_threads, venv=venv, on_update=on_update)
                finally:
                    venv.close()
                steps, wall = time_to_target(evals, targets[task])
                out.append(dict(task=task, path=path, train_seed=seed, updates=len(rows),
                                env_steps=rows[-1]["env_steps"], wall_s=rows[-1]["wall_s"],
                                sps=rows[-1]["env_steps"] / rows[-1]["wall_s"],
                                final_return=rows[-1]["episode_return"], final_eval_return=evals[-1][2],
                                target=targets[task], eval_every=every, eval_seeds=len(seeds),
                                steps_to_target=steps, wall_to_target=wall,
                                curve=[r["episode_return"] for r in rows], eval_curve=[e[2] for e in evals]))
    return out


def speed_summary(rows):
    """SEER against SuperSuit on one task's speed rows: ``sps_ratio`` (total
    env steps over total wall time, SEER's / SuperSuit's), ``time_ratio``
    (SuperSuit's summed wall time to target / SEER's, over the seeds that
    reach it on both paths; nan if none), ``steps_ratio`` (the same for env
    steps to target), ``reached`` (how many seeds) and ``same`` (the
    training returns of every update equal on both paths)."""
    seer = sorted((r for r in rows if r["path"].startswith("seer")), key=lambda r: r["train_seed"])
    ss = sorted((r for r in rows if not r["path"].startswith("seer")), key=lambda r: r["train_seed"])
    sps = lambda rs: sum(r["env_steps"] for r in rs) / sum(r["wall_s"] for r in rs)  # noqa: E731
    both = [(p, q) for p, q in zip(seer, ss) if np.isfinite(p["wall_to_target"]) and np.isfinite(q["wall_to_target"])]
    tr = (sum(q["wall_to_target"] for _, q in both) / sum(p["wall_to_target"] for p, _ in both)
          if both else float("nan"))
    st = (sum(q["steps_to_target"] for _, q in both) / sum(p["steps_to_target"] for p, _ in both)
          if both else float("nan"))
    return dict(sps_ratio=sps(seer) / sps(ss), time_ratio=tr, steps_ratio=st, reached=len(both),
                seeds=len(seer), same=all(p["curve"] == q["curve"] and p["eval_curve"] == q["eval_curve"] for p, q in zip(seer, ss)))


def aircraft_target_why(a, res):
    """Why the Aircraft target is a fraction of the heuristic, from this
    run's IPPO training curves."""
    curves = [[r["episode_return"] for r in rows] for (algo, variant, _), rows in sorted(res["curves"].items())
              if algo == "ippo" and variant == ""]
    if not curves:
        return ""
    heur, const = res["refs"][res["heuristic"]], res["refs"][res["best_const"]]
    best = max(max(c) for c in curves)
    early = max(max(c[:5]) for c in curves)

    def crossings(level):
        hits = [next(i + 1 for i, x in enumerate(c) if x >= level) for c in curves if max(c) >= level]
        return (f"{len(hits)} of their {len(curves)} training seeds reach it"
                + (f", at updates {min(hits)}-{max(hits)} of {len(curves[0])}" if hits else ""))
    return (f"Why: the IPPO training runs above reach at most {best:.2f} ({best / heur:.0%} of the "
            f"heuristic), so a larger fraction (80%, say) may be reached by none; their first 5 updates "
            f"already reach up to {early:.2f} against the best constant's {const:.2f} "
            f"({crossings(const)}), so the time to the best constant would measure the noise of the "
            f"first updates more than learning; at {a.aircraft_target:g} x the heuristic "
            f"({a.aircraft_target * heur:.2f}), {crossings(a.aircraft_target * heur)}.")


def speed_section(a, b, speed, targets, results):
    """The report's speed part: per task, a table of the runs and the
    ratios (SEER / SuperSuit)."""
    lines = ["## Speed that buys learning: the same IPPO through SEER's vector env and through SuperSuit", "",
             f"The same trainer, the same training seeds, in this one run: SEER's vector env at "
             f"{a.speed_threads} thread(s) against SuperSuit's `concat_vec_envs_v1(..., num_cpus=0)` over "
             "`pettingzoo_env_to_vec_env_v1` of single SEER envs at 1 thread each, the two paths "
             "alternating seed by seed (SEER's first on odd seeds, SuperSuit's on even ones). Time to target: "
             "env steps and wall seconds at the first evaluation whose held-out return reaches the target: "
             f"the greedy policy, evaluated every `eval_every` updates and after the last on "
             f"{plural(a.speed_eval_seeds, 'held-out seed')} (the evaluation's time is not counted).", ""]
    for task in dict.fromkeys(r["task"] for r in speed):
        rows = [r for r in speed if r["task"] == task]
        target, what = targets[task]
        bt = b[task]
        shape = (f"{bt['num_envs']} copies x 48 steps" if task == PCS else
                 f"{bt['num_envs']} copies x {bt['episode']} steps, {bt['num_uavs']} UAVs")
        why = "" if task == PCS else " " + aircraft_target_why(a, results[task])
        lines += [f"### {task}", "",
                  f"{shape}, {rows[0]['updates']} updates. Target: {target:.2f}, {what}.{why}", "",
                  "| path | training seed | updates | training env steps/s | final training return | "
                  "final held-out return (greedy) | env steps to target | wall s to target |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in rows:
            reached = np.isfinite(r["wall_to_target"])
            lines.append(f"| {r['path']} | {r['train_seed']} | {r['updates']} | {r['sps']:.1f} | "
                         f"{r['final_return']:.2f} | {r['final_eval_return']:.2f} | "
                         + (f"{r['steps_to_target']:g} | {r['wall_to_target']:.1f} |" if reached
                            else "not reached | not reached |"))
        sm = speed_summary(rows)
        lines += ["", f"- Training env steps/s, SEER / SuperSuit: **{sm['sps_ratio']:.2f}x** (total env steps "
                  "over total wall time of each path). The training returns of every update are "
                  + ("the same on both paths." if sm["same"] else "NOT the same on both paths.")]
        if sm["reached"]:
            verdict = "at least" if sm["time_ratio"] >= sm["sps_ratio"] else "below"
            lines.append(f"- Wall time to target, SuperSuit / SEER: **{sm['time_ratio']:.2f}x** (summed over the "
                         f"{sm['reached']} of {sm['seeds']} seeds that reach it on both paths; env steps to "
                         f"target, SuperSuit / SEER: {sm['steps_ratio']:.2f}x): {verdict} the steps/s ratio. "
                         "With the same returns at every update both paths reach the target at the same "
                         "evaluation, so this ratio is the steps/s ratio of the updates before it; the two "
                         "differ by how the speed varies over training and by the machine's load.")
        else:
            lines.append("- Time to target: no seed reaches the target on both paths at this budget.")
        lines.append("")
    return lines


def below_random(table):
    """The report's line on the learned rows whose mean return is below the
    random policy's: a row of ours there is a defect (said in capitals);
    BenchMARL's rows are its own runs, the independent check, reported as
    they came."""
    rnd = next((m for name, kind, _, (m, _, _), _ in table if name == "random"), None)
    if rnd is None:
        return "No random policy in this table."
    under = [(name, m) for name, kind, _, (m, _, _), _ in table if kind.startswith("learned") and m < rnd]
    if not under:
        return f"No learned row's mean is below the random policy's ({rnd:.2f})."
    ours = [name for name, _ in under if not name.startswith("BenchMARL")]
    return (f"Learned rows whose mean is below the random policy's ({rnd:.2f}): "
            + "; ".join(f"{name} {m:.2f}" for name, m in under) + ". "
            + (f"OURS BELOW RANDOM ({', '.join(ours)}): a defect of our trainers at this budget, not a result."
               if ours else
               "Each is BenchMARL's own run (the independent check below), "
               "shown as it came; none of ours is. The suite scores BenchMARL's actor as TorchRL's own "
               "rollout of it scores it (`tests/integrations/test_benchmarl.py`); why its MAPPO falls "
               "there (its mean action crowds the UAVs): "
               "[the record](measurements/dev2-2026-12-07/README.md"
               "#benchmarls-greedy-mappo-below-random-the-harness-checked-the-actors-own)."))


def benchmarl_lines(a, res):
    """The report's paragraphs on the independent check of one task:
    BenchMARL's runs at the comparison's budget against ours at it, and
    where ``--benchmarl-full`` ran them, at the full budget against the
    IPPO and MAPPO rows."""
    L, lines = res["learned"], []
    ours_variant = {"fraction": "fraction", "full": ""}
    for variant in ("fraction", "full"):
        runs = [r for r in res["benchmarl_runs"] if r.get("variant", "fraction") == variant]
        if not runs:
            continue
        ups = round(runs[0]["env_steps"] / max(1, runs[0]["iterations"]))
        head = (f"BenchMARL's MAPPO and IPPO (the independent check, `benchmarks/benchmarl_check.py`): its "
                "algorithm configs, its MLP at our trainers' size (two tanh layers of 64), on our batch "
                f"geometry ({ups} env steps a batch) and learning rate, for {runs[0]['env_steps']} env steps a "
                f"run ({a.benchmarl_budget:g} of the budget above: BenchMARL costs 5-9 times ours per env step "
                "here), " if variant == "fraction" else
                "The same check at the full budget (`--benchmarl-full`; the budget of the IPPO and MAPPO rows "
                f"above: {runs[0]['env_steps']} env steps a run), ")
        lines += ["", head + f"{plural(runs[0]['iterations'], 'iteration')}, "
                  f"{plural(len(runs) // 2, 'training seed')} each, "
                  f"{sum(r['wall_s'] for r in runs) / len(runs):.0f} s a run on average; ours "
                  + ("at the same budget and seeds are the rows 'at the BenchMARL budget'"
                     if variant == "fraction" else "are the IPPO and MAPPO rows, the same training seeds")
                  + ". Ours minus BenchMARL's, same algorithm, budget and evaluation (a negative difference "
                  "whose interval excludes 0 would mean ours is wrong):", ""]
        for (who, algo, v, mode), theirs in L.items():
            if who == "benchmarl" and v == variant:
                d = ci95_diff(L[("ours", algo, ours_variant[variant], mode)], theirs)
                verdict = "ours above" if d[1] > 0 else "OURS BELOW" if d[2] < 0 else "not distinguishable"
                lines.append(f"- {algo.upper()} ({mode}): {fmt(*d)}: {verdict}")
    return lines


def report(a, results, speed, speed_targets, plots, argv, elapsed, path):
    rel = os.path.relpath
    lines = ["# Baselines", "",
             "<!-- generated by benchmarks/baselines.py: edit the script, not this file -->", ""]
    budget_line = ("**Budget: `--quick` (a smoke test of the suite: 2 updates per run, "
                   f"{a.train_seeds} training seeds, {a.eval_seeds} evaluation seeds). "
                   "Nothing here measures learning; no learning claim follows from it.**"
                   if a.quick else
                   f"**Budget: `--budget {a.budget:g}`** ({a.train_seeds} training seeds, "
                   f"{a.eval_seeds} held-out evaluation seeds)" +
                   (f": {a.budget:.0%} of the full suite's training budget. The learned rows and "
                    "curves show where IPPO and MAPPO stand after this little training, not what "
                    "they reach; the fixed policies' rows do not depend on the budget."
                    if a.budget < 1 else "."))
    b = budgets(a)
    lines += [budget_line, "",
              f"- Command: `{' '.join(['python benchmarks/baselines.py'] + argv)}`",
              f"- Machine: {machine()}",
              "- Versions: " + ", ".join(f"{k} {v}" for k, v in versions().items()),
              (f"- Wall time of the whole run: {elapsed / 60:.1f} min" if not getattr(a, "kept", 0) else
               f"- Wall time of this run: {elapsed / 60:.1f} min, resumed: {a.kept} of {a.kept + a.ran} "
               f"training and evaluation jobs kept from an earlier run's `jobs.jsonl` in the same `--out` "
               f"(the same settings and held-out seeds; jobs whose code changed were removed from it "
               f"first), {a.ran} run here, the speed part run here"),
              f"- Training per run: PCS {b[PCS]['updates']} updates x {b[PCS]['num_envs']} copies x "
              f"48 steps; Aircraft {b[AIRCRAFT]['updates']} updates x {b[AIRCRAFT]['num_envs']} copies x "
              f"{b[AIRCRAFT]['episode']} steps, {b[AIRCRAFT]['num_uavs']} UAVs",
              "",
              "Returns are episode returns per agent (mean over agents), higher is better. "
              "Brackets: 95% bootstrap confidence interval of the mean (scipy.stats.bootstrap), "
              "over the evaluation seeds for fixed policies and over the training seeds (each "
              "run's mean over the evaluation seeds) for learned ones. IQM: the interquartile mean "
              "of every (run, evaluation seed) score, as rliable and marl-eval report it, with a "
              "95% percentile interval from resampling the runs (the seeds, for fixed policies). "
              "A learned policy is evaluated two ways: greedy (the most likely guard; the mean "
              "action) and sampled (an action drawn from the policy, as in training). Raw data: "
              "`curves.csv`, `eval.csv`, `speed.csv` in the run's output folder.", "",
              "`gossip_v0`, the worked example of [new_scenario.md](new_scenario.md), is not in the "
              "suite: the examples have no trainer for it and its objective (rumours learned minus a "
              "message cost) has no baseline here yet.", ""]
    for task, res in results.items():
        lines += [f"## {task}", "", "| policy | kind | eval seeds | mean return [95% CI] | IQM [95% CI] |",
                  "| --- | --- | --- | --- | --- |"]
        for name, kind, n, (m, lo, hi), (q, qlo, qhi) in res["table"]:
            lines.append(f"| {name} | {kind} | {n} | {fmt(m, lo, hi)} | {fmt(q, qlo, qhi)} |")
        lines += ["", below_random(res["table"])]
        m, lo, hi = res["advantage"]
        verdict = "above" if lo > 0 else "not clearly above"
        lines += ["", f"{res['heuristic']} minus the best constant ({res['best_const']}), paired over "
                  f"the same evaluation seeds: {fmt(m, lo, hi)}: {verdict} it at 95%.", ""]
        best = res["refs"][res["best_const"]]
        hm, hlo, hhi = res["heuristic_ci"]
        for (who, algo, variant, mode), means in res["learned"].items():
            if who != "ours" or variant:
                continue
            m, lo, hi = ci95(means)
            rel_word = ("above" if lo > best else "below" if hi < best else "not distinguishable from")
            versus = (f"{m / hm:.0%} of the heuristic's mean" if hm > 0 else
                      f"{m - hm:+.2f} from the heuristic's mean")
            lines.append(f"- {algo.upper()} ({mode}) at this budget: {fmt(m, lo, hi)}, {rel_word} the best "
                         f"constant ({best:.2f}); {versus} ({fmt(hm, hlo, hhi)}).")
        L = res["learned"]
        if ("ours", "ippo", "overlap", "greedy") in L:
            lines += ["", "The actor-learner overlap (`--overlap`: rollout k+1 collected by policy k while "
                      "update k runs; decoupled PPO: the ratio clipped against the learner as the update begins, "
                      "each sample weighted by proximal / behaviour probability), IPPO "
                      "with it minus IPPO without it, the same training seeds paired (an interval that "
                      "contains 0: the overlap's one-update lag does not change what is learned at this "
                      "budget):", ""]
            for mode in MODES:
                d = ci95(np.asarray(L[("ours", "ippo", "overlap", mode)]) - np.asarray(L[("ours", "ippo", "", mode)]))
                lines.append(f"- IPPO ({mode}): {fmt(*d)}: " + ("contains 0, the same within the interval"
                                                             if d[1] <= 0 <= d[2] else "excludes 0"))
        lines += benchmarl_lines(a, res)
        lines += ["", f"![{task} learning curves]({rel(plots[task], os.path.dirname(path))})", ""]
    if speed:
        lines += speed_section(a, b, speed, speed_targets, results)
    with open(path, "w") as f:
        f.write("\n".join(lines))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="the tests' size (a few minutes of one core)")
    p.add_argument("--budget", type=float, default=1.0,
                   help="scale every training budget (updates) by this (the report gives the run's wall time)")
    p.add_argument("--train-seeds", type=int, default=None, help="training seeds per algorithm (default 5)")
    p.add_argument("--eval-seeds", type=int, default=None, help="held-out evaluation seeds (default 64)")
    p.add_argument("--speed-seeds", type=int, default=None, help="training seeds of the speed part (default 2)")
    p.add_argument("--speed-threads", type=int, default=2, help="threads of SEER's vector env in the speed part")
    p.add_argument("--aircraft-target", type=float, default=AIRCRAFT_TARGET,
                   help="the speed part's Aircraft target: this fraction of the heuristic's held-out mean")
    p.add_argument("--num-threads", type=int, default=1, help="SEER threads of training and evaluation envs")
    p.add_argument("--tasks", default=",".join(TASKS), help="comma-separated: " + ", ".join(TASKS))
    p.add_argument("--no-speed", action="store_true", help="leave out the speed part")
    p.add_argument("--benchmarl-seeds", type=int, default=None,
                   help="training seeds of BenchMARL's MAPPO and IPPO, the independent check (default 5; "
                        "0 leaves it out; it needs BenchMARL)")
    p.add_argument("--benchmarl-budget", type=float, default=0.2,
                   help="the BenchMARL comparison's budget, a fraction of --budget (ours run beside it at the "
                        "same budget and seeds)")
    p.add_argument("--benchmarl-full", default=AIRCRAFT,
                   help="comma-separated tasks where BenchMARL's MAPPO and IPPO also train at the full budget, "
                        "beside the IPPO and MAPPO rows (\"\": none; each run costs BenchMARL's 5-9 times "
                        "ours per env step)")
    p.add_argument("--no-overlap", action="store_true",
                   help="leave out IPPO with the actor-learner overlap (run on the same seeds as IPPO)")
    p.add_argument("--speed-eval-seeds", type=int, default=None,
                   help="held-out seeds of the speed part's evaluations (default 8)")
    p.add_argument("--jobs", type=int, default=1,
                   help="training runs in this many processes at once (each takes one core: SEER and torch "
                        "at 1 thread); the speed part runs after them, alone")
    p.add_argument("--resume", action="store_true",
                   help="keep the runs an interrupted run with the same --out and settings finished "
                        "(its jobs.jsonl) and run only the rest")
    p.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "baselines"))
    p.add_argument("--report", default=None,
                   help="the report's path (default: docs/baselines.md; with --quick, baselines.md in --out)")
    argv = sys.argv[1:] if argv is None else list(argv)
    a = p.parse_args(argv)
    if a.report is None:          # a --quick run never overwrites the published report
        a.report = os.path.join(a.out if a.quick else os.path.join(ROOT, "docs"), "baselines.md")
    if not (np.isfinite(a.budget) and a.budget > 0):
        p.error(f"--budget must be a number > 0, got {a.budget}")
    if not (np.isfinite(a.aircraft_target) and 0 < a.aircraft_target <= 1):
        p.error(f"--aircraft-target must be a fraction in (0, 1], got {a.aircraft_target}")
    if not (np.isfinite(a.benchmarl_budget) and 0 < a.benchmarl_budget <= 1):
        p.error(f"--benchmarl-budget must be a fraction in (0, 1], got {a.benchmarl_budget}")
    for flag in ("train_seeds", "eval_seeds", "speed_seeds", "speed_eval_seeds", "benchmarl_seeds"):
        if getattr(a, flag) is not None and getattr(a, flag) < (0 if flag == "benchmarl_seeds" else 1):
            p.error(f"--{flag.replace('_', '-')} must be a whole number >= 1, got {getattr(a, flag)}")
    if a.jobs < 1:
        p.error(f"--jobs must be a whole number >= 1, got {a.jobs}")
    a.train_seeds = a.train_seeds or (2 if a.quick else 5)
    a.eval_seeds = a.eval_seeds or (4 if a.quick else 64)
    a.speed_seeds = a.speed_seeds or (1 if a.quick else 2)
    a.speed_eval_seeds = a.speed_eval_seeds or (2 if a.quick else 8)
    if a.benchmarl_seeds is None:
        import benchmarl_check
        a.benchmarl_seeds = (1 if a.quick else 5) if benchmarl_check.available() else 0
    tasks = [t for t in a.tasks.split(",") if t]
    a.benchmarl_full = [t for t in a.benchmarl_full.split(",") if t]
    for t in tasks + a.benchmarl_full:
        if t not in TASKS:
            p.error(f"unknown task {t!r}; known: {', '.join(TASKS)}")
    from tqdm import tqdm
    os.makedirs(a.out, exist_ok=True)
    plot_dir = os.path.join(os.path.dirname(os.path.abspath(a.report)), "plots", "baselines")
    os.makedirs(plot_dir, exist_ok=True)
    b = budgets(a)
    jobs = {t: task_jobs(t, a, b[t]) for t in tasks}
    done = load_done(a) if a.resume else {}
    todo = sorted((j for js in jobs.values() for j in js if job_key(j) not in done),
                  key=lambda j: -COST[j["kind"]] * j.get("b", {"updates": 1})["updates"])
    a.ran = len(todo)
    a.kept = sum(len(js) for js in jobs.values()) - a.ran          # the report says what a resume kept
    total = len(todo) + (0 if a.no_speed else sum(2 * a.speed_seeds * b[t]["updates"] for t in tasks))
    t0 = time.perf_counter()
    results, plots, eval_rows, curve_rows = {}, {}, [], []
    speed, speed_targets = [], {}
    log = os.path.join(a.out, "jobs.jsonl")
    if not a.resume and os.path.exists(log):
        os.remove(log)
    with tqdm(total=total, desc="baselines", unit="run", file=sys.stderr) as progress:
        def on_done(j, r):
            done[job_key(j)] = r
            with open(log, "a") as f:                 # nothing finished is lost to a later failure
                f.write(json.dumps({"key": list(job_key(j)), "result": r}, default=float) + "\n")
            progress.update(1)
        if done:
            print(f"resuming: {len(done)} finished runs kept from {log}", file=sys.stderr)
        progress.set_postfix_str(f"training, {a.jobs} at once")
        run_jobs(todo, a.jobs, on_done)
        for t in tasks:
            results[t] = assemble(t, a, jobs[t], done, eval_rows, curve_rows)
            plots[t] = os.path.join(plot_dir, f"{t}.png")
            plot_curves(results[t]["curves"], results[t]["refs"], t, plots[t])
            plot_curves(results[t]["curves"], results[t]["refs"], t, os.path.join(a.out, f"{t}.png"))
        write_csv(os.path.join(a.out, "curves.csv"), curve_rows,
                  ["task", "algo", "variant", "train_seed", "update", "env_steps", "wall_s", "episode_return",
                   "entropy", "approx_kl", "clipfrac", "explained_variance"])
        write_csv(os.path.join(a.out, "eval.csv"), eval_rows,
                  ["task", "policy", "train_seed", "eval_seed", "episode_return"])
        if not a.no_speed:
            progress.set_postfix_str("speed")
            speed_targets = {t: speed_target(t, results[t], a) for t in tasks}
            speed = run_speed(a, b, tasks, {t: v[0] for t, v in speed_targets.items()}, progress)
    elapsed = time.perf_counter() - t0
    if speed:
        write_csv(os.path.join(a.out, "speed.csv"), speed, [k for k in speed[0] if not k.endswith("curve")])
    report(a, results, speed, speed_targets, plots, argv, elapsed, a.report)
    print(f"wrote {a.report} and {a.out} ({elapsed:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
