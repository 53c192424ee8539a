# SPDX-License-Identifier: BSD-3-Clause
"""SEER's evaluation, regenerated on the machine it runs on.

    python benchmarks/run_all.py [--quick] [--out docs] [--threads 1,2,4,8] [--only fig7,table1]

Writes ``docs/evaluation.md`` with PNG plots and one raw CSV per figure in
``docs/evaluation/``:

1. Aircraft throughput vs mean event time at every thread count of the ladder
   1, 2, 4, ... up to the cores, and STPA (Fig. 7)
2. Step latency vs entity scale, Aircraft and PCS (Fig. 8)
3. Speedup over one thread vs mean event time, Aircraft and PCS (Fig. 9)
4. End-to-end inference throughput (torch policy + env) of PCS vs granularity and scale (Fig. 10)
5. Per-thread CPU time of one PCS and one Aircraft configuration (Fig. 11)
6. STPA against baseline predictors (Table 1: thread-count MAE and MSE on
   train and test sets, regret), from ``benchmarks/stpa_eval.py``
7. The pure-Python reference, the reference vectorised across processes, and SEER, on the same work

Every ratio comes from configurations run interleaved (A, B, C, A, B, C, ...)
with medians of repeats; a point whose repeats spread by more than 15% of
its median is marked noisy.  ``--quick`` finishes in under 10 minutes on a
2-core machine.
"""

import argparse
import csv
import multiprocessing as mp
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np
from tqdm import tqdm

import seer_envs
import seer_runtime
from seer_bench import LOOP_MAX, closed_loop_running, interleaved, median_of as med

HERE = os.path.dirname(os.path.abspath(__file__))
NOISY = 0.15


# --- measurement ------------------------------------------------------------------

def env_run(name, params, threads, steps, seed=0):
    """Steps/s and statistics of ``steps`` env steps (array path, zero actions).

    Timed after one warm-up step, and with ``"auto"`` after the thread
    tuner's closed loop (its trials of neighbouring counts over the first
    steps of an env; ``loop_steps``): the figures are the steady rate a run
    gets, and the loop's length is reported beside them."""
    env = seer_envs.make(name, num_threads=threads, max_cycles=10**6, **params)
    env.reset_arrays(seed=seed)
    n = len(env.possible_agents)
    sp = env.action_space(env.possible_agents[0])
    acts = np.zeros(n, np.int64) if hasattr(sp, "n") else np.zeros((n,) + sp.shape, np.float32)
    env.step_arrays(acts)
    loop = 1
    while closed_loop_running(env) and loop < LOOP_MAX:
        env.step_arrays(acts)
        loop += 1
    env.engine.reset_stats()
    t0 = time.perf_counter()
    for _ in range(steps):
        env.step_arrays(acts)
    wall = time.perf_counter() - t0
    st = env.engine.stats()
    return {"sps": steps / wall, "latency_ms": wall / steps * 1e3,
            "event_us": sum(st["busy_s"]) / max(1, st["events"]) * 1e6,
            "busy_s": st["busy_s"], "idle_s": st["idle_s"], "threads": env.num_threads,
            "events_per_step": st["events"] / steps, "loop_steps": loop if env.thread_choice.tuned else 0}


def noisy(rs, key):
    v = [r[key] for r in rs]
    m = statistics.median(v)
    return len(v) > 1 and m > 0 and (max(v) - min(v)) / m > NOISY


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def plot(path, series, xlabel, ylabel, title, logx=False, logy=False):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4), dpi=110)
    for label, (xs, ys, marks) in series.items():
        ax.plot(xs, ys, marker="o", label=label)
        for x, y, m in zip(xs, ys, marks):
            if m:
                ax.annotate("noisy", (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


# --- the figures ------------------------------------------------------------------

def thread_ladder(cap=None):
    """1, 2, 4, 8, ... below the cores, and the cores (``--threads`` overrides)."""
    cap = cap or seer_runtime.available_cpus()
    out, t = [], 1
    while t < cap:
        out.append(t)
        t *= 2
    return out + [cap]


def _label(t):
    return "STPA (auto)" if t == "auto" else f"{t} thread{'s' if t > 1 else ''}"


# Set in main(): [(label, count)] for the ladder and STPA.
THREADS = [(_label(1), 1), (_label(2), 2), (_label("auto"), "auto")]


def _bar(points, what):
    """A progress bar over a section's points (on stderr; off when stderr is not a terminal)."""
    return tqdm(points, desc=f"  {what}", unit="point", leave=False, file=sys.stderr, disable=None)


def sweep_threads(name, points, steps, reps):
    """For each (label, params): interleaved runs at 1, 2 and auto threads."""
    rows = []
    for label, params in _bar(points, name):
        res = interleaved({k: (lambda p=params, t=t: env_run(name, p, t, steps)) for k, t in THREADS}, reps)
        row = {"point": label, "event_us_1t": med(res["1 thread"], "event_us"),
               "events_per_step": med(res["1 thread"], "events_per_step")}
        for k, _ in THREADS:
            row[f"sps[{k}]"] = med(res[k], "sps")
            row[f"latency_ms[{k}]"] = med(res[k], "latency_ms")
            row[f"noisy[{k}]"] = noisy(res[k], "sps")
        row["stpa_threads"] = res["STPA (auto)"][-1]["threads"]
        row["loop_steps"] = max(r["loop_steps"] for r in res["STPA (auto)"])
        rows.append(row)
        tqdm.write(f"    {name} {label}: " + ", ".join(f"{k} {row[f'sps[{k}]']:.1f}/s" for k, _ in THREADS)
                   + f" (STPA chose {row['stpa_threads']})")
    return rows


def fig7(q, reps, outdir):
    subs = [1, 8, 32] if q else [1, 4, 16, 64]
    n = 512 if q else 1024
    rows = sweep_threads("aircraft_v0", [(f"substeps={s}", dict(num_uavs=n, dynamics_substeps=s)) for s in subs],
                         10 if q else 20, reps)
    write_csv(os.path.join(outdir, "fig7_aircraft_granularity.csv"), rows)
    plot(os.path.join(outdir, "fig7_aircraft_granularity.png"),
         {k: ([r["event_us_1t"] for r in rows], [r[f"sps[{k}]"] for r in rows], [r[f"noisy[{k}]"] for r in rows])
          for k, _ in THREADS}, "mean event time (us, 1 thread)", "env steps/s",
         f"Aircraft, {n} UAVs: throughput vs event time", logx=True, logy=True)
    return rows, n


def fig8(q, reps, outdir):
    uavs = [64, 256, 1024] if q else [64, 256, 1024, 4096]
    grids = [16, 32, 64] if q else [16, 32, 64, 128]
    a = sweep_threads("aircraft_v0", [(str(u), dict(num_uavs=u)) for u in uavs], 10 if q else 20, reps)
    p = sweep_threads("pcs_v0", [(f"{g}x{g}", dict(grid_width=g, grid_height=g)) for g in grids],
                      10 if q else 20, reps)
    write_csv(os.path.join(outdir, "fig8_aircraft_scale.csv"), a)
    write_csv(os.path.join(outdir, "fig8_pcs_scale.csv"), p)
    for rows, xs, nm, xl in ((a, uavs, "aircraft", "UAVs"), (p, [g * g for g in grids], "pcs", "cells")):
        plot(os.path.join(outdir, f"fig8_{nm}_latency.png"),
             {k: (xs, [r[f"latency_ms[{k}]"] for r in rows], [r[f"noisy[{k}]"] for r in rows]) for k, _ in THREADS},
             xl, "step latency (ms)", f"{nm}: step latency vs scale", logx=True, logy=True)
    return a, p, uavs, grids


def fig9(q, reps, outdir, rows7):
    iters = [0, 300, 3000] if q else [0, 100, 1000, 5000]
    g = 32 if q else 64
    p = sweep_threads("pcs_v0", [(f"pc_iters={i}", dict(grid_width=g, grid_height=g, power_control_iters=i))
                                 for i in iters], 8 if q else 15, reps)
    write_csv(os.path.join(outdir, "fig9_pcs_granularity.csv"), p)
    series = {}
    for k, t in THREADS[1:-1]:
        for nm, rows in ((f"Aircraft {k}", rows7), (f"PCS {k}", p)):
            series[nm] = ([r["event_us_1t"] for r in rows],
                          [r[f"sps[{k}]"] / r["sps[1 thread]"] for r in rows],
                          [r[f"noisy[{k}]"] or r["noisy[1 thread]"] for r in rows])
    for nm, rows in (("Aircraft STPA", rows7), ("PCS STPA", p)):
        series[nm] = ([r["event_us_1t"] for r in rows], [r["sps[STPA (auto)]"] / r["sps[1 thread]"] for r in rows],
                      [r["noisy[STPA (auto)]"] for r in rows])
    plot(os.path.join(outdir, "fig9_speedup_vs_event_time.png"), series, "mean event time (us, 1 thread)",
         "speedup over 1 thread", "Speedup vs event granularity", logx=True)
    return p, g


def fig10(q, reps, outdir):
    import torch
    from inference_e2e import run as e2e_run
    torch.set_num_threads(1)
    pts = ([(f"{g}x{g}, pc=0", dict(grid_width=g, grid_height=g)) for g in ([16, 32, 64] if q else [16, 32, 64, 128])]
           + [(f"32x32, pc={i}", dict(grid_width=32, grid_height=32, power_control_iters=i))
              for i in ([300, 3000] if q else [100, 1000, 5000])])
    rows = []
    for label, kw in _bar(pts, "inference"):
        res = interleaved({"serial": lambda kw=kw: e2e_run("pcs_v0", kw, 1, 10 if q else 25),
                           "auto": lambda kw=kw: e2e_run("pcs_v0", kw, "auto", 10 if q else 25)}, reps)
        row = {"point": label}
        for k in ("serial", "auto"):
            for m in ("sps", "policy_ms", "env_ms"):
                row[f"{m}[{k}]"] = med(res[k], m)
            row[f"noisy[{k}]"] = noisy(res[k], "sps")
        row["ratio"] = row["sps[auto]"] / row["sps[serial]"]
        rows.append(row)
        tqdm.write(f"    e2e PCS {label}: serial {row['sps[serial]']:.1f}/s, auto {row['sps[auto]']:.1f}/s "
                   f"({row['ratio']:.2f}x)")
    write_csv(os.path.join(outdir, "fig10_pcs_e2e.csv"), rows)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    x = np.arange(len(rows))
    ax.bar(x - 0.2, [r["sps[serial]"] for r in rows], 0.4, label="serial SEER")
    ax.bar(x + 0.2, [r["sps[auto]"] for r in rows], 0.4, label="SEER, STPA")
    ax.set_xticks(x, [r["point"] for r in rows], rotation=30, ha="right", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("inference steps/s (policy + env)")
    ax.set_title("PCS end-to-end inference vs scale and granularity")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "fig10_pcs_e2e.png"))
    plt.close(fig)
    return rows


def fig11(q, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cfgs = [("PCS 64x64", "pcs_v0", dict(grid_width=64, grid_height=64)),
            ("Aircraft 1024", "aircraft_v0", dict(num_uavs=1024))]
    rows = []
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.5), dpi=110)
    team = THREADS[-2][1]                 # all cores
    for ax, (label, name, kw) in zip(axes, cfgs):
        r = env_run(name, kw, team, 15 if q else 40)
        for t, (b, i) in enumerate(zip(r["busy_s"], r["idle_s"])):
            rows.append({"config": label, "thread": t, "busy_s": b, "idle_s": i})
        ax.bar([f"t{t}" for t in range(len(r["busy_s"]))], r["busy_s"], label="busy")
        ax.bar([f"t{t}" for t in range(len(r["busy_s"]))], r["idle_s"], bottom=r["busy_s"], label="idle (barriers)")
        ax.set_title(label, fontsize=9)
        ax.set_ylabel("CPU time (s)")
        ax.legend(fontsize=7)
    fig.suptitle(f"Per-thread CPU time, {team} threads")
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "fig11_thread_time.png"))
    plt.close(fig)
    write_csv(os.path.join(outdir, "fig11_thread_time.csv"), rows)
    return rows


def table1(q, outdir):
    """Table 1 from stpa_eval.py on the shipped datasets (and this machine's
    own dataset when one was collected into ``--stpa-data``)."""
    out = os.path.join(outdir, "table1_stpa.md")
    cmd = [sys.executable, os.path.join(HERE, "stpa_eval.py"), "--out", out] + (["--quick"] if q else [])
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return f"stpa_eval.py failed:\n```\n{r.stderr.strip()[-2000:]}\n```", " ".join(cmd[1:])
    with open(out) as f:
        return f.read().strip(), "python benchmarks/stpa_eval.py" + (" --quick" if q else "")


# --- 7. reference, vectorised reference, SEER ---------------------------------------

def _ref_worker(args):
    name, kw, steps, seed = args
    env = seer_envs.make(name, num_threads=1, max_cycles=10**6, **kw)
    if name == "pcs_v0":
        from seer_envs.pcs.reference import PcsReference as Ref
    else:
        from seer_envs.aircraft.reference import AircraftReference as Ref
    ref = Ref(env.config)
    ref.reset(seed)
    n = len(env.possible_agents)
    sp = env.action_space(env.possible_agents[0])
    acts = np.zeros(n, np.int64) if hasattr(sp, "n") else np.zeros((n,) + sp.shape, np.float32)
    t0 = time.perf_counter()
    for _ in range(steps):
        ref.step(acts)
    return time.perf_counter() - t0


def compare(q, reps, outdir):
    procs = seer_runtime.available_cpus()
    cfgs = [("PCS 32x32", "pcs_v0", dict(grid_width=32, grid_height=32), 5 if q else 10),
            ("Aircraft 256", "aircraft_v0", dict(num_uavs=256), 5 if q else 10)]
    rows = []
    ctx = mp.get_context("fork")
    for label, name, kw, steps in _bar(cfgs, "reference"):
        def ref1():
            return {"sps": steps / _ref_worker((name, kw, steps, 1))}

        def refvec():
            with ctx.Pool(procs) as pool:
                t0 = time.perf_counter()
                pool.map(_ref_worker, [(name, kw, steps, s) for s in range(procs)])
                return {"sps": procs * steps / (time.perf_counter() - t0)}
        res = interleaved({"reference": ref1, f"reference x{procs} processes": refvec,
                           "SEER serial": lambda: env_run(name, kw, 1, steps * 20),
                           "SEER STPA": lambda: env_run(name, kw, "auto", steps * 20)}, reps)
        row = {"config": label}
        for k, v in res.items():
            row[f"sps[{k}]"] = med(v, "sps")
            row[f"noisy[{k}]"] = noisy(v, "sps")
        rows.append(row)
        tqdm.write(f"    {label}: " + ", ".join(f"{k} {med(v, 'sps'):.1f}/s" for k, v in res.items()))
    write_csv(os.path.join(outdir, "compare_reference.csv"), rows)
    return rows, procs


# --- the report --------------------------------------------------------------------------

def fmt(v, nz=False):
    text = f"{v:,.0f}" if v >= 1000 else f"{v:.3g}"
    return text + (" (noisy)" if nz else "")


# --- README's headline block ----------------------------------------------------------

README = os.path.join(HERE, "..", "README.md")
BLOCK = ("<!-- written by benchmarks/run_all.py: headline -->", "<!-- end of run_all.py's headline -->")


def _read_csv(outdir, name):
    with open(os.path.join(outdir, name), newline="") as f:
        return list(csv.DictReader(f))


def headline(outdir):
    """README's headline table, from the CSVs of the run in ``outdir``
    (Figs. 8 and 10, the comparison); None when one is missing."""
    try:
        air, pcs = _read_csv(outdir, "fig8_aircraft_scale.csv")[-1], _read_csv(outdir, "fig8_pcs_scale.csv")[-1]
        e2e, cmp = _read_csv(outdir, "fig10_pcs_e2e.csv")[-1], _read_csv(outdir, "compare_reference.csv")
    except (OSError, IndexError):
        return None
    auto = "STPA (auto)"
    rows = []
    for what, r in ((f"Aircraft, {air['point']} UAVs", air), (f"PCS, {pcs['point']} cells", pcs)):
        one, st = float(r["latency_ms[1 thread]"]), float(r[f"latency_ms[{auto}]"])
        rows.append(f"| {what}, one env: ms per step, 1 thread / `num_threads=\"auto\"` "
                    f"| {fmt(one)} / {fmt(st)} ({r['stpa_threads']} threads, {one / st:.2f}x) |")
    best = []
    for r in cmp:
        ref = max(float(v) for k, v in r.items() if k.startswith("sps[reference"))
        best.append(f"{r['config']}: {float(r['sps[SEER STPA]']) / ref:.0f}x")
    rows.append("| SEER's env steps/s over the pure-Python reference of the same scenario (the better of one "
                "process and one per core) | " + "; ".join(best) + " |")
    rows.append(f"| end-to-end inference (torch policy + env), PCS {e2e['point']} (pc: `power_control_iters`): "
                f"steps/s, `\"auto\"` / serial | {float(e2e['ratio']):.2f}x |")
    return "\n".join(["| what | figure |", "| --- | --- |"] + rows)


def write_block(path, text, markers=BLOCK):
    """Replace the text between the ``markers`` (start, end) of ``path``;
    False when it has none (training_speed.py's block uses it too)."""
    with open(path, encoding="utf-8") as f:
        page = f.read()
    i, j = page.find(markers[0]), page.find(markers[1])
    if i < 0 or j < i:
        return False
    page = page[:i + len(markers[0])] + "\n" + text + "\n" + page[j:]
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
    return True


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out", default=os.path.join(HERE, "..", "docs"))
    p.add_argument("--repeats", type=int, default=None)
    p.add_argument("--threads", help="comma-separated thread counts to measure (default: 1, 2, 4, ... "
                   "up to the cores)")
    p.add_argument("--only", help="comma-separated sections to run (fig7,fig8,fig9,fig10,fig11,table1,"
                   "compare); the report then holds only those")
    a = p.parse_args()
    global THREADS
    ladder = sorted({int(x) for x in a.threads.split(",")}) if a.threads else thread_ladder()
    THREADS = [(_label(t), t) for t in ladder] + [(_label("auto"), "auto")]
    only = set(a.only.split(",")) if a.only else None
    run = lambda sec: only is None or sec in only  # noqa: E731
    q = a.quick
    reps = a.repeats or (3 if q else 5)
    outdir = os.path.join(a.out, "evaluation")
    os.makedirs(outdir, exist_ok=True)
    t_start = time.perf_counter()
    cmd = "python benchmarks/run_all.py" + (" --quick" if q else "") + (f" --threads {a.threads}" if a.threads else "")
    print(f"[{cmd}] repeats={reps}, thread counts {[t for _, t in THREADS]}", flush=True)
    res = {}
    if run("fig7") or run("fig9"):
        print("  Fig. 7 ...", flush=True)
        res["fig7"] = fig7(q, reps, outdir)
    if run("fig8"):
        print("  Fig. 8 ...", flush=True)
        res["fig8"] = fig8(q, reps, outdir)
    if run("fig9"):
        print("  Fig. 9 ...", flush=True)
        res["fig9"] = fig9(q, reps, outdir, res["fig7"][0])
    if run("fig10"):
        print("  Fig. 10 ...", flush=True)
        res["fig10"] = fig10(q, reps, outdir)
    if run("fig11"):
        print("  Fig. 11 ...", flush=True)
        res["fig11"] = fig11(q, outdir)
    if run("table1"):
        print("  Table 1 ...", flush=True)
        res["table1"] = table1(q, outdir)
    if run("compare"):
        print("  Comparison ...", flush=True)
        res["compare"] = compare(q, reps, outdir)
    took = time.perf_counter() - t_start

    L = []
    w = L.append
    counts = [t for _, t in THREADS if t != "auto"]
    w("# SEER evaluation\n")
    w(f"Generated by `{cmd}` on {platform.machine()}, "
      f"{seer_runtime.available_cpus()} CPUs, OpenMP={seer_runtime.openmp_enabled()}, {reps} interleaved "
      f"repeats per point (medians); it took {took / 60:.1f} minutes. Raw numbers: `docs/evaluation/*.csv`. "
      f"'noisy' marks a point whose repeats spread by more than {NOISY:.0%} of the median. "
      f"Thread counts measured: {', '.join(map(str, counts))}; 'STPA' is `num_threads=\"auto\"` "
      f"(it may pick any count from 1 to the cores): STPA's pick at the first reset, then the thread "
      f"tuner's closed loop tries the neighbouring counts for a few steps and keeps the best "
      f"([docs/stpa.md](stpa.md)). Every column is timed after one warm-up step, and STPA's after its "
      f"closed loop as well, so the figures are the steady rate of a run; 'closed loop (steps)' is how "
      f"many steps that loop took (later episodes of the same env start at its result).\n")

    def tbl(rows, key, unit):
        w("| point | " + " | ".join(k for k, _ in THREADS) + " | STPA chose | closed loop (steps) |")
        w("| --- " * (len(THREADS) + 3) + "|")
        for r in rows:
            w(f"| {r['point']} | " + " | ".join(fmt(r[f'{key}[{k}]'], r[f'noisy[{k}]']) for k, _ in THREADS)
              + f" | {r['stpa_threads']} | {r['loop_steps']} |")
        w(f"\n({unit})\n")
    if "fig7" in res and run("fig7"):
        r7, n7 = res["fig7"]
        w("## 1. Aircraft throughput vs event time (Fig. 7)\n\n![](evaluation/fig7_aircraft_granularity.png)\n")
        w(f"{n7} UAVs; the mean event time (engine busy time per event at 1 thread) grows with "
          f"`dynamics_substeps`.\n")
        tbl(r7, "sps", "env steps/s")
    if "fig8" in res:
        r8a, r8p, uavs, grids = res["fig8"]
        w("## 2. Step latency vs scale (Fig. 8)\n\n![](evaluation/fig8_aircraft_latency.png) "
          "![](evaluation/fig8_pcs_latency.png)\n")
        tbl(r8a, "latency_ms", "Aircraft, ms per step")
        tbl(r8p, "latency_ms", "PCS, ms per step")
    if "fig9" in res:
        r9, g9 = res["fig9"]
        w("## 3. Speedup vs event time (Fig. 9)\n\n![](evaluation/fig9_speedup_vs_event_time.png)\n")
        w(f"Aircraft points from section 1; PCS {g9}x{g9} with `power_control_iters` as the granularity knob:\n")
        tbl(r9, "sps", "PCS env steps/s")
    if "fig10" in res:
        w("## 4. End-to-end inference, PCS (Fig. 10)\n\n![](evaluation/fig10_pcs_e2e.png)\n")
        w("A MAPPO-sized actor (2 x 64, torch, 1 intra-op thread) on all cells per step, then `step_arrays`.\n")
        w("| point | serial steps/s | STPA steps/s | ratio | policy ms (STPA) | env ms (serial / STPA) |")
        w("| --- | --- | --- | --- | --- | --- |")
        for r in res["fig10"]:
            w(f"| {r['point']} | {fmt(r['sps[serial]'], r['noisy[serial]'])} | {fmt(r['sps[auto]'], r['noisy[auto]'])} "
              f"| {r['ratio']:.2f}x | {r['policy_ms[auto]']:.2f} "
              f"| {r['env_ms[serial]']:.2f} / {r['env_ms[auto]']:.2f} |")
        w("")
    if "fig11" in res:
        w("## 5. Per-thread CPU time (Fig. 11)\n\n![](evaluation/fig11_thread_time.png)\n")
        w("| config | thread | busy s | idle s (barriers) |\n| --- | --- | --- | --- |")
        for r in res["fig11"]:
            w(f"| {r['config']} | {r['thread']} | {r['busy_s']:.3f} | {r['idle_s']:.3f} |")
        w("")
    if "table1" in res:
        t1, t1cmd = res["table1"]
        w("## 6. STPA against baseline predictors (Table 1)\n")
        w(f"From `{t1cmd}` on the shipped datasets (`stpa/data/`: this project's 2-core machine and a "
          f"16-core Xeon). MAE and MSE are of the chosen thread count against the measured best; "
          f"regret is throughput at the pick / at the best (docs/stpa.md explains the predictors).\n")
        w(t1.replace("### ", "#### ") + "\n")
    if "compare" in res:
        rc, procs = res["compare"]
        w("## 7. What a user would pick instead\n")
        w(f"The pure-Python PettingZoo-style reference of each scenario (the oracle the tests compare against), "
          f"that reference vectorised across {procs} processes (one env per process, Gymnasium/SuperSuit "
          f"style, throughput summed), and SEER on one env, all on the same configuration (env steps/s):\n")
        keys = [k[4:-1] for k in rc[0] if k.startswith("sps[")]
        w("| config | " + " | ".join(keys) + " | SEER STPA / best reference |")
        w("| --- " * (len(keys) + 2) + "|")
        for r in rc:
            best_ref = max(r[f"sps[{k}]"] for k in keys if k.startswith("reference"))
            w(f"| {r['config']} | " + " | ".join(fmt(r[f'sps[{k}]'], r[f'noisy[{k}]']) for k in keys)
              + f" | {r['sps[SEER STPA]'] / best_ref:.0f}x |")
    with open(os.path.join(a.out, "evaluation.md"), "w") as f:
        f.write("\n".join(L) + "\n")
    print(f"wrote {os.path.join(a.out, 'evaluation.md')} in {took / 60:.1f} min")
    if os.path.realpath(a.out) == os.path.realpath(os.path.join(HERE, "..", "docs")):
        text = headline(outdir)
        if text and write_block(README, text):
            print("wrote README.md's headline table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
