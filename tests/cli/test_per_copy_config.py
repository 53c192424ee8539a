# SPDX-License-Identifier: BSD-3-Clause
"""Per-copy worlds from config files: ``[run] copies`` runs a vector env,
a per-copy field of ``[params]`` may be a list (one value per copy), and a
``[param_sampler]`` table draws per-copy fields at every reset; bad tables
are refused by ``seer check`` and ``seer run`` alike, in one line."""

import csv
import json
import os

import numpy as np
import pytest

import seer_envs
from seer.cli import main
from seer.configfile import ConfigError, load, per_copy_fields
from seer.scenarios import registry

PCS = 'scenario = "pcs_v0"\n[params]\ngrid_width = 4\ngrid_height = 4\n'


def write(tmp_path, text, name="cfg.toml"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def _float_field(sid):
    """A per-copy field of ``sid`` other than max_cycles (every env scenario declares one)."""
    fields = [f for f in per_copy_fields(registry()[sid]) if f != "max_cycles"]
    assert fields, f"{sid} declares no per-copy field besides max_cycles"
    return fields[0]


def test_per_copy_fields_are_the_scenarios_declaration():
    for sid, spec in seer_envs.envs().items():
        if spec.copies is None:
            continue
        got = per_copy_fields(registry()[sid])
        assert got[0] == "max_cycles" and set(got[1:]) == set(spec.copies.per_copy) - {"max_cycles"}
    assert per_copy_fields(registry()["phold"]) == ()


REJECTED = {
    "list_of_a_shared_field": (PCS + 'channels_per_cell = [4, 5]\n[run]\ncopies = 2\n',
                               r"\[params\] channels_per_cell: a list gives one value per copy, but "
                               r"PCSConfig.channels_per_cell cannot differ between copies .* per-copy fields "
                               r"of pcs_v0 are max_cycles"),
    "list_without_copies": (PCS + 'max_cycles = [4, 5]\n', r"set \[run\] copies = 2"),
    "list_of_the_wrong_length": (PCS + 'max_cycles = [4, 5]\n[run]\ncopies = 3\n',
                                 r"expected 3 values, one per copy \(\[run\] copies = 3\), got 2"),
    "copy_value_out_of_bounds": (PCS + 'max_cycles = [4, 0]\n[run]\ncopies = 2\nsteps = 3\n',
                                 r"\[params\] \(copy 1\): PCSConfig.max_cycles must be >= 1, got 0"),
    "copies_zero": (PCS + '[run]\ncopies = 0\n', r"\[run\] copies: expected an integer >= 1, got 0"),
    "copies_headless": ('scenario = "pcs_v0:headless"\n[params]\ngrid_width = 4\n[run]\ncopies = 2\n',
                        r"headless run \(one world\): copies are for env scenarios"),
    "heuristic_with_copies": (PCS + '[run]\ncopies = 2\npolicy = "heuristic"\n',
                              r"the heuristic policy steps single envs"),
    "heuristic_with_sampler": (PCS + '[param_sampler]\nmax_cycles = [5, 9]\n[run]\npolicy = "heuristic"\n',
                               r"the heuristic policy steps single envs"),
    "sampler_low_above_high": (PCS + '[param_sampler]\nmax_cycles = {uniform = [9, 5]}\n',
                               r"\[param_sampler\] max_cycles uniform: expected \[low, high\] with low <= high"),
    "sampler_out_of_bounds": (PCS + '[param_sampler]\nmax_cycles = {uniform = [0, 5]}\n',
                              r"\[param_sampler\] max_cycles uniform: PCSConfig.max_cycles must be >= 1, got 0"),
    "sampler_choice_out_of_bounds": (PCS + '[param_sampler]\nmax_cycles = {choice = [3, -1]}\n',
                                     r"max_cycles choice: PCSConfig.max_cycles must be >= 1, got -1"),
    "sampler_float_for_an_int": (PCS + '[param_sampler]\nmax_cycles = {uniform = [2.5, 3]}\n',
                                 r"expected a non-empty list of finite integers, got \[2.5, 3\]"),
    "sampler_unknown_kind": (PCS + '[param_sampler]\nmax_cycles = {gauss = [2, 3]}\n',
                             r"expected \{uniform = \[low, high\]\}, \{choice = \[a, b, ...\]\} or a list"),
    "sampler_shared_field": (PCS + '[param_sampler]\ngrid_width = [2, 3]\n',
                             r"PCSConfig.grid_width cannot differ between copies"),
    "sampler_unknown_field": (PCS + '[param_sampler]\ngrid_widht = [2, 3]\n',
                              r"grid_widht: unknown PCSConfig field; the per-copy fields of pcs_v0 are"),
    "sampler_empty": (PCS + '[param_sampler]\n', r"\[param_sampler\]: the table has no keys"),
    "sampler_empty_choice": (PCS + '[param_sampler]\nmax_cycles = []\n',
                             r"max_cycles choice: expected a non-empty list"),
    "sampler_headless": ('scenario = "phold"\n[param_sampler]\nnum_lps = [2]\n',
                         r"phold is a headless run \(one world, no resets\)"),
    "sampler_not_a_table": (PCS + '[run]\nsteps = 3\n[param_sampler.max_cycles]\nuniform = "a"\n',
                            r"expected a non-empty list of finite integers, got 'a'"),
}


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_bad_per_copy_tables_are_refused_in_one_line(tmp_path, capsys, name):
    text, match = REJECTED[name]
    f = write(tmp_path, text)
    with pytest.raises(ConfigError, match=match):
        load(f)
    errs = []
    for cmd in (["check", f], ["run", f]):
        assert main(cmd) == 2
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err and err.startswith(f"seer: {f}: ") and err.count("\n") == 1
        errs.append(err)
    assert errs[0] == errs[1]


def test_sampler_bounds_are_checked_against_every_copy(tmp_path):
    """A drawn value must open with every copy's other per-copy values."""
    field = _float_field("pcs_v0")
    lo = seer_envs.get("pcs_v0").config.__dataclass_fields__[field].metadata.get("lo")
    assert lo is not None, f"PCSConfig.{field} has no lower bound to try"
    f = write(tmp_path, PCS + f'[param_sampler]\n{field} = {{uniform = [{float(lo) - 1.0}, {float(lo) + 1.0}]}}\n')
    with pytest.raises(ConfigError, match=rf"\[param_sampler\] {field} uniform: PCSConfig.{field} must be"):
        load(f)


def test_run_with_per_copy_values_and_copies(tmp_path, capsys):
    field = _float_field("pcs_v0")
    base = getattr(seer_envs.get("pcs_v0").build_config({}), field)
    values = [base, base * 1.5, base * 2.0]
    f = write(tmp_path, PCS + f'max_cycles = [5, 8, 13]\n{field} = {values}\n'
                              '[run]\nsteps = 20\ncopies = 3\nseeds = [0, 1]\nnum_threads = 1\n')
    assert main(["run", f, "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["steps"] == 40 and res["copies"] == 3 and len(res["reward_per_seed"]) == 2
    assert res["params_last_seed"]["max_cycles"] == [5, 8, 13]
    assert res["params_last_seed"][field] == values
    assert main(["run", f]) == 0
    out = capsys.readouterr().out
    assert "40 x 3 copies over 2 seed(s)" in out


def test_a_copies_run_equals_the_vector_env_stepped_by_hand(tmp_path, capsys):
    """`seer run` with copies is the vector env with the file's values: its
    mean reward over the agents in play, recomputed here."""
    f = write(tmp_path, PCS + 'max_cycles = [4, 7]\n[run]\nsteps = 12\ncopies = 2\nseeds = [5]\nnum_threads = 1\n')
    assert main(["run", f, "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    venv = seer_envs.vector_env("pcs_v0", 2, num_threads=1, grid_width=4, grid_height=4, max_cycles=[4, 7])
    obs, infos = venv.reset(seed=5)
    rng = np.random.default_rng(6)
    total, count = 0.0, 0
    for _ in range(12):
        acting = infos["mask"]
        obs, rew, term, trunc, infos = venv.step(rng.integers(0, venv.single_action_space.n, (2, 16)))
        total += float(rew.sum(dtype=np.float64))
        count += int(acting.sum())
    venv.close()
    assert res["mean_reward"] == total / count


def test_run_with_a_sampler_draws_per_copy_and_is_reproducible(tmp_path, capsys):
    field = _float_field("pcs_v0")
    base = getattr(seer_envs.get("pcs_v0").build_config({}), field)
    text = (PCS + f'[param_sampler]\nmax_cycles = {{uniform = [3, 9]}}\n{field} = {{choice = [{base}, {base * 2}]}}\n'
            '[run]\nsteps = 25\ncopies = 6\nseeds = [3]\nnum_threads = 1\n')
    f = write(tmp_path, text)
    assert main(["check", f]) == 0
    capsys.readouterr()
    runs = []
    for _ in range(2):
        assert main(["run", f, "--json"]) == 0
        runs.append(json.loads(capsys.readouterr().out))
    assert runs[0]["mean_reward"] == runs[1]["mean_reward"]
    assert runs[0]["params_last_seed"] == runs[1]["params_last_seed"]
    drawn = runs[0]["params_last_seed"]
    assert len(drawn["max_cycles"]) == 6 and all(3 <= m <= 9 for m in drawn["max_cycles"])
    assert set(drawn[field]) <= {base, base * 2}
    assert len(set(drawn["max_cycles"])) > 1                # the copies' worlds differ
    assert main(["run", f]) == 0
    assert "sampler     max_cycles uniform [3, 9]" in capsys.readouterr().out
    # a plain list is a choice; without copies the sampler runs one copy
    g = write(tmp_path, PCS + '[param_sampler]\nmax_cycles = [4, 6]\n[run]\nsteps = 10\nnum_threads = 1\n', "g.toml")
    spec = load(g)
    assert spec.param_sampler == {"max_cycles": {"choice": [4, 6]}} and spec.vector
    assert main(["run", g, "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["copies"] == 1 and res["params_last_seed"]["max_cycles"][0] in (4, 6)


def test_save_state_is_refused_for_copies(tmp_path, capsys):
    f = write(tmp_path, PCS + '[run]\nsteps = 3\ncopies = 2\n')
    assert main(["run", f, "--save-state", str(tmp_path / "s.bin")]) == 2
    assert "run a single env; remove [run] copies" in capsys.readouterr().err


def test_sweep_of_copies_with_a_sampler(tmp_path, capsys):
    f = write(tmp_path, PCS + '[param_sampler]\nmax_cycles = {uniform = [3, 6]}\n'
                              '[run]\nsteps = 8\nnum_threads = 1\n[sweep]\ncopies = [1, 3]\n')
    out = tmp_path / "out"
    assert main(["sweep", f, "--out", str(out)]) == 0
    with open(out / "results.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["sweep.copies"] for r in rows] == ["1", "3"] and not any(r["error"] for r in rows)
    assert all('"param_sampler"' in r["key"] for r in rows)
    # a second run finds its points done (the key holds the sampler)
    assert main(["sweep", f, "--out", str(out)]) == 0
    assert "(0 run now, 2 already done)" in capsys.readouterr().out


def test_a_swept_list_must_fit_the_swept_copies(tmp_path):
    f = write(tmp_path, PCS + '[run]\nsteps = 4\ncopies = 2\n[sweep]\nmode = "zip"\n'
                              'copies = [2, 3]\nmax_cycles = [[4, 5], [4, 5]]\n')
    with pytest.raises(ConfigError, match=r"\[sweep\] copies = 3, max_cycles = \[4, 5\] max_cycles: expected 3"):
        load(f)


def test_files_without_per_copy_tables_keep_their_sweep_keys(tmp_path):
    """Results written before these tables existed stay points of the file."""
    from seer import sweep as seer_sweep
    f = write(tmp_path, PCS + '[run]\nsteps = 4\n[sweep]\nchannels_per_cell = [4, 5]\n')
    p = load(f).points()[0]
    assert "param_sampler" not in p
    assert seer_sweep.point_key(p) == json.dumps({"params": p["params"], "run": p["run"]}, sort_keys=True,
                                                 default=str)


def test_ready_per_copy_file_runs(capsys):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert main(["run", os.path.join(root, "scenarios", "pcs_randomised.toml")]) == 0
    assert "copies" in capsys.readouterr().out


def test_a_sweep_of_per_copy_lists_plots(tmp_path, capsys):
    """Swept lists (one value per copy) are categories of the plots, fresh
    or read back from results.csv."""
    f = write(tmp_path, PCS + '[run]\nsteps = 5\ncopies = 2\nnum_threads = 1\n'
                              '[sweep]\nmax_cycles = [[4, 6], [8, 9]]\n')
    out = tmp_path / "out"
    for _ in range(2):
        assert main(["sweep", f, "--out", str(out)]) == 0
        assert "plot: " in capsys.readouterr().out
    with open(out / "results.csv", newline="") as fh:
        assert [r["sweep.max_cycles"] for r in csv.DictReader(fh)] == ["[4, 6]", "[8, 9]"]


def test_list_marks_the_per_copy_fields(capsys):
    assert main(["list"]) == 0
    block = capsys.readouterr().out.split("\npcs_v0  ")[1].split("\n\n")[0]
    marked = {ln.split()[0] for ln in block.splitlines()[1:] if ln.endswith("(per copy)")}
    assert marked == set(per_copy_fields(registry()["pcs_v0"])) and "copies" in block.splitlines()[-1]
