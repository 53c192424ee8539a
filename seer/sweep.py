# SPDX-License-Identifier: BSD-3-Clause
"""Run a config file's points, locally or as Ray tasks, into a tidy CSV
(one row per point); resumable; failed points are recorded and skipped."""

import contextlib
import csv
import json
import os
import sys
import tempfile
import traceback

from seer import plots
from seer.configfile import ConfigError, load

# Columns whose values do not depend on timing (equal for equal runs).
DETERMINISTIC = ("steps", "events", "mean_reward", "call_attempts", "busy_lines", "channel_blocks",
                 "handoff_blocks", "handoffs", "blocking_probability", "digest")
MEASURES = ("steps_per_s", "events_per_s", "wall_s", "num_threads") + DETERMINISTIC


def point_key(point):
    key = {"params": point["params"], "run": point["run"]}
    if point.get("param_sampler"):
        key["param_sampler"] = point["param_sampler"]
    return json.dumps(key, sort_keys=True, default=str)


def run_point(scenario_name, point):
    """Run one point; returns a flat result row (never raises)."""
    from seer.scenarios import registry
    # a swept list (one value per copy) as the CSV holds it, so fresh rows and read ones plot alike
    row = {"key": point_key(point), **{f"sweep.{k}": json.dumps(v) if isinstance(v, list) else v
                                       for k, v in point["swept"].items()},
           "machine": machine(), "load_1m": _load()}
    try:
        kw = {"param_sampler": point["param_sampler"]} if point.get("param_sampler") else {}
        res = registry()[scenario_name].run(point["params"], point["run"], **kw)
    except Exception as e:
        row["error"] = f"{type(e).__name__}: {e}"
        row["traceback"] = traceback.format_exc(limit=3)
        return row
    for k in MEASURES:
        if k in res:
            row[k] = res[k]
    row["error"] = ""
    return row


def machine():
    """CPU model and logical CPU count of this host, for the plots' caption."""
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        pass
    import platform
    return f"{model or platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs"


def _load():
    try:
        return round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        return ""


def read_done(csv_path):
    if not os.path.exists(csv_path):
        return {}
    with open(csv_path, newline="") as f:
        return {r["key"]: r for r in csv.DictReader(f)}


def write_rows(csv_path, rows):
    cols = ["key"]
    for r in rows:
        for k in r:
            if k not in cols and k != "traceback":
                cols.append(k)
    # a unique temp file in the same folder, renamed over the CSV: a crash
    # never leaves a half-written results file, and no two writers share a name
    fd, tmp = tempfile.mkstemp(prefix=".results.", suffix=".csv.tmp", dir=os.path.dirname(csv_path) or ".")
    try:
        with os.fdopen(fd, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
            w.writeheader()
            for r in rows:
                w.writerow(r)
        os.replace(tmp, csv_path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def folder_lock(out_dir):
    """Hold ``out_dir/.lock`` for the whole sweep: a second sweep into the
    same folder waits for the first (then resumes from its rows) instead of
    racing it on results.csv."""
    try:
        import fcntl
    except ImportError:             # not POSIX: no lock
        yield
        return
    with open(os.path.join(out_dir, ".lock"), "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"seer sweep: another sweep is writing to {out_dir}; waiting for it", file=sys.stderr)
            fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def run_sweep(path, out_dir=None, use_ray=False, progress=None, retry_failed=False, overwrite=False):
    """Run every point of ``path`` not yet in ``out_dir/results.csv``.

    A results.csv holding rows that are not points of ``path`` (the file
    was changed since) raises :class:`ConfigError` unless ``overwrite``
    (then those rows are dropped): rows are never lost silently.

    Returns ``(rows in point order, number of points run now, csv path,
    png paths)``.
    """
    spec = load(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    out_dir = out_dir or os.path.join("sweeps", stem)
    os.makedirs(out_dir, exist_ok=True)
    with folder_lock(out_dir):
        return _run_locked(spec, stem, out_dir, use_ray, progress, retry_failed, overwrite)


def _run_locked(spec, stem, out_dir, use_ray, progress, retry_failed, overwrite):
    csv_path = os.path.join(out_dir, "results.csv")
    done = read_done(csv_path)
    points = spec.points()
    stale = set(done) - {point_key(p) for p in points}
    if stale and not overwrite:
        raise ConfigError(f"{csv_path} holds {len(stale)} row(s) that are not points of {spec.path} (the sweep "
                          f"file changed since); rerun with --overwrite to replace them, or give a new --out")
    for k in stale:
        del done[k]
    if stale:
        write_rows(csv_path, [done[k] for k in _order(points, done)])
    todo = [p for p in points if point_key(p) not in done
            or (retry_failed and done[point_key(p)].get("error"))]
    results = dict(done)
    if progress is not None:
        progress.total = len(todo)
        progress.refresh()
    if use_ray and todo:
        for key, row in _run_on_ray(spec.scenario.name, todo, progress):
            results[key] = row
            write_rows(csv_path, [results[k] for k in _order(points, results)])
    else:
        for p in todo:
            row = run_point(spec.scenario.name, p)
            results[row["key"]] = row
            write_rows(csv_path, [results[k] for k in _order(points, results)])
            _tick(progress, row)
    rows = [results[k] for k in _order(points, results)]
    from seer_envs.scenario.config import describe
    units = {field: unit for field, _, unit, _ in describe(spec.scenario.config_cls)}
    pngs = plots.sweep_plots(rows, list(spec.sweep), out_dir, title=stem, units=units) if spec.sweep else []
    return rows, len(todo), csv_path, pngs


def _tick(progress, row):
    if progress is not None:
        if row.get("error"):
            progress.set_postfix_str("failed: " + row["error"][:30], refresh=False)
        progress.update(1)


def _order(points, results):
    return [point_key(p) for p in points if point_key(p) in results]


def ray_task_options(point, node_cpus):
    """Ray options of one sweep point's task: ``num_cpus`` is its thread
    count, so points sharing a node never oversubscribe it; "auto" asks for
    a whole node.  Capped at ``node_cpus`` (the largest node), or the task
    would wait for a node that does not exist.  Ray sets OMP_NUM_THREADS to
    the CPUs it grants, and "auto" caps at it."""
    node_cpus = max(1, int(node_cpus))
    t = point["run"].get("num_threads", "auto")
    return {"num_cpus": node_cpus if t == "auto" else max(1, min(int(t), node_cpus))}


def _ray_requirement():
    """The Ray requirement of SEER's [ray] extra (``ray>=2.9``), read from
    the installed package's metadata; ``ray`` when that is not there."""
    from importlib import metadata
    try:
        reqs = metadata.requires("seer") or []
    except metadata.PackageNotFoundError:
        reqs = []
    for r in reqs:
        spec, _, marker = r.partition(";")
        if "extra" in marker and '"ray"' in marker.replace("'", '"') and spec.strip().startswith("ray"):
            return spec.strip().replace(" ", "")
    return "ray"


def _run_on_ray(scenario_name, todo, progress):
    try:
        import ray
    except ImportError:
        raise SystemExit(f"seer: sweep --ray needs Ray: pip install {_ray_requirement()!r} (what SEER's "
                         "[ray] extra installs; SEER itself need not be reinstalled)") from None
    if not ray.is_initialized():
        ray.init(ignore_reinit_error=True, log_to_driver=False, include_dashboard=False)
    node_cpus = max([n["Resources"].get("CPU", 0) for n in ray.nodes() if n.get("Alive")] or [1])
    task = ray.remote(run_point)
    pending = {task.options(**ray_task_options(p, node_cpus)).remote(scenario_name, p): p for p in todo}
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            pending.pop(ref)
            row = ray.get(ref)
            _tick(progress, row)
            yield row["key"], row
