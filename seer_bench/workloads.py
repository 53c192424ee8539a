# SPDX-License-Identifier: BSD-3-Clause
"""The PCS workload the vector-env measurements step, SuperSuit's loop over
single envs, and two worker processes of half the copies each."""

import multiprocessing
import time

import numpy as np

import seer_envs

from seer_envs import vector_env

from .vectorisers import supersuit_vec


def pcs_workload(copies, grid, steps):
    """PCS on a ``grid`` x ``grid`` grid with no truncation, and ``steps``
    random action arrays ``(copies, cells)`` (a fixed generator): what every
    PCS runner steps through."""
    kw = dict(grid_width=grid, grid_height=grid, max_cycles=10**6)
    n_act = seer_envs.make("pcs_v0", **kw).action_space("cell_0_0").n
    rng = np.random.default_rng(0)
    return kw, [rng.integers(0, n_act, (copies, grid * grid)) for _ in range(steps)]


def aircraft_workload(copies, steps, uavs=16):
    """Aircraft with ``uavs`` UAVs and no truncation, and ``steps`` random
    action arrays ``(copies, uavs, 2)`` in [-1, 1] (a fixed generator): what
    every Aircraft runner steps through."""
    kw = dict(num_uavs=uavs, max_cycles=10**6)
    rng = np.random.default_rng(0)
    return kw, [rng.uniform(-1, 1, (copies, uavs, 2)).astype(np.float32) for _ in range(steps)]


def supersuit_pcs(copies, kw):
    """SuperSuit's ``concat_vec_envs_v1(..., num_cpus=0)`` over ``copies``
    single 1-thread PCS envs (a Python loop); needs ``supersuit``."""
    return supersuit_vec("pcs_v0", copies, **kw)


def steps_timed(v, acts, engine_s):
    """Step the vector env through ``acts``; append the seconds spent inside
    ``run_until`` to ``engine_s``."""
    w0 = v.engine.counters()[0]
    for a in acts:
        v.step(a)
    engine_s.append(v.engine.counters()[0] - w0)


def _half_worker(conn, copies, kw, acts):
    """Step a 1-thread vector env of ``copies`` copies through ``acts`` once
    per message; reply when done, with the seconds of the whole block and
    of its part inside ``run_until``."""
    v = vector_env("pcs_v0", copies, num_threads=1, **kw)
    v.reset(seed=0)
    conn.send("ready")
    while conn.recv():
        t0, w0 = time.perf_counter(), v.engine.counters()[0]
        for a in acts:
            v.step(a)
        conn.send((time.perf_counter() - t0, v.engine.counters()[0] - w0))


class Halves:
    """Two worker processes (spawned: no state shared with this one), each
    with half the copies; ``round()`` steps both at once and returns when
    both are done.  Their speedup over one process of all the copies is what
    the machine gives two independent workers at that moment."""

    def __init__(self, copies, kw, acts):
        ctx = multiprocessing.get_context("spawn")
        h = copies // 2
        self.conns, self.procs = [], []
        for lo, hi in ((0, h), (h, copies)):
            parent, child = ctx.Pipe()
            p = ctx.Process(target=_half_worker, args=(child, hi - lo, kw, [a[lo:hi] for a in acts]),
                            daemon=True)
            p.start()
            self.conns.append(parent)
            self.procs.append(p)
        for c in self.conns:
            c.recv()
        self.outside_s = []         # per round: each process's seconds outside run_until

    def round(self):
        """Step both processes through their actions once, together."""
        for c in self.conns:
            c.send(True)
        self.outside_s.append([wall - eng for wall, eng in (c.recv() for c in self.conns)])

    def close(self):
        """Stop both processes and join them."""
        for c in self.conns:
            c.send(False)
        for p in self.procs:
            p.join(10)
