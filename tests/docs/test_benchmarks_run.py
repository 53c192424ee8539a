# SPDX-License-Identifier: BSD-3-Clause
"""Every script of benchmarks/ (the figures a user reproduces) and of
tools/perf/ (the developers' A/B and profiling tools) still runs: each at its
smallest settings (``--quick`` where it has one), so a change that breaks a
documented measurement command fails here rather than in a reader's shell.
What they measure is not checked (that needs full-size, side-by-side runs)."""

import glob
import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CASES = {
    # benchmarks/
    "aircraft_scale": (["--quick"], "Event granularity"),
    "pcs_headless": (["--quick"], "Env steps/s"),
    "runtime_phold": (["--quick"], "Engine cost per event"),
    "stpa_eval": (["--quick"], "preflight"),
    "inference_e2e": (["--steps", "2", "--repeats", "1"], "end-to-end auto / serial"),
    "torchrl_env": (["--copies", "2", "--grid", "2", "--steps", "2", "--pz-steps", "1", "--rounds", "1"],
                    "SEER TorchRL env 1 thread / PettingZooWrapper"),
    # the rest of benchmarks/ and tools/perf/
    "env_overhead": (["--blocks", "1"], "PCS 8x8"),
    "vector_env": (["--copies", "4", "--grid", "2", "--steps", "2", "--rounds", "1", "--no-supersuit",
                    "--aircraft-copies", "2", "--aircraft-steps", "1"],
                   "each process outside run_until"),
    "vector_restart": (["--copies", "4", "--grid", "2", "--restarts", "1", "--rounds", "1"],
                       "2-thread speedup"),
    "phase_grain": (["--copies", "4", "--grid", "2", "--blocks", "1", "--steps", "2"], "1 thread"),
    "vector_timeline": (["--seconds", "0.3", "--copies", "4", "--grid", "2", "--steps", "2"],
                        "2-thread speedup"),
    "dict_step": (["--steps", "2", "--threads", "1"], "pcs_64x64"),
    "waiting_ab": (["--tree", f"here={ROOT}", "--loads", "0", "--work", "pcs8", "--repeats", "1",
                    "--seconds", "0.1"], "2t/1t"),
    "contention": (["--only", "PCS 8x8", "--budget", "0.1", "--repeats", "1", "--busy", "0",
                    "--no-procs"], "PCS 8x8 env"),
    "async_step": (["--copies", "4", "--size", "2", "--steps", "2", "--rounds", "1"], "async / sync"),
    "async_where": (["--copies", "4", "--size", "2", "--steps", "2", "--rounds", "1"],
                    "outside the engine's native calls"),
    "snapshot": (["--small", "--repeats", "1", "--warm", "1"], "steady step"),
    "dock_wait": (["--copies", "4", "--grid", "2", "--steps", "2", "--rounds", "1", "--dock-us", "200",
                   "--yields", "2,2,2,0", "0"], "2 thr cg dock 200 us yields 2,2,2,0"),
    "layout_steps": (["--copies", "4", "--grid", "2", "--threads", "2", "--steps", "2"],
                     "copy_groups: "),
    "layout_steps:sweep": (["--sweep", "2,4", "--grid", "2", "--rounds", "1", "--steps", "2"],
                           "cg over team"),
    "team_spread": (["--copies", "4", "--grid", "2", "--busy", "0", "--rounds", "1", "--steps", "2"],
                    "spreading on over off"),
    "core_ab": ([ROOT, ROOT, "--quick"], "tree 1 us"),          # this tree against itself (A/A)
    "worlds_ab": ([ROOT, "--quick"], "per-copy/shared"),
    "tuner_carry_ab": (["--quick"], "per episode / A"),
    "copy_restore_scale": (["--copies", "4", "8", "--repeats", "1"], "from_bytes"),
    "world_draws": (["--copies", "8", "--steps", "2", "--rounds", "1", "--max-cycles", "2"], "per copy start"),
    "pcs_headroom": (["--seeds", "2", "--thresholds", "0.6", "--set", "max_cycles=4"], "best rule"),
}


def _run(name, args):
    name = name.split(":")[0]           # "file:case": another command of one script
    folder = "benchmarks" if os.path.exists(os.path.join(ROOT, "benchmarks", f"{name}.py")) else "tools/perf"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, os.path.join(ROOT, folder, f"{name}.py")] + args,
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


NEEDS = {"inference_e2e": ("torch",), "torchrl_env": ("torch", "torchrl")}


@pytest.mark.heavy
@pytest.mark.parametrize("name", sorted(CASES))
def test_benchmark_runs(name):
    args, expect = CASES[name]
    missing = [m for m in NEEDS.get(name, ()) if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}: pip install -e \".[torchrl]\"")
    r = _run(name, args)
    assert r.returncode == 0, r.stderr[-3000:]
    assert expect in r.stdout, r.stdout[-3000:]


GIT = pytest.mark.skipif(shutil.which("git") is None or not os.path.exists(os.path.join(ROOT, ".git")),
                         reason="reads a revision with git: needs a git checkout")


@pytest.mark.heavy
@GIT
def test_vector_step_ab_runs():
    r = _run("vector_step_ab", ["--rev", "HEAD", "--copies", "4", "--grid", "2", "--steps", "2",
                                "--rounds", "1", "--no-supersuit"])
    assert r.returncode == 0, r.stderr[-3000:]
    assert "tree / @HEAD" in r.stdout


@pytest.mark.heavy
@GIT
def test_single_step_ab_runs():
    r = _run("single_step_ab", ["--rev", "HEAD", "--rounds", "1", "--blocks", "1"])
    assert r.returncode == 0, r.stderr[-3000:]
    assert "tree speed / @HEAD" in r.stdout


@pytest.mark.heavy
@GIT
def test_single_step_ab_runs_a_vector_env():
    r = _run("single_step_ab", ["--rev", "HEAD", "--rounds", "1", "--blocks", "1", "--vector", "4",
                                "--grid", "2", "--threads", "2", "--copy-parallel", "cg"])
    assert r.returncode == 0, r.stderr[-3000:]
    assert "PCS 2x2 x 4 (copy_groups)" in r.stdout and "tree speed / @HEAD" in r.stdout
    bad = _run("single_step_ab", ["--rev", "HEAD", "--vector", "0"])
    assert bad.returncode != 0 and "--vector and --grid must be positive" in bad.stderr


@pytest.mark.heavy
def test_single_step_ab_refuses_a_tree_that_is_not_built(tmp_path):
    # an empty folder on PYTHONPATH would fall back to the installed package
    r = _run("single_step_ab", ["--rev-tree", str(tmp_path), "--rounds", "1", "--blocks", "1",
                                "--vector", "2", "--grid", "2"])
    assert r.returncode != 0 and "not from this tree" in r.stderr, r.stderr[-2000:]


@pytest.mark.heavy
def test_run_all_quick_writes_the_report(tmp_path):
    """``run_all.py --quick`` (at 1 and 2 threads, one repeat) writes every
    section of the report and its figures; Fig. 10 needs torch and is left
    out without it."""
    torch = importlib.util.find_spec("torch") is not None
    sections = "fig7,fig8,fig9,fig10,fig11,table1,compare" if torch else "fig7,fig8,fig9,fig11,table1,compare"
    r = _run("run_all", ["--quick", "--repeats", "1", "--threads", "1,2", "--only", sections,
                         "--out", str(tmp_path)])
    assert r.returncode == 0, r.stderr[-3000:]
    report = (tmp_path / "evaluation.md").read_text()
    for head in ("(Fig. 7)", "(Fig. 8)", "(Fig. 9)", "(Fig. 11)", "(Table 1)", "What a user would pick instead"):
        assert head in report
    assert ("(Fig. 10)" in report) == torch
    pngs = {os.path.basename(f) for f in glob.glob(str(tmp_path / "evaluation" / "*.png"))}
    assert {"fig7_aircraft_granularity.png", "fig9_speedup_vs_event_time.png", "fig11_thread_time.png"} <= pngs


def test_every_script_has_a_smoke_run():
    """A script added to benchmarks/ or tools/perf/ gets a case here."""
    # baselines: tests/docs/test_baselines.py runs its --quick, and with it benchmarl_check's
    # training and policies where BenchMARL is installed (the integration step of .ci/run);
    # training_speed: tests/docs/test_training_speed.py runs its --quick
    covered = {k.split(":")[0] for k in CASES} | {"run_all", "vector_step_ab", "single_step_ab", "baselines",
                                                  "benchmarl_check", "training_speed"}
    scripts = {os.path.basename(f)[:-3] for d in ("benchmarks", "tools/perf")
               for f in glob.glob(os.path.join(ROOT, d, "[!_]*.py"))}
    assert scripts - covered == set(), f"no smoke run: {sorted(scripts - covered)}"
