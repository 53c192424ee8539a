# SPDX-License-Identifier: BSD-3-Clause
"""STPA's speedup curve: the scalability law fitted to the probes, the
learned residual, the preflight's probes (on a fake run with a fake clock:
no timing), and the cross-process cache."""

import importlib
import json
import math
import subprocess
import sys
import os
import types

import pytest

from stpa import cache, dataset, features
from stpa.model import UslModel
from stpa.select import pick

pf = importlib.import_module("stpa.preflight")   # the package exports the function under this name

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "stpa", "data")


def test_probe_counts():
    assert features.probe_counts(1) == []
    assert features.probe_counts(2) == [2]
    assert features.probe_counts(3) == [2, 3]
    assert features.probe_counts(4) == [2, 3, 4]
    assert features.probe_counts(16) == [2, 6, 16]
    assert features.probe_counts(128) == [2, 16, 128]


@pytest.mark.parametrize("s,k", [(0.05, 0.002), (0.0, 0.0), (0.2, 0.0), (0.01, 0.01)])
def test_fit_usl_recovers_the_law_from_three_points(s, k):
    pts = {t: features.usl(t, s, k) for t in (2, 6, 16)}
    fs, fk = features.fit_usl(pts, 16)
    assert fs == pytest.approx(s, abs=1e-9) and fk == pytest.approx(k, abs=1e-9)


def test_fit_usl_clamps_and_degenerates():
    # S(16) far above the trend from S(2): k would be negative -> 0
    s, k = features.fit_usl({2: 1.5, 6: 4.0, 16: 14.0}, 16)
    assert k == 0.0
    # one point: Amdahl through it
    s, k = features.fit_usl({2: 1.6}, 2)
    assert k == 0.0 and features.usl(2, s, k) == pytest.approx(1.6)
    # superlinear: s < 0 but the curve stays finite up to the cap
    s, k = features.fit_usl({2: 2.2, 6: 7.0, 16: 20.0}, 16)
    assert s < 0 and all(0 < features.usl(t, s, k) < 1e6 for t in range(1, 17))
    assert features.fit_usl({}, 8) == (0.0, 0.0)


def test_probe_view_stops_when_two_threads_lose():
    curve = {1: 1.0, 2: 0.8, 3: 1.2, 6: 1.1, 16: 0.5}
    assert features.probe_view(curve, 16) == {2: 0.8}
    curve[2] = 1.4
    assert features.probe_view(curve, 16) == {2: 1.4, 6: 1.1, 16: 0.5}


def _trace(probes, cap):
    return {"events_per_unit": 5000.0, "event_ns": 800.0, "ready_per_round": 300.0, "rounds_per_unit": 20.0,
            "events_per_round": 250.0, "overhead_ns": 1e5, "unit_ns": 4e6, "cross_frac": 0.1,
            "event_ns_cv": 0.02, "probe_speedup": probes, "probe_cap": cap}


def test_law_alone_extrapolates_past_two_threads():
    # a model that has only seen 1 and 2 threads has no residual: the law
    # fitted to this machine's probes still finds a peak in between
    s_true, k_true = 0.02, 0.004
    probes = {t: features.usl(t, s_true, k_true) for t in features.probe_counts(32)}
    m = UslModel(None)
    curve = m.curve(_trace(probes, 32), 32, list(range(1, 33)))
    truth = {t: features.usl(t, s_true, k_true) for t in range(1, 33)}
    assert pick(curve) == pick(truth)
    assert 8 < pick(curve) < 32


def test_residual_is_applied_off_probes_only_and_clipped():
    class Booster:                     # predicts log(10) everywhere
        def predict(self, X, num_threads=1):
            return [math.log(10.0)] * len(X)
    probes = {2: 1.9, 6: 5.0, 16: 10.0}
    m = UslModel(Booster())
    plain = UslModel(None).curve(_trace(probes, 16), 16, list(range(1, 17)))
    corr = m.curve(_trace(probes, 16), 16, list(range(1, 17)))
    for t in range(1, 17):
        factor = corr[t] / plain[t]
        assert factor == pytest.approx(1.0 if t in (1, 2, 6, 16) else 1.5)


def test_shipped_model_loads_without_sklearn_and_is_small(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "sklearn", None)
    from stpa.model import DEFAULT_MODEL, UslModel as M
    m = M.load(DEFAULT_MODEL)
    assert m.name == "lightgbm" and os.path.getsize(DEFAULT_MODEL) < 1_000_000
    curve = m.curve(_trace({2: 1.9, 6: 5.2, 16: 11.0}, 16), 16, list(range(1, 17)))
    assert set(curve) == set(range(1, 17)) and pick(curve) > 6


def test_xeon_held_out_regret_and_transfer_from_two_cores():
    """The issue's targets on the shipped data (no timing: stored measurements)."""
    two = dataset.load(os.path.join(DATA, "stpa_data.csv"))
    xeon = dataset.load(os.path.join(DATA, "stpa_data_xeon16.csv"))
    assert {c.cap for c in two} == {2} and {c.cap for c in xeon} == {16}

    def regret(model, configs):
        r = []
        for c in configs:
            curve = model.curve(c.probe_trace(), c.cap, sorted(c.throughput))
            r.append(c.throughput[pick(curve)] / c.throughput[c.best()])
        return sum(r) / len(r)
    # transfer: the 2-core data gives no residual rows, the law carries it
    m2 = UslModel.fit(*dataset.residual_xy(two))
    assert m2.booster is None
    assert regret(m2, xeon) >= 0.85
    # held out on the Xeon: 5 folds by configuration
    folds = [xeon[i::5] for i in range(5)]
    rs = []
    for i, test in enumerate(folds):
        train = [c for j, f in enumerate(folds) if j != i for c in f]
        rs.append(regret(UslModel.fit(*dataset.residual_xy(train)), test) * len(test))
    assert sum(rs) / len(xeon) >= 0.95
    # always all cores does worse there
    allc = sum(c.throughput[16] / c.throughput[c.best()] for c in xeon) / len(xeon)
    assert allc < sum(rs) / len(xeon)


# --- preflight on a fake run (the open_run contract) ------------------------------------

class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class FakeEngine:
    def __init__(self, clock, curve, unit_s, num_threads):
        self.clock, self.curve, self.unit_s = clock, curve, unit_s
        self.num_threads = num_threads
        self.switches = []
        self._st = {"wall_s": 0.0, "events": 0, "inbox_pushes": 0, "rounds": 0, "ready_per_round": 0.0}

    def __setattr__(self, name, value):
        if name == "num_threads" and "switches" in self.__dict__:
            self.switches.append(value)
        object.__setattr__(self, name, value)

    def stats(self):
        return dict(self._st)

    def unit(self):
        dt = self.unit_s / self.curve[self.num_threads]
        self.clock.now += dt
        st = self._st
        rounds = st["rounds"] + 10
        st["ready_per_round"] = (st["ready_per_round"] * st["rounds"] + 10 * 50) / rounds
        st.update(wall_s=st["wall_s"] + 0.9 * dt, events=st["events"] + 1000,
                  inbox_pushes=st["inbox_pushes"] + 100, rounds=rounds)


class FakeRun:
    n_entities, n_agents = 500, 20

    def __init__(self, engine):
        self.engine = engine

    def advance(self, n=1):
        for _ in range(n):
            self.engine.unit()


def _fake(monkeypatch, curve, unit_s=1e-3, workload_code=None):
    clock = FakeClock()
    monkeypatch.setattr(pf, "time", types.SimpleNamespace(perf_counter=clock))
    opened = []

    def open_run(num_threads, seed):
        opened.append((num_threads, seed))
        run = FakeRun(FakeEngine(clock, curve, unit_s, num_threads))
        if workload_code is not None:                 # a seer_runtime.Run carries one
            run.workload_code = workload_code
        opened.append(run)
        return run
    return open_run, opened


def test_preflight_probes_on_one_run_and_reads_the_curve(monkeypatch):
    curve = {t: features.usl(t, 0.03, 0.002) for t in range(1, 17)}
    open_run, opened = _fake(monkeypatch, curve, workload_code=5)
    tr = pf.preflight(open_run, seed=3, cap=16)
    (n, seed), run = opened                           # one run, at one thread
    assert n == 1 and seed == 3 + pf.SEED_OFFSET
    assert run.engine.switches == [2, 6, 16]          # team switched in place, smallest first
    assert tr["probe_speedup"] == {t: pytest.approx(curve[t]) for t in (2, 6, 16)}
    assert tr["probe_cap"] == 16 and tr["workload_code"] == 5 and tr["n_entities"] == 500
    assert tr["events_per_unit"] == 1000 and tr["rounds_per_unit"] == 10
    assert tr["ready_per_round"] == pytest.approx(50) and tr["cross_frac"] == pytest.approx(0.1)
    assert tr["preflight_s"] == pytest.approx(1e-3 * (pf.WARM_UNITS + pf.UNITS)
                                              + 2 * 1e-3 * sum(1 / curve[t] for t in (2, 6, 16)))
    json.dumps(tr)                                    # cacheable as is


def test_preflight_stops_probing_when_two_threads_lose(monkeypatch):
    curve = {t: 1.0 / (1 + 0.3 * (t - 1)) for t in range(1, 17)}
    open_run, opened = _fake(monkeypatch, curve)
    tr = pf.preflight(open_run, cap=16)
    assert list(tr["probe_speedup"]) == [2] and opened[1].engine.switches == [2]
    assert tr["workload_code"] == -1                 # a run without one


def test_preflight_on_one_core_does_not_probe(monkeypatch):
    open_run, opened = _fake(monkeypatch, {1: 1.0})
    tr = pf.preflight(open_run, cap=1)
    assert tr["probe_speedup"] == {} and opened[1].engine.switches == []


# --- the cache file ---------------------------------------------------------------------

def test_cache_roundtrip_corrupt_and_off(tmp_path, monkeypatch):
    p = tmp_path / "sub" / "stpa.json"
    monkeypatch.setenv("STPA_CACHE", str(p))
    assert cache.get("a") is None
    assert cache.put("a", {"x": 1}) and cache.get("a") == {"x": 1}
    p.write_text("{ not json")
    assert cache.get("a") is None                 # corrupt: treated as empty
    assert cache.put("b", [1]) and cache.get("b") == [1]
    assert not list(p.parent.glob(".stpa.*.tmp"))  # no temporary left behind
    monkeypatch.setenv("STPA_CACHE", "off")
    assert cache.path() is None and cache.put("c", 1) is False and cache.get("b") is None


def test_cache_default_location(monkeypatch, tmp_path):
    monkeypatch.delenv("STPA_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.path() == os.path.join(str(tmp_path), "seer", "stpa.json")


WRITER = """
import os, sys
os.environ["STPA_CACHE"] = sys.argv[1]
from stpa import cache
i = int(sys.argv[2])
for j in range(15):
    cache.put(f"{i}-{j}", {"i": i, "j": j})
"""


def test_cache_concurrent_writers_lose_nothing(tmp_path):
    # four processes at once (plain subprocesses: a spawn Pool would need this
    # test module importable in its children, which pytest's importlib mode is not)
    path = str(tmp_path / "stpa.json")
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, path, str(i)]) for i in range(4)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    with open(path) as f:
        entries = json.load(f)["entries"]
    assert set(entries) == {f"{i}-{j}" for i in range(4) for j in range(15)}


# --- the CLI ------------------------------------------------------------------------------

def test_train_on_a_missing_file_is_one_line(tmp_path):
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "stpa.cli", "train", "--data", str(tmp_path / "nope.csv")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0 and "nope.csv" in r.stderr


def test_train_on_both_machines(tmp_path, capsys):
    from stpa import cli
    out = tmp_path / "m.txt"
    rc = cli.main(["train", "--data", os.path.join(DATA, "stpa_data.csv"),
                   "--data", os.path.join(DATA, "stpa_data_xeon16.csv"), "--out", str(out)])
    assert rc == 0 and "2 cores" in capsys.readouterr().out
    m = UslModel.load(str(out))
    assert m.booster is not None
    # only 1 and 2 threads: nothing for a residual to learn, said in one line
    rc = cli.main(["train", "--data", os.path.join(DATA, "stpa_data.csv"), "--out", str(tmp_path / "n.txt")])
    assert rc == 2 and "no rows above 2 threads" in capsys.readouterr().err


def test_collect_thread_options():
    from stpa import cli
    assert cli.default_threads(16) == [1, 2, 3, 4, 6, 8, 12, 16]
    assert cli.default_threads(2) == [1, 2]
    assert set(features.probe_counts(64)) <= set(cli.default_threads(64))
    assert cli.parse_threads("4,2", 16) == [1, 2, 4]
    for bad in ("a,2", "0,2", ""):
        with pytest.raises(SystemExit):
            cli.parse_threads(bad, 16)


def test_collect_stops_at_its_budget_and_writes_the_probe_columns(tmp_path, capsys):
    import csv
    from seer import stpa_cli     # collect reads the scenario registry: the `stpa` console script
    out = tmp_path / "d.csv"
    assert stpa_cli.main(["collect", "--out", str(out), "--split", "heldout", "--quick", "--threads", "1,2",
                          "--repeats", "1", "--budget-s", "0.001"]) == 0
    assert "time budget" in capsys.readouterr().err
    with open(out) as f:
        rows = list(csv.DictReader(f))
    assert [int(float(r["threads"])) for r in rows] == [1, 2]
    assert json.loads(rows[0]["probe_speedup"]).keys() == {"2"}
    (c,) = dataset.load(str(out))
    assert c.cap == 2 and c.measured_probe.keys() == {2}


def test_probe_leaves_no_file_open():
    import gc
    import warnings
    probe_mod = importlib.import_module("stpa.probe")
    probe_mod._cpu_model = None
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        probe_mod.probe()
        probe_mod.cpu_model()
        gc.collect()
    assert not [x for x in w if issubclass(x.category, ResourceWarning)]


def test_train_to_an_unwritable_path_is_one_line(tmp_path, capsys):
    from stpa import cli
    rc = cli.main(["train", "--data", os.path.join(DATA, "stpa_data_xeon16.csv"),
                   "--out", str(tmp_path / "no_such_dir" / "m.txt")])
    err = capsys.readouterr().err
    assert rc == 2 and "cannot write" in err and err.strip().count("\n") == 0


def test_predict_reads_the_registry_and_bad_input_is_one_line(capsys):
    from seer import stpa_cli
    assert stpa_cli.main(["predict", "phold", "num_lps=32", "work_iters=0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("phold {'num_lps': 32, 'work_iters': 0}: ") and "1 thread(s): predicted speedup 1.00" in out
    for argv, words in ((["nope_v0"], "unknown scenario"), (["phold", "num_lps=0"], "num_lps"),
                        (["phold", "bogus=1"], "bogus"), (["phold", "num_lps"], "key=value"),
                        (["pcs_v0:sideways"], "headless")):
        assert stpa_cli.main(["predict"] + argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("stpa predict: ") and words in err and err.strip().count("\n") == 0
