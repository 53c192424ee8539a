# SPDX-License-Identifier: BSD-3-Clause
"""``benchmarks/training_speed.py --quick`` writes its table: every task,
copy count and path, with finite rates and shares whose accounting adds
up; bad input is an argparse error."""

import csv
import importlib.util
import math
import os
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytest.importorskip("torch")
pytest.importorskip("supersuit")
SCRIPT = os.path.join(ROOT, "benchmarks", "training_speed.py")


def _run(*args, **env):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=240,
                          env=dict(os.environ, PYTHONPATH=ROOT, **env), cwd=ROOT)


@pytest.mark.heavy
def test_quick_writes_the_table(tmp_path):
    r = _run("--quick", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr[-3000:]
    with open(tmp_path / "training_speed.csv") as f:
        rows = list(csv.DictReader(f))
    assert {"task", "path", "copies", "train_env_steps_per_s", "env_share", "update_share", "policy_share",
            "glue_share", "torch_threads", "env_threads", "device"} <= set(rows[0])
    paths = ["seer_sync", "seer_overlap", "supersuit", "supersuit_mp", "seer_sync_aa"]
    if importlib.util.find_spec("pufferlib") is not None:
        paths += ["puffer_serial", "puffer_mp"]
    assert {(x["task"], x["copies"], x["path"]) for x in rows} == {
        (t, c, p) for t in ("pcs", "aircraft") for c in ("2", "4") for p in paths}
    shares = ("env_share", "policy_share", "update_share", "glue_share")
    for x in rows:
        assert x["device"] == "cpu" and x["torch_threads"] == "1" and x["env_threads"] == "1"
        rate = float(x["train_env_steps_per_s"])
        assert math.isfinite(rate) and rate > 0, x
        assert all(math.isfinite(float(x[k])) and 0 <= float(x[k]) <= 3 for k in shares), x
        assert float(x["update_share"]) > 0.05 and float(x["env_share"]) > 0, x
        total = sum(float(x[k]) for k in shares)
        if x["path"] == "seer_overlap":      # the rollout thread's seconds run beside the update's
            assert total >= 0.99, x
        else:                                # one thread: the shares are the wall time
            assert abs(total - 1) < 0.02, x
        assert math.isfinite(float(x["ratio_to_sync"])), x
        steady = float(x["steady_env_steps_per_s"])        # from the end of update 0 on
        assert math.isfinite(steady) and steady > 0, x
        assert math.isfinite(float(x["steady_ratio_to_sync"])), x
    sync = [x for x in rows if x["path"] == "seer_sync"]
    assert all(float(x["ratio_to_sync"]) == 1 and float(x["steady_ratio_to_sync"]) == 1 for x in sync)
    assert "seer_sync_aa" in r.stdout and "wrote" in r.stdout


@pytest.mark.heavy
@pytest.mark.parametrize("target, reached", [(-1e9, True), (1e9, False)])
def test_to_target_ends_each_run_at_its_first_evaluation_over_the_target(tmp_path, target, reached):
    """--to-target: a target every policy reaches ends each run after its
    first update; one none reaches runs to --max-env-steps and reports no
    time.  The rows of a (task, copies) the run leaves out stay in the file."""
    ts = _training_speed()
    other = {k: "1" for k in ts.TARGET_FIELDS}
    earlier = [dict(other, task="pcs", copies="2"), dict(other, task="aircraft"),
               dict(other, task="aircraft", copies="2")]
    ts.write_rows(str(tmp_path / "time_to_target.csv"), earlier, ts.TARGET_FIELDS)
    r = _run("--quick", "--to-target", "--tasks", "aircraft", "--copies", "2", "--target-return", str(target),
             "--paths", "seer_sync", "seer_overlap", "supersuit", "--max-env-steps", "100", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr[-3000:]
    with open(tmp_path / "time_to_target.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows[:2] == earlier[:2], "an earlier run's rows of other (task, copies) are kept"
    rows = rows[2:]                          # its row of (aircraft, 2) is replaced by this run's
    assert [x["path"] for x in rows] == ["seer_sync", "seer_overlap", "supersuit"]
    for x in rows:
        assert float(x["target"]) == target and float(x["train_env_steps_per_s"]) > 0, x
        if reached:
            assert (x["updates"], x["updates_to_target"], x["env_steps_to_target"]) == ("1", "1", "20"), x
            assert 0 < float(x["wall_s_to_target"]) < 60, x
        else:                                # 2 copies x 10 steps an update: 5 updates in 100 env steps
            assert (x["updates"], x["env_steps"]) == ("5", "100"), x
            assert all(math.isnan(float(x[k])) for k in ("updates_to_target", "wall_s_to_target")), x
    assert "time_to_target.csv" in r.stdout


def test_learning_target_is_the_baselines_rule():
    """The time to target's target is docs/baselines.md's: the best
    constant on PCS, half the heuristic on Aircraft."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    try:
        import baselines
    finally:
        sys.path.pop(0)
    means = {"constant guard 0": -60.0, "constant guard 3": -51.0, "heuristic (rush rule)": -42.0}
    assert baselines.learning_target(baselines.PCS, means)[0] == -51.0
    assert baselines.learning_target(baselines.AIRCRAFT, {"constant zero acceleration": 7.0,
                                                           "heuristic (steer + separate)": 50.0})[0] == 25.0


@pytest.mark.heavy
def test_thread_pairs_writes_every_pair_and_auto_leaves_the_learner_its_cores(tmp_path):
    import seer_runtime
    users = tmp_path / "user-stpa.json"
    users.write_text("{}")
    r = _run("--quick", "--thread-pairs", "--tasks", "pcs", "--updates", "1", "--out", str(tmp_path),
             STPA_CACHE=str(users))
    assert r.returncode == 0, r.stderr[-3000:]
    assert users.read_text() == "{}", "the first-use runs empty a cache of their own, not the user's"
    with open(tmp_path / "thread_pairs.csv") as f:
        rows = list(csv.DictReader(f))
    cpus = seer_runtime.available_cpus()
    counts = [str(n) for n in range(1, cpus + 1)]
    for path in ("seer_sync", "seer_overlap"):
        got = {(x["env_threads"], x["torch_threads"]) for x in rows if x["path"] == path}
        assert got == {(e, t) for e in counts + ["auto"] for t in counts}
        assert [(x["env_threads"], x["torch_threads"]) for x in rows if x["path"] == path + "_aa"] == [("1", "1")]
        # "auto" also at its first use (STPA's cache emptied), once per torch count
        assert sorted((x["env_threads"], x["torch_threads"]) for x in rows if x["path"] == path + "_first") \
            == [("auto", t) for t in counts]
    for x in rows:
        assert math.isfinite(float(x["train_env_steps_per_s"])) and float(x["train_env_steps_per_s"]) > 0, x
        if x["path"] == "seer_overlap" and x["env_threads"] == "auto" and seer_runtime.openmp_enabled():
            # the overlapped learner's torch threads are reserved: the env takes the rest
            assert int(x["env_threads_used"]) <= max(1, cpus - int(x["torch_threads"])), x
    assert "best fixed pair" in r.stdout and "its first use" in r.stdout


@pytest.mark.heavy   # each loads torch and the examples before argparse refuses: seconds each
@pytest.mark.parametrize("args", [["--copies", "0"], ["--tasks", "nope"], ["--device", "tpu"],
                                  ["--updates", "x"], ["--env-threads", "-1"],
                                  ["--max-env-steps", "100"], ["--to-target", "--thread-pairs"],
                                  ["--to-target", "--updates", "3"], ["--to-target", "--target-seeds", "0"],
                                  ["--busy", "-1"], ["--busy", "1", "--out", os.path.join(ROOT, "docs", "evaluation")]])
def test_bad_input_is_an_argparse_error(tmp_path, args):
    r = _run("--quick", "--out", str(tmp_path), *args)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "error:" in r.stderr, r.stderr[-2000:]


@pytest.mark.heavy
def test_busy_loops_run_beside_the_run_and_end_with_it(tmp_path):
    import psutil
    t0 = time.time() - 1
    r = _run("--quick", "--tasks", "pcs", "--copies", "2", "--paths", "seer_sync", "seer_sync_aa", "--updates", "1",
             "--busy", "2", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr[-3000:]
    with open(tmp_path / "training_speed.csv") as f:
        rows = list(csv.DictReader(f))
    assert [x["busy"] for x in rows] == ["2", "2"]           # seer_sync and its A/A, each saying its load
    assert "2 busy-loop process(es) beside this run" in r.stdout and "at the end" in r.stdout

    def spinning(p):
        try:
            return p.info["cmdline"] and p.info["cmdline"][-1] == "while True: pass" and p.info["create_time"] >= t0
        except (psutil.Error, TypeError):
            return False
    left = [p for p in psutil.process_iter(["cmdline", "create_time"]) if spinning(p)]
    assert not left, f"busy loops outlived the run: {left}"


@pytest.mark.heavy
def test_device_script_quick_writes_a_table_per_run(tmp_path):
    """benchmarks/device_training_speed.sh, the one call of a lent GPU machine,
    run here at --quick: it builds the tree, then one training_speed run per
    (task, copies) with SEER at "auto" and the learner on CUDA where there
    is one, each writing its own table."""
    import torch
    env = dict(os.environ, OUT=str(tmp_path), WHEELS="none", BUDGET="280",
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    r = subprocess.run(["bash", os.path.join(ROOT, "benchmarks", "device_training_speed.sh"), "--quick"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    for run in ("pcs-4", "aircraft-2"):
        with open(tmp_path / run / "training_speed.csv") as f:
            rows = list(csv.DictReader(f))
        puffer = ["puffer_serial", "puffer_mp"] if importlib.util.find_spec("pufferlib") is not None else []
        assert [x["path"] for x in rows] == ["seer_sync", "seer_overlap", "supersuit", "supersuit_mp",
                                             *puffer, "seer_sync_aa"], run
        assert all(x["device"] == dev and float(x["train_env_steps_per_s"]) > 0 for x in rows), rows
        assert all(x["env_threads"] == "auto" for x in rows if x["path"].startswith("seer")), rows
    assert "== done" in (tmp_path / "stamps.txt").read_text()


def _training_speed():
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    try:
        import training_speed
    finally:
        sys.path.pop(0)
    return training_speed


def test_readme_training_block_is_the_published_run():
    """README's training-throughput table is the one the script writes from
    docs/evaluation/training_speed.csv and thread_pairs.csv: no figure
    copied by hand, none left behind by a later run."""
    ts = _training_speed()
    text = ts.readme_block()
    assert text is not None, "docs/evaluation/ lacks training_speed.csv"
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    i, j = readme.index(ts.BLOCK[0]), readme.index(ts.BLOCK[1])
    assert readme[i + len(ts.BLOCK[0]):j].strip() == text.strip(), \
        "README's block differs from docs/evaluation: run python benchmarks/training_speed.py --out docs/evaluation"
    for task in ("pcs", "aircraft"):            # the copy counts the issue names, both trained tasks
        for copies in (8, 32, 64, 128):
            assert f"\n| {task}, {copies} | " in text, (task, copies)


def test_readme_block_reads_any_run_and_write_block_replaces_only_it(tmp_path):
    ts = _training_speed()
    fields = ["task", "copies", "path", "train_env_steps_per_s", "env_share", "update_share", "updates", "torch_threads",
              "device", "env_threads"]
    rates = {"seer_sync": 100.0, "seer_overlap": 150.0, "supersuit": 80.0, "supersuit_mp": 60.0,
             "seer_sync_aa": 98.0}
    with open(tmp_path / "training_speed.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for path, v in rates.items():
            w.writerow(dict(task="pcs", copies=8, path=path, train_env_steps_per_s=v, env_share=0.25,
                            update_share=0.6, updates=6,
                            torch_threads=1, device="cpu", env_threads=1))
    text = ts.readme_block(str(tmp_path))
    assert "| pcs, 8 | 400 | 100 (60%) | 1.50x | 0.80x | - | 1.88x | 0.98x |" in text, text
    assert ts.readme_block(str(tmp_path / "none")) is None
    page = tmp_path / "p.md"
    page.write_text(f"top\n{ts.BLOCK[0]}\nold\n{ts.BLOCK[1]}\nbottom\n")
    assert ts.write_block(str(page), "| new |")
    assert page.read_text() == f"top\n{ts.BLOCK[0]}\n| new |\n{ts.BLOCK[1]}\nbottom\n"
    (tmp_path / "q.md").write_text("no markers\n")
    assert not ts.write_block(str(tmp_path / "q.md"), "x")
