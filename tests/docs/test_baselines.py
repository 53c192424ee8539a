# SPDX-License-Identifier: BSD-3-Clause
"""``benchmarks/baselines.py --quick`` writes sane CSVs, plots and a report."""

import csv
import importlib.util
import math
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytest.importorskip("torch")
pytest.importorskip("supersuit")


def _rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


@pytest.mark.heavy
def test_quick_run_writes_csv_plots_and_report(tmp_path):
    out, report = tmp_path / "out", tmp_path / "docs" / "baselines.md"
    r = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "baselines.py"), "--quick",
                        "--out", str(out), "--report", str(report)],
                       capture_output=True, text=True, timeout=900,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stderr[-3000:]
    curves = _rows(out / "curves.csv")
    evals = _rows(out / "eval.csv")
    speed = _rows(out / "speed.csv")
    assert all(math.isfinite(float(x["episode_return"])) for x in curves + evals)
    # one curve per (task, algorithm, training seed), each with every update
    # (and IPPO with the actor-learner overlap on the same seeds; ours at BenchMARL's budget, 1 update)
    runs = {}
    for x in curves:
        runs.setdefault((x["task"], x["algo"], x["variant"], x["train_seed"]), []).append(int(x["update"]))
    full = {(t, a, v, s) for t in ("pcs_hotspot_v1", "aircraft_v0") for a, v in (("ippo", ""), ("mappo", ""),
                                                                              ("ippo", "overlap"))
            for s in ("1", "2")}
    assert full <= set(runs) and all(runs[k] == [1, 2] for k in full)
    assert all(k[2] == "fraction" and u == [1] for k, u in runs.items() if k not in full)
    assert all(math.isfinite(float(x[k])) for x in curves for k in ("entropy", "approx_kl", "clipfrac",
                                                                     "explained_variance"))
    # nothing finished is lost: every run's result is in jobs.jsonl as it ends
    assert len((out / "jobs.jsonl").read_text().splitlines()) == len(set(runs)) + 2 + sum(
        1 for x in {(e["task"], e["policy"], e["train_seed"]) for e in evals} if x[1].startswith("benchmarl")) // 2
    # every policy on the 4 held-out seeds
    per = {}
    for x in evals:
        per.setdefault((x["task"], x["policy"], x["train_seed"]), set()).add(int(x["eval_seed"]))
    assert all(s == {10000, 10001, 10002, 10003} for s in per.values())
    assert ("pcs_hotspot_v1", "heuristic (rush rule)", "") in per
    assert {p for (_, p, _) in per} >= {"ippo (greedy)", "ippo (sampled)", "mappo (greedy)", "mappo (sampled)",
                                        "ippo overlapped (greedy)", "ippo overlapped (sampled)"}
    # the independent check: BenchMARL's MAPPO and IPPO beside ours, where it is installed
    spec = importlib.util.spec_from_file_location("benchmarl_check",
                                                  os.path.join(ROOT, "benchmarks", "benchmarl_check.py"))
    benchmarl_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(benchmarl_check)
    if benchmarl_check.available():
        assert {p for (_, p, _) in per} >= {f"benchmarl {a} ({m})" for a in ("mappo", "ippo")
                                            for m in ("greedy", "sampled")}
        # and at the full budget on Aircraft (--benchmarl-full's default), not on PCS
        full = {f"benchmarl {a} at the full budget ({m})" for a in ("mappo", "ippo") for m in ("greedy", "sampled")}
        assert {p for (t, p, _) in per if t == "aircraft_v0"} >= full
        assert not {p for (t, p, _) in per if t == "pcs_hotspot_v1"} & full
    # the speed part: both paths on both tasks, the same seeds, sane figures
    assert {(x["task"], x["path"]) for x in speed} == {
        (t, p) for t in ("pcs_hotspot_v1", "aircraft_v0") for p in ("seer vector env", "supersuit concat_vec_envs_v1")}
    for x in speed:
        assert float(x["sps"]) > 0 and math.isfinite(float(x["final_return"])) and math.isfinite(float(x["target"]))
        assert math.isclose(float(x["sps"]), float(x["env_steps"]) / float(x["wall_s"]))
        assert math.isfinite(float(x["final_eval_return"])) and int(x["eval_seeds"]) == 2
        steps, wall = float(x["steps_to_target"]), float(x["wall_to_target"])
        assert math.isnan(steps) == math.isnan(wall)
        assert math.isnan(steps) or (0 < steps <= float(x["env_steps"]) and 0 < wall <= float(x["wall_s"]))
    for task in ("pcs_hotspot_v1", "aircraft_v0"):
        seer, ss = ([x for x in speed if x["task"] == task and x["path"] == p]
                    for p in ("seer vector env", "supersuit concat_vec_envs_v1"))
        assert [x["train_seed"] for x in seer] == [x["train_seed"] for x in ss] == ["1"]
        for p, q in zip(seer, ss):      # the same trainer and seeds: the same returns, the same target
            for k in ("updates", "env_steps", "final_return", "final_eval_return", "target", "steps_to_target"):
                assert p[k] == q[k], (task, k)
    evals_by = {}
    for x in evals:
        evals_by.setdefault((x["task"], x["policy"]), []).append(float(x["episode_return"]))
    heur = sum(evals_by[("aircraft_v0", "heuristic (steer + separate)")]) / 4
    aircraft_target = float(next(x["target"] for x in speed if x["task"] == "aircraft_v0"))
    assert math.isclose(aircraft_target, 0.5 * heur, rel_tol=1e-9)
    for task in ("pcs_hotspot_v1", "aircraft_v0"):
        for png in (out / f"{task}.png", report.parent / "plots" / "baselines" / f"{task}.png"):
            assert png.stat().st_size > 10_000
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = report.read_text()
    assert "Budget: `--quick`" in text and "no learning claim" in text
    assert "python benchmarks/baselines.py --quick" in text
    assert "Versions: python" in text and "Machine:" in text
    assert "## pcs_hotspot_v1" in text and "## aircraft_v0" in text and "SuperSuit" in text
    assert text.count("below the random policy's") == 2          # one line per task, whatever it says
    assert "the same on both paths" in text and "NOT the same" not in text
    if benchmarl_check.available():
        aircraft = text[text.index("## aircraft_v0"):text.index("## Speed")]
        assert "The same check at the full budget" in aircraft and "The same check at the full" not in text[
            text.index("## pcs_hotspot_v1"):text.index("## aircraft_v0")]
    speed_part = text[text.index("## Speed"):]
    assert "### pcs_hotspot_v1" in speed_part and "### aircraft_v0" in speed_part
    assert speed_part.count("Training env steps/s, SEER / SuperSuit: **") == 2
    assert speed_part.count("Wall time to target, SuperSuit / SEER: **") + speed_part.count(
        "no seed reaches the target on both paths") == 2


@pytest.mark.parametrize("flag, value", [("--budget", "0"), ("--aircraft-target", "0"),
                                         ("--aircraft-target", "1.5"), ("--aircraft-target", "nan")])
def test_bad_budget_or_target_is_refused(flag, value):
    r = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "baselines.py"), flag, value],
                       capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2 and flag in r.stderr


@pytest.mark.heavy
def test_resume_keeps_the_finished_runs_and_gives_the_same_tables(tmp_path):
    """``--resume`` after a run: nothing is trained again (every job is in
    jobs.jsonl) and the raw tables are the same."""
    out = tmp_path / "out"
    cmd = [sys.executable, os.path.join(ROOT, "benchmarks", "baselines.py"), "--quick", "--tasks", "aircraft_v0",
           "--no-speed", "--no-overlap", "--benchmarl-seeds", "0", "--train-seeds", "1", "--out", str(out)]
    env = dict(os.environ, PYTHONPATH=ROOT)
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert first.returncode == 0, first.stderr[-3000:]
    tables = [(out / n).read_text() for n in ("eval.csv", "curves.csv")]
    again = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=600, env=env)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "resuming: 3 finished runs kept" in again.stderr
    assert [(out / n).read_text() for n in ("eval.csv", "curves.csv")] == tables


def test_a_killed_parallel_run_takes_its_workers_with_it():
    """SIGTERM to ``run_jobs`` with worker processes (``--jobs 2``) ends the
    workers too: before, they outlived it (``pkill -f baselines.py`` does
    not match their command line)."""
    import signal
    import time

    psutil = pytest.importorskip("psutil")
    code = ("import sys, time; sys.path.insert(0, 'benchmarks'); import baselines; "
            "baselines.run_jobs([120, 120], 2, lambda j, r: None, fn=time.sleep)")
    p = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    try:
        parent = psutil.Process(p.pid)
        deadline = time.monotonic() + 120
        while len(parent.children()) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        workers = parent.children(recursive=True)
        assert len(workers) >= 2, "the pool did not start"
        time.sleep(1.0)                      # the workers are in their jobs
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=60) != 0
        gone, alive = psutil.wait_procs(workers, timeout=30)
        assert not alive, [w.cmdline() for w in alive]
    finally:
        p.kill()


def _baselines():
    spec = importlib.util.spec_from_file_location("baselines_report_test", os.path.join(ROOT, "benchmarks", "baselines.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(os.path.join(ROOT, "benchmarks"))
    return mod


def test_report_names_every_learned_row_below_random():
    """A learned row whose mean is under the random policy's is named; one of
    ours is called a defect, BenchMARL's are said to be its own runs."""
    B = _baselines()
    def row(name, kind, m):
        return name, kind, 64, (m, m - 1, m + 1), (m, m - 1, m + 1)
    learned = "learned, 5 training seeds"
    table = [row("random", "fixed", -50.0), row("IPPO (greedy)", learned, -42.0),
             row("BenchMARL MAPPO (greedy)", learned, -53.0)]
    line = B.below_random(table)
    assert "BenchMARL MAPPO (greedy) -53.00" in line and "IPPO (greedy) -42" not in line
    assert "OURS BELOW RANDOM" not in line
    assert B.below_random(table[:2]).startswith("No learned row's mean is below")
    line = B.below_random(table + [row("MAPPO (sampled)", learned, -51.0)])
    assert "OURS BELOW RANDOM (MAPPO (sampled))" in line


def test_report_compares_benchmarl_at_each_budget_with_ours_at_it():
    """The independent check's lines: BenchMARL at the comparison's budget
    against ours at it, at the full budget against the IPPO / MAPPO rows;
    a difference below 0 whose interval excludes 0 says OURS BELOW."""
    B = _baselines()

    class A:
        benchmarl_budget = 0.2
    ours_full, ours_frac = [10.0, 11.0, 12.0, 10.5, 11.5], [5.0, 5.5, 6.0, 5.2, 5.8]
    learned = {("ours", "ippo", "", m): ours_full for m in B.MODES}
    learned.update({("ours", "ippo", "fraction", m): ours_frac for m in B.MODES})
    learned.update({("benchmarl", "ippo", "fraction", m): [x - 3 for x in ours_frac] for m in B.MODES})
    learned.update({("benchmarl", "ippo", "full", m): [x + 5 for x in ours_full] for m in B.MODES})
    run = dict(env_steps=800, iterations=4, wall_s=10.0)
    res = dict(learned=learned, benchmarl_runs=[dict(run, variant="fraction")] * 5 + [
        dict(run, env_steps=4000, iterations=20, variant="full")] * 5)
    lines = B.benchmarl_lines(A, res)
    frac, full = lines[:lines.index(next(x for x in lines if x.startswith("The same check")))], lines[len(lines) - 4:]
    assert sum("ours above" in x for x in frac) == 2 and not any("BELOW" in x for x in frac)
    assert all("OURS BELOW" in x for x in full[-2:]) and "4000 env steps a run" in full[0]
    # without full-budget runs, no such paragraph
    res["benchmarl_runs"] = res["benchmarl_runs"][:5]
    assert not any(x.startswith("The same check") for x in B.benchmarl_lines(A, res))
