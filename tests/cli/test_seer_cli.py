# SPDX-License-Identifier: BSD-3-Clause
"""The `seer` command line: config files, runs, sweeps, errors, Ray."""

import csv
import glob
import json
import os
import subprocess
import sys

import pytest

from seer import sweep as seer_sweep
from seer.cli import main
from seer.configfile import ConfigError, load

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILES = sorted(glob.glob(os.path.join(ROOT, "scenarios", "*.toml")))


def write(tmp_path, text, name="cfg.toml"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


@pytest.mark.parametrize("path", FILES, ids=[os.path.basename(f) for f in FILES])
def test_every_ready_file_passes_check(path, capsys):
    assert main(["check", path]) == 0
    assert capsys.readouterr().out.startswith("ok")


def test_there_are_ready_files_for_each_kind():
    names = {os.path.basename(f) for f in FILES}
    assert {"pcs_small.toml", "pcs_large.toml", "aircraft_small.toml", "aircraft_large.toml", "pcs_vs_pdes.toml",
            "sweep_pcs_granularity.toml", "sweep_aircraft_scale.toml"} <= names


@pytest.mark.parametrize("name", ["pcs_small.toml", "aircraft_small.toml", "phold_standard.toml"])
def test_seer_run_small_files(name, capsys):
    assert main(["run", os.path.join(ROOT, "scenarios", name)]) == 0
    out = capsys.readouterr().out
    assert "threads" in out and "busy" in out
    assert ("steps/s" in out) if not name.startswith("phold") else ("events/s" in out)


def test_seer_run_json(tmp_path, capsys):
    f = write(tmp_path, 'scenario = "pcs_v0"\n[params]\ngrid_width = 4\ngrid_height = 4\n'
                        '[run]\nsteps = 10\nseeds = [3, 4]\npolicy = "heuristic"\nnum_threads = 2\n')
    assert main(["run", f, "--json"]) == 0
    import json
    res = json.loads(capsys.readouterr().out)
    assert res["steps"] == 20 and res["num_threads"] == 2 and len(res["reward_per_seed"]) == 2


def test_console_script_is_installed():
    r = subprocess.run([sys.executable, "-m", "seer.cli", "list"], capture_output=True, text=True)
    assert r.returncode == 0 and "pcs_v0" in r.stdout and "[cells]" in r.stdout


def test_list_shows_a_headless_form_only_the_parameters_it_accepts(tmp_path, capsys):
    """`seer list` and `seer check` agree: every parameter listed for
    pcs_v0:headless passes check, and the env-only ones are not listed."""
    import seer_envs
    from seer_envs.scenario.config import describe
    from seer_envs.pcs import PCSConfig
    assert main(["list"]) == 0
    block = capsys.readouterr().out.split("\npcs_v0:headless ")[1].split("\n\n")[0]
    shown = [ln.split()[0] for ln in block.splitlines()[1:] if not ln.strip().startswith("run:")]
    fields = {f: d for f, d, _, _ in describe(PCSConfig)}
    assert shown and set(shown) == set(fields) - set(seer_envs.get("pcs_v0").headless_ignores)
    for f in shown:
        load(write(tmp_path, f'scenario = "pcs_v0:headless"\n[params]\n{f} = {fields[f]!r}\n'))
    with pytest.raises(ConfigError, match="dt has no effect"):
        load(write(tmp_path, 'scenario = "pcs_v0:headless"\n[params]\ndt = 60.0\n'))


def test_python_dash_m_seer_is_the_seer_command(tmp_path):
    r = subprocess.run([sys.executable, "-m", "seer", "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("seer ")
    r = subprocess.run([sys.executable, "-m", "seer", "check", str(tmp_path / "missing.toml")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "no such file" in r.stderr and "Traceback" not in r.stderr


SWEEP = '''
scenario = "pcs_v0"
[params]
grid_width = 5
grid_height = 4
[run]
steps = 15
seeds = [0, 1]
policy = "fixed"
action = 3
[sweep]
channels_per_cell = [2, 10]
power_control_iters = [0, 40]
'''


def test_sweep_writes_rows_and_plots_and_records_failures(tmp_path, monkeypatch):
    from seer import scenarios
    real = scenarios.EnvScenario.run

    def flaky(self, params, run, progress=None):     # a point that fails only once running
        if params.get("channels_per_cell") == 6:
            raise RuntimeError("injected failure")
        return real(self, params, run, progress)
    monkeypatch.setattr(scenarios.EnvScenario, "run", flaky)
    f = write(tmp_path, SWEEP.replace("[2, 10]", "[6, 10]"))
    out = tmp_path / "out"
    rc = main(["sweep", f, "--out", str(out)])
    assert rc == 1                                   # two points fail, the sweep goes on
    rows = list(csv.DictReader(open(out / "results.csv")))
    assert len(rows) == 4
    failed = [r for r in rows if r["error"]]
    assert len(failed) == 2 and all(r["sweep.channels_per_cell"] == "6" for r in failed)
    assert all("injected failure" in r["error"] for r in failed)
    good = [r for r in rows if not r["error"]]
    assert {r["sweep.power_control_iters"] for r in good} == {"0", "40"}
    assert all(int(r["steps"]) == 30 and float(r["steps_per_s"]) > 0 for r in good)
    assert (out / "steps_per_s.png").exists() and (out / "mean_reward.png").exists()
    assert (out / "steps_per_s.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_resumed_sweep_does_not_rerun_finished_points(tmp_path, monkeypatch):
    f = write(tmp_path, SWEEP.replace("[2, 10]", "[10]"))
    out = str(tmp_path / "out")
    rows, ran, _, _ = seer_sweep.run_sweep(f, out)
    assert ran == 2 and len(rows) == 2
    calls = []
    monkeypatch.setattr(seer_sweep, "run_point", lambda *a: calls.append(a))
    rows2, ran2, _, _ = seer_sweep.run_sweep(f, out)
    assert ran2 == 0 and calls == []
    assert [r["key"] for r in rows2] == [r["key"] for r in rows]
    assert [str(r["events"]) for r in rows2] == [str(r["events"]) for r in rows]
    # growing the sweep runs only the new point
    f2 = write(tmp_path, SWEEP.replace("[2, 10]", "[10]").replace("[0, 40]", "[0, 40, 80]"))
    monkeypatch.undo()
    rows3, ran3, _, _ = seer_sweep.run_sweep(f2, out)
    assert ran3 == 1 and len(rows3) == 3


@pytest.mark.parametrize("text, match", [
    ('scenario = "pcs_v0"\ncolour = 3\n', r"top level: unknown key 'colour'"),
    ('[params]\ngrid_width = 4\n', "missing `scenario"),
    ('scenario = "pcs_v9"\n', "unknown scenario 'pcs_v9'"),
    ('scenario = "pcs_v0"\n[params]\ngrid_widht = 4\n', r"\[params\]: unknown PCSConfig parameter 'grid_widht' \(did you mean 'grid_width'\?\)"),
    ('scenario = "pcs_v0"\n[params]\ngrid_width = "four"\n', r"\[params\]: PCSConfig.grid_width must be an integer"),
    ('scenario = "pcs_v0"\n[params]\nchannels_per_cell = 0\n', r"PCSConfig.channels_per_cell must be >= 1, got 0"),
    ('scenario = "pcs_v0"\n[run]\nstep = 3\n', r"\[run\]: unknown key 'step'"),
    ('scenario = "pcs_v0"\n[run]\nsteps = -3\n', r"\[run\] steps: expected an integer >= 1"),
    ('scenario = "pcs_v0"\n[run]\nend_time = 10.0\n', r"use steps"),
    ('scenario = "phold"\n[run]\nsteps = 10\n', r"use end_time"),
    ('scenario = "pcs_v0"\n[run]\nnum_threads = 0\n', r"num_threads: expected \"auto\" or an int in \[1, 1024\]"),
    ('scenario = "pcs_v0"\n[run]\npolicy = "greedy"\n', r"policy: expected one of random, fixed, heuristic"),
    ('scenario = "pcs_v0"\n[run]\npolicy = "fixed"\n', "needs an action"),
    ('scenario = "pcs_v0"\n[run]\nseeds = [-1]\n', r"seeds: expected an int >= 0"),
    ('scenario = "pcs_v0"\n[sweep]\n', r"\[sweep\]: the sweep has no keys"),
    ('scenario = "pcs_v0"\n[sweep]\ngrid_width = []\n', r"\[sweep\] grid_width: expected a non-empty list"),
    ('scenario = "pcs_v0"\n[sweep]\ngrid_width = 4\n', r"\[sweep\] grid_width: expected a non-empty list"),
    ('scenario = "pcs_v0"\n[sweep]\nwidth = [4]\n', r"\[sweep\] width: unknown key"),
    ('scenario = "pcs_v0"\n[sweep]\ngrid_width = [4, 0]\n', r"\[sweep\] grid_width = 0: PCSConfig.grid_width must be >= 1"),
    ('scenario = "pcs_v0"\n[sweep]\nmode = "zip"\ngrid_width = [4, 5]\ngrid_height = [4]\n', "equal length"),
    ('scenario = "pcs_v0"\n[sweep]\nmode = "random"\ngrid_width = [4]\n', r"mode: expected \"product\" or \"zip\""),
    ('scenario = "pcs_v0"\nparams = 3\n', "expected a table"),
    ('scenario = "pcs_v0"\n[params\n', "not valid TOML"),
])
def test_bad_configs_name_file_and_key(tmp_path, text, match):
    f = write(tmp_path, text)
    with pytest.raises(ConfigError, match=match) as info:
        load(f)
    assert str(info.value).startswith(f)


def test_missing_file_and_cli_exit_code(tmp_path, capsys):
    missing = str(tmp_path / "nope.toml")
    with pytest.raises(ConfigError, match="no such file"):
        load(missing)
    assert main(["run", missing]) == 2
    assert "nope.toml: no such file" in capsys.readouterr().err
    assert main(["check", missing]) == 2


def test_run_refuses_a_sweep_file(tmp_path, capsys):
    f = write(tmp_path, SWEEP.replace("[2, 10]", "[6, 10]"))
    assert main(["run", f]) == 2
    assert "seer sweep" in capsys.readouterr().err


def test_zip_mode_pairs_values(tmp_path):
    f = write(tmp_path, 'scenario = "pcs_v0"\n[sweep]\nmode = "zip"\ngrid_width = [4, 6]\ngrid_height = [5, 7]\n')
    pts = load(f).points()
    assert [(p["params"]["grid_width"], p["params"]["grid_height"]) for p in pts] == [(4, 5), (6, 7)]


@pytest.mark.heavy
def test_ray_sweep_gives_the_same_rows_as_a_local_run(tmp_path):
    pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[ray]')")
    f = write(tmp_path, SWEEP.replace("[2, 10]", "[6, 10]"))
    local, _, _, _ = seer_sweep.run_sweep(f, str(tmp_path / "local"))
    remote, ran, _, _ = seer_sweep.run_sweep(f, str(tmp_path / "ray"), use_ray=True)
    assert ran == 4 and len(remote) == len(local) == 4
    for a, b in zip(local, remote):
        assert a["key"] == b["key"] and not a["error"] and not b["error"]
        for col in ("steps", "events", "mean_reward"):
            assert str(a[col]) == str(b[col]), col


def test_run_saves_and_continues_a_state(tmp_path, capsys):
    import seer_envs
    cfg = write(tmp_path, 'scenario = "pcs_v0"\n[params]\ngrid_width = 4\ngrid_height = 4\nmax_cycles = 40\n'
                          '[run]\nsteps = 10\nseeds = [3]\npolicy = "random"\nnum_threads = 1\n')
    state = tmp_path / "state.snap"
    assert main(["run", str(cfg), "--save-state", str(state)]) == 0
    env = seer_envs.make("pcs_v0", num_threads=2, grid_width=4, grid_height=4, max_cycles=40)
    env.restore(state.read_bytes())
    assert env._cycle == 10 and env.seed_used != 0
    assert main(["run", str(cfg), "--from-state", str(state)]) == 0
    assert "reward" in capsys.readouterr().out
    (tmp_path / "bad.snap").write_bytes(state.read_bytes()[:100])
    assert main(["run", str(cfg), "--from-state", str(tmp_path / "bad.snap")]) != 0
    assert "checksum mismatch" in capsys.readouterr().err
    two = write(tmp_path, 'scenario = "pcs_v0"\n[params]\ngrid_width = 4\ngrid_height = 4\n'
                          '[run]\nsteps = 2\nseeds = [1, 2]\n')
    assert main(["run", str(two), "--save-state", str(state)]) != 0
    assert "one seed" in capsys.readouterr().err


def _snap_events(path):
    import seer_envs
    env = seer_envs.make("pcs_v0", num_threads=1, grid_width=4, grid_height=4, max_cycles=40)
    env.restore(path.read_bytes())
    try:
        return env._cycle, env.engine.stats()["events"]
    finally:
        env.close()


def test_a_resumed_run_counts_only_its_own_events(tmp_path, capsys):
    cfg = write(tmp_path, 'scenario = "pcs_v0"\n[params]\ngrid_width = 4\ngrid_height = 4\nmax_cycles = 40\n'
                          '[run]\nsteps = 10\nseeds = [3]\nnum_threads = 1\n')
    s10, s20 = tmp_path / "s10.snap", tmp_path / "s20.snap"
    assert main(["run", str(cfg), "--save-state", str(s10)]) == 0
    capsys.readouterr()
    assert main(["run", str(cfg), "--from-state", str(s10), "--save-state", str(s20), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    (c10, e10), (c20, e20) = _snap_events(s10), _snap_events(s20)
    assert (c10, c20, res["steps"], res["resumed_at_step"]) == (10, 20, 10, 10)
    assert 0 < res["events"] == e20 - e10          # not e20: the first 10 steps ran in another process
    assert main(["run", str(cfg), "--from-state", str(s10)]) == 0
    assert "resumed at step 10 from" in capsys.readouterr().out


def test_resuming_an_ended_episode_says_so_in_one_line(tmp_path, capsys):
    cfg = write(tmp_path, 'scenario = "pcs_v0"\n[params]\ngrid_width = 4\ngrid_height = 4\nmax_cycles = 40\n'
                          '[run]\nsteps = 40\nseeds = [3]\nnum_threads = 1\n')
    end = tmp_path / "end.snap"
    assert main(["run", str(cfg), "--save-state", str(end)]) == 0
    capsys.readouterr()
    assert main(["run", str(cfg), "--from-state", str(end)]) == 2
    out, err = capsys.readouterr()
    assert "events/s" not in out
    assert err.count("\n") == 1 and "the saved episode has ended (step 40 of max_cycles = 40" in err, err


SMALL = 'scenario = "pcs_v0"\n[params]\ngrid_width = 4\ngrid_height = 4\n[run]\nsteps = 10\nseeds = [3]\n'


def test_set_overrides_params_and_run_keys_as_toml_values(tmp_path, capsys):
    f = write(tmp_path, SMALL)
    spec = load(f, ["grid_width=8", "run.steps=3", "seeds=[1, 2]", "policy=fixed", "action=2",
                    "params.channels_per_cell = 5"])
    assert spec.params == {"grid_width": 8, "grid_height": 4, "channels_per_cell": 5}
    assert spec.run["steps"] == 3 and spec.run["seeds"] == [1, 2] and spec.run["policy"] == "fixed"
    assert main(["run", f, "--set", "run.steps=4", "--num-threads", "1", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["steps"] == 4 and res["num_threads"] == 1 and res["thread_choice"]["method"] == "user"


@pytest.mark.parametrize("args, match", [
    (["--set", "grid_width=0"], r"\[params\]: PCSConfig.grid_width must be >= 1, got 0"),
    (["--set", "run.steps=0"], r"\[run\] steps: expected an integer >= 1, got 0"),
    (["--set", "no_such_key=1"], r"--set no_such_key: unknown key; expected a PCSConfig field"),
    (["--set", "grid_width"], r"--set 'grid_width': expected KEY=VALUE"),
    (["--set", "seeds=[1,"], r"--set: '\[1,' is not a TOML value"),
])
def test_set_is_checked_like_the_file_by_run_and_check(tmp_path, capsys, args, match):
    import re
    f = write(tmp_path, SMALL)
    errs = []
    for cmd in ("check", "run"):
        assert main([cmd, f, *args]) == 2
        out, err = capsys.readouterr()
        assert re.search(match, err) and err.count("\n") == 1, err
        errs.append(err)
    assert errs[0] == errs[1]
    assert main(["run", f, "--num-threads", "0"]) == 2
    assert 'num_threads: expected "auto" or an int' in capsys.readouterr().err


def test_list_name_shows_one_scenario(capsys):
    assert main(["list", "phold"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("phold  (headless)") and "num_lps" in out and "pcs_v0" not in out
    assert main(["list", "pcs"]) == 2
    assert "unknown scenario 'pcs'; expected one of" in capsys.readouterr().err


def test_counts_of_points_are_plural_only_when_not_one(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    f = write(tmp_path, SMALL + '[sweep]\nchannels_per_cell = [5]\n')
    assert main(["check", f]) == 0
    assert capsys.readouterr().out.endswith("pcs_v0, 1 point\n")
    assert main(["sweep", f, "--out", str(tmp_path / "out")]) == 0
    assert f"{f}: 1 point (1 run now" in capsys.readouterr().out
    assert main(["check", write(tmp_path, SMALL + '[sweep]\nchannels_per_cell = [5, 6]\n', "two.toml")]) == 0
    assert capsys.readouterr().out.endswith("pcs_v0, 2 points\n")


def test_the_ray_hint_installs_ray_alone(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)          # import ray -> ImportError
    with pytest.raises(SystemExit) as e:
        next(seer_sweep._run_on_ray("pcs_v0", [{}], None))
    msg = str(e.value)
    assert "pip install 'ray>=" in msg and "-e" not in msg.split("pip install")[1], msg
