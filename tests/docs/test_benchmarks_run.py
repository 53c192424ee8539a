# SPDX-License-Identifier: BSD-3-Clause
"""The benchmarks whose output the docs quote still run: each at its
smallest settings (a few seconds in all), so a change that breaks a
documented measurement command fails here rather than in a reader's shell.
What they measure is not checked (that needs full-size, side-by-side runs)."""

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CASES = {
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
}


def _run(name, args):
    name = name.split(":")[0]           # "file:case": another command of one benchmark
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", f"{name}.py")] + args,
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name", sorted(CASES))
def test_benchmark_runs(name):
    args, expect = CASES[name]
    r = _run(name, args)
    assert r.returncode == 0, r.stderr[-3000:]
    assert expect in r.stdout, r.stdout[-3000:]


GIT = pytest.mark.skipif(shutil.which("git") is None or not os.path.exists(os.path.join(ROOT, ".git")),
                         reason="reads a revision with git: needs a git checkout")


@GIT
def test_vector_step_ab_runs():
    r = _run("vector_step_ab", ["--rev", "HEAD", "--copies", "4", "--grid", "2", "--steps", "2",
                                "--rounds", "1", "--no-supersuit"])
    assert r.returncode == 0, r.stderr[-3000:]
    assert "tree / @HEAD" in r.stdout


@GIT
def test_single_step_ab_runs():
    r = _run("single_step_ab", ["--rev", "HEAD", "--rounds", "1", "--blocks", "1"])
    assert r.returncode == 0, r.stderr[-3000:]
    assert "tree speed / @HEAD" in r.stdout


@GIT
def test_single_step_ab_runs_a_vector_env():
    r = _run("single_step_ab", ["--rev", "HEAD", "--rounds", "1", "--blocks", "1", "--vector", "4",
                                "--grid", "2", "--threads", "2", "--copy-parallel", "cg"])
    assert r.returncode == 0, r.stderr[-3000:]
    assert "PCS 2x2 x 4 (copy_groups)" in r.stdout and "tree speed / @HEAD" in r.stdout
    bad = _run("single_step_ab", ["--rev", "HEAD", "--vector", "0"])
    assert bad.returncode != 0 and "--vector and --grid must be positive" in bad.stderr


def test_single_step_ab_refuses_a_tree_that_is_not_built(tmp_path):
    # an empty folder on PYTHONPATH would fall back to the installed package
    r = _run("single_step_ab", ["--rev-tree", str(tmp_path), "--rounds", "1", "--blocks", "1",
                                "--vector", "2", "--grid", "2"])
    assert r.returncode != 0 and "not from this tree" in r.stderr, r.stderr[-2000:]
