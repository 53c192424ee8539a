# SPDX-License-Identifier: BSD-3-Clause
"""STPA's selection: caps, fallbacks, cache, determinism, env integration."""

import sys

import pytest

import stpa
from stpa import model as stpa_model
from stpa import select as stpa_select
from stpa.probe import probe, thread_caps
import seer_envs

PARAMS = {"grid_width": 8, "grid_height": 8}


def choose(params=PARAMS, scenario="pcs_v0", headless=None):
    """STPA knows no scenario: the caller hands it a key and an opener."""
    spec = seer_envs.get(scenario)
    return stpa.choose(spec.stpa_key(params, headless), spec.opener(params, headless))


@pytest.fixture(autouse=True)
def fresh(monkeypatch, tmp_path):
    monkeypatch.setenv("STPA_CACHE", str(tmp_path / "stpa_cache.json"))
    stpa.clear_cache()
    stpa_model._loaded.clear()
    yield
    stpa.clear_cache()
    stpa_model._loaded.clear()


def test_omp_num_threads_cap_is_honoured(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    n, choice = choose()
    assert n == 1 and choice.cap == 1 and "OMP_NUM_THREADS" in choice.caps
    env = seer_envs.make("pcs_v0", **PARAMS)             # num_threads="auto" by default
    env.reset(seed=0)
    assert env.unwrapped.num_threads == 1


def test_caps_never_exceed_cores_or_affinity():
    hw = probe()
    cap, _ = thread_caps(hw)
    assert 1 <= cap <= min(hw["physical_cores"], hw["affinity_cpus"])
    n, choice = choose({"num_lps": 256, "work_iters": 3000}, "phold")
    assert 1 <= n <= cap
    assert set(choice.predicted_speedup) == set(range(1, cap + 1)) or choice.method == "cap"


@pytest.mark.skipif(thread_caps()[0] < 2, reason="one CPU: the cap decides, no model runs")
def test_missing_model_falls_back_with_a_warning(monkeypatch, tmp_path):
    monkeypatch.setenv("STPA_MODEL", str(tmp_path / "nope.txt"))
    with pytest.warns(RuntimeWarning, match="without its learned residual"):
        n, choice = choose()
    assert choice.method == "usl" and "nope.txt" in choice.model_warning
    assert n in choice.predicted_speedup


@pytest.mark.skipif(thread_caps()[0] < 2, reason="one CPU: the cap decides, no model runs")
def test_corrupt_model_falls_back_with_a_warning(monkeypatch, tmp_path):
    bad = tmp_path / "model.txt"
    bad.write_text("this is not a LightGBM model\n")
    monkeypatch.setenv("STPA_MODEL", str(bad))
    with pytest.warns(RuntimeWarning, match="cannot load STPA model"):
        _, choice = choose()
    assert choice.method == "usl"


@pytest.mark.skipif(thread_caps()[0] < 2, reason="one CPU: the cap decides, no model runs")
def test_without_lightgbm_the_fallback_is_used(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "lightgbm", None)     # import lightgbm -> ImportError
    monkeypatch.setenv("STPA_MODEL", str(tmp_path / "m.txt"))
    (tmp_path / "m.txt").write_text("x")
    with pytest.warns(RuntimeWarning, match="lightgbm is not installed"):
        _, choice = choose({"num_lps": 128}, "phold")
    assert choice.method == "usl" and set(choice.probe_speedup) <= set(choice.predicted_speedup)


def test_probe_without_psutil_warns_and_works(monkeypatch):
    monkeypatch.setitem(sys.modules, "psutil", None)
    with pytest.warns(RuntimeWarning, match="psutil"):
        hw = probe()
    assert hw["psutil"] == 0 and hw["physical_cores"] == hw["logical_cores"] >= 1


def test_cache_avoids_a_second_preflight(monkeypatch):
    calls = []
    real = stpa_select.preflight

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)
    monkeypatch.setattr(stpa_select, "preflight", counting)
    n1, c1 = choose()
    n2, c2 = choose(dict(PARAMS))
    expected = 0 if c1.method == "cap" else 1
    assert len(calls) == expected
    assert (n1, c1.cached, c2.cached) == (n2, False, True)
    # a different configuration is a different entry, and so is the headless form
    choose(PARAMS, headless=True)
    assert len(calls) == 2 * expected
    choose({"grid_width": 9, "grid_height": 8})
    assert len(calls) == 3 * expected
    # another process (here: a fresh in-memory cache) reads the cache file
    stpa.clear_cache()
    n3, c3 = choose(dict(PARAMS))
    assert len(calls) == 3 * expected and n3 == n1
    if expected:
        assert c3.cache == "disk" and c3.cached and c3.preflight_s == 0.0
        assert c3.predicted_speedup == c1.predicted_speedup


def test_a_preflight_taken_under_heavy_load_is_taken_again(monkeypatch):
    calls = []
    monkeypatch.setattr(stpa_select, "thread_caps", lambda hw: (4, {"physical_cores": 4}))
    monkeypatch.setattr(stpa_select, "preflight", lambda *a, **k: calls.append(1) or {
        "unit_ns": 1e6, "probe_speedup": {2: 1.5, 3: 1.8, 4: 2.0}, "preflight_s": 0.01})
    load = {"v": 3.0}
    monkeypatch.setattr(stpa_select, "probe", lambda: {"physical_cores": 4, "logical_cores": 4,
                                                      "affinity_cpus": 4, "load_per_cpu": load["v"]})
    run = lambda n, seed: None  # noqa: E731  (never opened: preflight is replaced)
    stpa.choose({"k": 1}, run)
    stpa.clear_cache()
    stpa.choose({"k": 1}, run)              # as busy as before: the cached one is used
    assert len(calls) == 1
    stpa.clear_cache()
    load["v"] = 0.2                         # quiet now: measure again, and store that
    _, c = stpa.choose({"k": 1}, run)
    assert len(calls) == 2 and c.cache is None
    stpa.clear_cache()
    load["v"] = 0.3
    _, c = stpa.choose({"k": 1}, run)
    assert len(calls) == 2 and c.cache == "disk"


@pytest.mark.skipif(thread_caps()[0] < 2, reason="one CPU: the cap decides, no model runs")
def test_cache_file_is_shared_with_another_process(tmp_path):
    import json
    import os
    import subprocess
    code = ("import json, stpa, seer_runtime; s = seer_runtime.registry()['phold']; "
            "n, c = stpa.choose(s.stpa_key({'num_lps': 64}), s.opener({'num_lps': 64})); "
            "print(json.dumps([n, c.cache, c.preflight_s > 0]))")
    env = dict(os.environ, STPA_CACHE=str(tmp_path / "shared.json"))
    first = json.loads(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                      check=True).stdout)
    second = json.loads(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                       check=True).stdout)
    assert first[1:] == [None, True] and second[1:] == ["disk", False] and first[0] == second[0]


def test_new_entry_point_with_open_run_and_a_big_cap(monkeypatch):
    """choose(key, open_run) on a pretend 16-core machine: the preflight
    probes 2, 6 and 16 threads on the caller's run and the curve covers every
    count; the tuner reads predicted_speedup for neighbours."""
    opened = []
    spec = seer_envs.get("phold")

    def open_run(n, seed):
        run = spec.open_run({"num_lps": 256, "work_iters": 200}, n, seed)
        opened.append(run)
        return run
    monkeypatch.setattr(stpa_select, "thread_caps", lambda hw: (16, {"physical_cores": 16}))
    n, choice = stpa.choose({"workload": "phold", "num_lps": 256}, open_run)
    assert len(opened) == 1 and opened[0].engine.num_threads in (2, 6, 16)
    assert set(choice.predicted_speedup) == set(range(1, 17)) and 1 <= n <= 16
    assert set(choice.probe_speedup) <= {2, 6, 16} and 2 in choice.probe_speedup
    assert choice.features["workload_code"] == 0 and choice.law["k"] >= 0
    with pytest.raises(ValueError, match="open_run"):
        stpa.choose({"workload": "phold"}, {"num_lps": 256})    # the dropped choose(name, params) form


def test_env_reset_uses_the_cache():
    env = seer_envs.make("pcs_v0", **PARAMS)
    env.reset(seed=0)
    first = env.unwrapped.thread_choice
    env.reset(seed=1)
    assert env.unwrapped.thread_choice.cached is True
    assert env.unwrapped.num_threads == first.chosen
    assert first.predicted_speedup and first.features and first.caps and first.method


def test_later_resets_neither_rebuild_the_key_nor_probe(monkeypatch):
    """A reset of an "auto" env checks the caps and reads the memory cache:
    the configuration's key is built once per env, the hardware probed once."""
    spec = seer_envs.get("pcs_v0")
    keys, probes = [], []
    real_key, real_probe = type(spec).stpa_key, stpa_select.probe
    monkeypatch.setattr(type(spec), "stpa_key", lambda self, *a, **k: keys.append(1) or real_key(self, *a, **k))
    monkeypatch.setattr(stpa_select, "probe", lambda: probes.append(1) or real_probe())
    env = seer_envs.make("pcs_v0", **PARAMS)
    for seed in range(4):
        env.reset(seed=seed)
    assert env.unwrapped.thread_choice.cached is True
    assert (len(keys), len(probes)) == (1, 1)


def test_choice_is_deterministic_for_fixed_features():
    trace = {"workload_code": 2, "n_entities": 4096, "n_agents": 4096, "events_per_unit": 20000.0,
             "event_ns": 170.0, "event_ns_cv": 0.04, "cross_frac": 0.03, "ready_per_round": 330.0,
             "rounds_per_unit": 60.0, "events_per_round": 340.0, "overhead_ns": 4e5, "unit_ns": 4e6,
             "probe_speedup": {2: 1.8, 3: 2.4, 4: 2.7}, "probe_cap": 4}
    hw = {"physical_cores": 4, "logical_cores": 8, "affinity_cpus": 8, "freq_mhz": 2600.0,
          "mem_avail_gb": 16.0, "load_per_cpu": 0.1, "l2_kb": 2048, "l3_kb": 32768}
    models = [stpa_model.AnalyticModel(), stpa_model.UslModel(None)]
    m, why = stpa_model.load_default()
    if why is None:
        models.append(m)
    for m in models:
        a = stpa.choose_from_features(trace, hw, 4, m)
        b = stpa.choose_from_features(dict(trace), dict(hw), 4, m)
        assert a == b and 1 <= a[0] <= 4 and set(a[1]) == {1, 2, 3, 4}


def test_analytic_model_orders_fine_and_coarse_work():
    m = stpa_model.AnalyticModel()
    fine = {"events_per_unit": 1300, "event_ns": 130, "ready_per_round": 22, "rounds_per_unit": 57,
            "cross_frac": 0.03, "overhead_ns": 3.7e4}
    coarse = dict(fine, event_ns=20000)
    assert m.predict(fine, {}, [1, 2])[1] < 1.0 < m.predict(coarse, {}, [1, 2])[1]


def test_phold_and_headless_auto():
    r = seer_envs.get("pcs_v0").headless(grid_width=16, grid_height=16, end_time=60.0, seed=0)
    assert r["num_threads"] == r["thread_choice"].chosen
    # PHOLD lives in the runtime, which imports no STPA: the caller passes the chooser
    from seer_runtime.models import phold
    spec = seer_envs.get("phold")
    r = phold.run(num_lps=64, end_time=3.0, choose=seer_envs.stpa_chooser(spec, {"num_lps": 64}))
    assert r["thread_choice"].method in ("lightgbm", "usl", "analytic", "cap")
    assert (r["thread_choice"].features or {}).get("workload_code", 0) == 0


def test_preflight_traces_the_form_it_is_given():
    if thread_caps()[0] < 2:
        pytest.skip("one CPU: the cap decides, no preflight runs")
    codes = {form: choose(PARAMS, headless=form == "headless")[1].features["workload_code"]
             for form in ("env", "headless")}
    spec = seer_envs.get("pcs_v0")
    assert codes == {"env": spec.workload_codes["env"], "headless": spec.workload_codes["headless"]}


def test_a_changed_model_or_package_version_is_measured_again(monkeypatch):
    """The disk cache is shared by every checkout and venv: its key holds the
    package version and the scenario's code hash, so a rebuilt model never
    reuses a thread choice measured on other code."""
    import seer_runtime.spec as spec_mod
    calls = []
    real = stpa_select.preflight
    monkeypatch.setattr(stpa_select, "preflight", lambda *a, **k: calls.append(1) or real(*a, **k))
    monkeypatch.setattr(stpa_select, "thread_caps", lambda _=None: (2, ["test"]))    # a choice to make
    _, c1 = choose()
    stpa.clear_cache()                                  # another process: reads the file
    _, c2 = choose()
    assert len(calls) == 1 and c2.cache == "disk"
    stpa.clear_cache()
    monkeypatch.setattr(type(seer_envs.get("pcs_v0")), "code_hash", lambda self: "a rebuilt model")
    _, c3 = choose()
    assert len(calls) == 2 and c3.cache is None
    stpa.clear_cache()
    monkeypatch.setattr(spec_mod, "package_version", lambda: "99.0")
    _, c4 = choose()
    assert len(calls) == 3 and c4.cache is None


def test_the_code_hash_follows_the_scenarios_files(tmp_path):
    import seer_runtime.spec as spec_mod
    spec = seer_envs.get("pcs_v0")
    key = spec.stpa_key(PARAMS)
    assert key[3]["code"] == spec.code_hash() and key[3]["version"] == spec_mod.package_version()
    assert spec.code_hash() != seer_envs.get("aircraft_v0").code_hash()
    f = tmp_path / "model.py"
    f.write_text("x = 1\n")
    h1 = spec_mod._files_hash((str(f),))
    f.write_text("x = 2\n")
    assert spec_mod._files_hash((str(f),)) != h1
