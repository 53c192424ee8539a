# SPDX-License-Identifier: BSD-3-Clause
"""No traceback reaches a user of the command lines; `seer check` rejects
what `seer run` rejects, with the same line, stream and exit code; sweeps
never drop rows silently and tolerate a second sweep into the same folder."""

import csv
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from seer import sweep as seer_sweep
from seer.cli import main
from seer_runtime import ThreadChoice
from seer.configfile import ConfigError, action_space, load

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT] + [p for p in sys.path if p]))


def write(tmp_path, text, name="cfg.toml"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def seer(*args, **kw):
    return subprocess.run([sys.executable, "-m", "seer.cli", *args], capture_output=True, text=True,
                          env=ENV, **kw)


PCS = 'scenario = "pcs_v0"\n[params]\ngrid_width = 4\ngrid_height = 4\n'
REJECTED = {
    "action_out_of_range": (PCS + '[run]\nsteps = 3\npolicy = "fixed"\naction = 99\n',
                            r"\[run\] action: expected an integer in \[0, 5\]"),
    "action_float": (PCS + '[run]\nsteps = 3\npolicy = "fixed"\naction = 1.5\n', r"got 1.5"),
    "threads_too_many": (PCS + '[run]\nsteps = 3\nnum_threads = 1000000\n', r"int in \[1, 1024\]"),
    "aircraft_action_string": ('scenario = "aircraft_v0"\n[params]\nnum_uavs = 4\n'
                               '[run]\nsteps = 3\npolicy = "fixed"\naction = "up"\n', r"list of 2 numbers"),
    "steps_past_max_cycles": (PCS + 'max_cycles = 20\n[run]\nsteps = 30\n', r"30 > max_cycles = 20"),
    "env_key_on_headless": ('scenario = "pcs_v0:headless"\n[params]\ngrid_width = 4\nmax_cycles = 5\n'
                            '[run]\nend_time = 3.0\n', r"max_cycles has no effect"),
    "swept_bad_action": (PCS + '[run]\nsteps = 3\npolicy = "fixed"\naction = 3\n'
                         '[sweep]\nchannels_per_cell = [2, 10]\n', r"channels_per_cell = 2 action"),
}


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_check_rejects_what_run_rejects_the_same_way(tmp_path, capsys, name):
    _same_refusal(tmp_path, capsys, *REJECTED[name])


@pytest.mark.parametrize("text", [PCS + '[run]\nsteps = 3\n',
                                  PCS + '[run]\nsteps = 3\ncopies = 4\n',
                                  'scenario = "pcs_v0:headless"\n[params]\ngrid_width = 4\n[run]\nend_time = 1.0\n',
                                  'scenario = "aircraft_v0"\n[params]\nnum_uavs = 4\n[run]\nsteps = 3\n'])
def test_check_refuses_a_config_larger_than_the_memory(tmp_path, capsys, monkeypatch, text):
    import seer_runtime.memory
    monkeypatch.setattr(seer_runtime.memory, "available_bytes", lambda: 1024)   # the same on any machine
    _same_refusal(tmp_path, capsys, text, r"needs about .* GiB of memory .* more than the 9.54e-07 GiB available")


def test_check_refuses_a_heuristic_policy_the_scenario_lacks(tmp_path, capsys, monkeypatch):
    import dataclasses
    import seer_envs
    specs = {k: dataclasses.replace(v, heuristic=None) if k == "pcs_v0" else v
             for k, v in seer_envs.registry().items()}
    monkeypatch.setattr(seer_envs, "registry", lambda: specs)
    _same_refusal(tmp_path, capsys, PCS + '[run]\nsteps = 3\npolicy = "heuristic"\n',
                  r"\[run\] policy: pcs_v0 has no heuristic policy")


def _same_refusal(tmp_path, capsys, text, match):
    f = write(tmp_path, text)
    with pytest.raises(ConfigError, match=match):
        load(f)
    results = []
    for cmd in (["check", f], ["run", f]):
        rc = main(cmd)
        out, err = capsys.readouterr()
        results.append((rc, err.strip()))
        assert "Traceback" not in out + err
    (rc_check, err_check), (rc_run, err_run) = results
    assert rc_check == rc_run == 2
    assert err_check == err_run and err_check.startswith(f"seer: {f}: ") and "\n" not in err_check


def test_valid_fixed_actions_pass_and_match_the_env_spaces(tmp_path):
    from seer.scenarios import registry
    import seer_envs
    from seer_envs.scenario.config import build
    reg = registry()
    for name, kw in (("pcs_v0", dict(grid_width=4, grid_height=4, channels_per_cell=7)),
                     ("aircraft_v0", dict(num_uavs=4)),
                     ("aircraft_v0", dict(num_uavs=4, continuous_actions=False))):
        env = seer_envs.make(name, num_threads=1, **kw)
        assert action_space(reg[name], build(reg[name].config_cls, kw)) == env.action_space(env.possible_agents[0])
        env.close()
    f = write(tmp_path, 'scenario = "aircraft_v0"\n[params]\nnum_uavs = 4\n'
                        '[run]\nsteps = 3\npolicy = "fixed"\naction = [0.5, -1]\n')
    assert load(f).run["action"] == [0.5, -1]


def test_run_on_a_folder_and_unwritable_out(tmp_path, capsys):
    assert main(["run", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is a folder" in err and "Traceback" not in err
    f = write(tmp_path, PCS + '[run]\nsteps = 2\n[sweep]\nseeds = [0, 1]\n')
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["sweep", f, "--out", str(blocker / "out")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("seer: cannot write") and "\n" not in err


def test_version():
    r = seer("--version")
    assert r.returncode == 0 and r.stdout.startswith("seer 0.")


def test_phold_into_head_has_no_traceback():
    r = subprocess.run(f"{sys.executable} -m seer_runtime.models.phold --num-lps 256 --end-time 5 --json"
                       " --num-threads 1 | head -1", shell=True, capture_output=True, text=True, env=ENV)
    assert r.returncode == 0 and r.stdout.strip() == "{"
    assert r.stderr == "", r.stderr


def test_stpa_train_on_a_missing_file(tmp_path):
    r = subprocess.run([sys.executable, "-m", "stpa.cli", "train", "--data", str(tmp_path / "no.csv")],
                       capture_output=True, text=True, env=ENV)
    assert r.returncode == 2 and "Traceback" not in r.stderr       # 2: bad input, as the seer CLI
    assert r.stderr.strip() == f"stpa train: no such dataset file: {tmp_path / 'no.csv'} " \
                               f"(write one with `stpa collect --out {tmp_path / 'no.csv'}`)"


@pytest.mark.parametrize("cmd", ["run", "sweep"])
def test_ctrl_c_prints_one_line_and_exits_130(tmp_path, cmd):
    # a long run: SIGINT arrives while it steps
    text = ('scenario = "pcs_v0"\n[params]\ngrid_width = 32\ngrid_height = 32\nmax_cycles = 100000\n'
            '[run]\nsteps = 100000\nnum_threads = 1\n') + ("[sweep]\nseeds = [0, 1]\n" if cmd == "sweep" else "")
    f = write(tmp_path, text)
    args = [cmd, f] + (["--out", str(tmp_path / "out")] if cmd == "sweep" else [])
    # the child starts with SIGINT's default action, as from a terminal, even
    # where this process inherited it ignored (a shell without job control
    # starts `cmd &` so), and Python then installs its handler
    p = subprocess.Popen([sys.executable, "-m", "seer.cli", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=ENV,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(4)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert err.strip().splitlines()[-1] == "seer: interrupted; rerun to resume"
    assert "Traceback" not in err


def test_summary_shows_thread_switches():
    from seer.cli import _fmt_choice
    choice = ThreadChoice(chosen=1, method="lightgbm",
                          adapted=[{"step": 40, "from": 2, "to": 1, "reason": "contention"}])
    text = _fmt_choice(choice)
    assert text.startswith("2 (lightgbm") and "threads 2 -> 1 at step 40 (contention)" in text
    idle = choice.replace(adapted=[{"step": 40, "from": 2, "to": 1, "idle_share": 0.8}])
    assert "threads 2 -> 1 at step 40 (contention: workers 80% idle" in _fmt_choice(idle)
    assert _fmt_choice(ThreadChoice(chosen=3, method="user")) == "3 (user)"


SWEEP = PCS + '[run]\nsteps = 3\n[sweep]\nseeds = [0, 1]\n'


def test_changed_sweep_file_needs_overwrite(tmp_path, capsys):
    f = write(tmp_path, SWEEP)
    out = str(tmp_path / "out")
    assert main(["sweep", f, "--out", out]) == 0
    before = list(csv.DictReader(open(os.path.join(out, "results.csv"))))
    write(tmp_path, SWEEP.replace("steps = 3", "steps = 4"))
    capsys.readouterr()
    assert main(["sweep", f, "--out", out]) == 2
    err = capsys.readouterr().err
    assert "--overwrite" in err and "2 row(s)" in err
    assert list(csv.DictReader(open(os.path.join(out, "results.csv")))) == before     # untouched
    assert main(["sweep", f, "--out", out, "--overwrite"]) == 0
    after = list(csv.DictReader(open(os.path.join(out, "results.csv"))))
    assert [r["steps"] for r in after] == ["4", "4"]


def test_two_sweeps_into_one_folder(tmp_path):
    f = write(tmp_path, PCS + '[run]\nsteps = 3\nnum_threads = 1\n[sweep]\nseeds = [0, 1, 2, 3]\n')
    out = str(tmp_path / "out")
    results, errors = [], []

    def go():
        try:
            results.append(seer_sweep.run_sweep(f, out))
        except BaseException as e:        # noqa: BLE001 - the test reports it
            errors.append(e)
    threads = [threading.Thread(target=go) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(r[1] for r in results) == [0, 4]          # the second waited, then resumed
    rows = list(csv.DictReader(open(os.path.join(out, "results.csv"))))
    assert [r["sweep.seeds"] for r in rows] == ["0", "1", "2", "3"]
    assert not [n for n in os.listdir(out) if n.endswith(".tmp")]


def test_write_rows_uses_unique_temp_files(tmp_path, monkeypatch):
    names = []
    real = seer_sweep.tempfile.mkstemp

    def spy(*a, **kw):
        fd, name = real(*a, **kw)
        names.append(name)
        return fd, name
    monkeypatch.setattr(seer_sweep.tempfile, "mkstemp", spy)
    path = str(tmp_path / "results.csv")
    seer_sweep.write_rows(path, [{"key": "a", "x": 1}])
    seer_sweep.write_rows(path, [{"key": "b", "x": 2}])
    assert len(set(names)) == 2 and all(os.path.dirname(n) == str(tmp_path) for n in names)
    assert list(csv.DictReader(open(path))) == [{"key": "b", "x": "2"}]


def test_run_bar_eta_starts_at_the_first_step_and_completes_early_ends():
    from seer.cli import _RunBar
    import io
    out = io.StringIO()
    bar = _RunBar(50, "seer run x", disable=False, file=out)      # as on a terminal
    created = bar.bar.start_t
    time.sleep(0.3)                      # the reset and STPA preflight
    bar.update(1)
    assert bar.bar.start_t - created >= 0.25       # the clock restarted at step 1
    for _ in range(9):
        bar.update(1)
    bar.close()                          # the episode ended at step 10 of 50
    assert bar.bar.n == bar.bar.total == 10
    assert "10/10" in out.getvalue().splitlines()[-1] or "10/10" in out.getvalue().split("\r")[-1]
