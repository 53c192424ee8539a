# SPDX-License-Identifier: BSD-3-Clause
"""A KeyboardInterrupt at every line of the env calls (``sys.settrace``).

For each scenario (an env in a known state and one call), the call's line
events inside ``seer_envs`` are counted; then, for each ``k``, a new env in
that state runs the call with a tracer that raises KeyboardInterrupt at the
``k``-th line event (where a Ctrl-C lands: Python delivers signals between
bytecodes of the main thread).  Afterwards the env must be

- as before the call, or as after it (the call completed and only its return
  value was lost), compared by snapshot bytes; or
- marked interrupted: the next step raises the documented RuntimeError
  ("... was interrupted ...; call reset()"), and a masked reset retried
  raises one naming the full reset, changing nothing;

and ``reset(seed=...)`` then gives an env equal to a fresh one (snapshot bytes
after the reset and after a step).  ``close()`` after an interrupted close
returns and leaves the env closed.

Run as ``python _interrupt_harness.py quick SECONDS | full`` (quick: the
basic scenarios, every line, stopping after SECONDS): prints one line per
failure and "OK <cases>" at the end; the exit status is 0 when none failed.
"""

import os
import sys
import time

import numpy as np

import seer_envs

SEER_DIR = os.path.dirname(os.path.abspath(seer_envs.__file__))
P = dict(grid_width=4, grid_height=4)
A = 16


class Raiser:
    """Counts line events in seer_envs frames; raises at the ``k``-th (None: count only)."""

    def __init__(self, k=None):
        self.k, self.n, self.fired, self.where = k, 0, False, None

    def __call__(self, frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(SEER_DIR):
            return self.local
        return None

    def local(self, frame, event, arg):
        if event == "line" and not self.fired:
            if self.n == self.k:
                self.fired = True
                self.where = f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"
                raise KeyboardInterrupt
            self.n += 1
        return self.local


def traced(fn, k=None):
    r = Raiser(k)
    sys.settrace(r)
    try:
        fn()
    except KeyboardInterrupt:
        LAST[0] = r.where
        raise
    finally:
        sys.settrace(None)
    return r


LAST = [None]


# --- scenarios: (name, make, call, kind) ---------------------------------------------

def acts_vec(n=4):
    return np.ones((n, A), np.int64)


def single(**kw):
    env = seer_envs.make("pcs_v0", num_threads=1, **P, **kw)
    env.reset(seed=1)
    env.step_arrays(np.ones(A, np.int64))
    return env


def vector(n=4, **kw):
    kw = dict(P, **kw)
    kw.setdefault("num_threads", 1)
    v = seer_envs.vector_env("pcs_v0", n, **kw)
    v.reset(seed=0)
    return v


def vec_ending(mode, **kw):
    v = vector(max_cycles=[2, 3, 2, 3], autoreset_mode=mode, **kw)
    v.step(acts_vec())
    return v


def vec_two_steps(mode, **kw):
    v = vec_ending(mode, **kw)
    v.step(acts_vec())          # copies 0 and 2 end here
    return v


MASK = np.array([True, False, True, False])


def masked_reset(**options):
    """The call ``reset(options={"reset_mask": MASK, **options})``: under
    DISABLED it restarts copies 0 and 2; under another autoreset mode it is
    refused with a ValueError naming ``reset_mask`` (the call then returns:
    a refusal must leave the env as before)."""
    def call(v):
        try:
            v.reset(options=dict(options, reset_mask=MASK))
        except ValueError as e:
            if v.core.autoreset_mode.name == "DISABLED" or "reset_mask" not in str(e):
                raise
    call.masked = True
    return call


def snap_source():
    v = vector(max_cycles=[2, 3, 2, 3])
    for _ in range(3):
        v.step(acts_vec())
    return v.snapshot(), v.snapshot(copies=[1])


def scenarios(full):
    snap, snap1 = snap_source()
    single_snap = single().snapshot()
    out = [
        ("single step_arrays", single, lambda e: e.step_arrays(np.ones(A, np.int64)), "single"),
        ("single dict step", single, lambda e: e.step({a: 1 for a in e.agents}), "single"),
        ("single reset", single, lambda e: e.reset(seed=3), "single"),
        ("single restore", single, lambda e: e.restore(single_snap), "single"),
        ("vector step NEXT_STEP (restarts)", lambda: vec_two_steps("next_step"),
         lambda v: v.step(acts_vec()), "vector"),
        ("vector step SAME_STEP (autoreset)", lambda: vec_ending("same_step"),
         lambda v: v.step(acts_vec()), "vector"),
        ("vector reset_mask", lambda: vec_two_steps("disabled"), masked_reset(), "vector"),
        ("vector reset_mask with params", lambda: vec_two_steps("disabled"),
         masked_reset(params={"handoff_penalty": 3.0}), "vector"),
        ("vector reset_mask NEXT_STEP (refused)", lambda: vec_two_steps("next_step"), masked_reset(), "vector"),
        ("vector reset_mask SAME_STEP (refused)", lambda: vec_ending("same_step"), masked_reset(), "vector"),
        ("vector send/recv", lambda: vector(), [lambda v: v.send(acts_vec()), lambda v: v.recv()], "vector"),
        ("groups send/recv", lambda: vector(batch_size=2),
         [lambda v: v.send(acts_vec(2), [0, 1]), lambda v: v.send(acts_vec(2), [2, 3]),
          lambda v: v.recv(), lambda v: v.recv()],
         "vector"),
        ("vector restore whole", lambda: vector(max_cycles=[2, 3, 2, 3]), lambda v: v.restore(snap), "vector"),
        ("vector restore copies", lambda: vec_ending("next_step"),
         lambda v: v.restore(snap1, copies=[2]), "vector"),
        ("one-copy groups restore of a single env's", lambda: vector(1, num_threads=2, copy_parallel="engines"),
         lambda v: v.restore(single_snap), "vector"),
        ("vector close", lambda: vector(), lambda v: v.close(), "close"),
    ]
    if full:
        out += [
            ("single first reset", lambda: seer_envs.make("pcs_v0", num_threads=1, **P),
             lambda e: e.reset(seed=3), "single"),
            ("vector async_reset", lambda: vector(batch_size=2),
             [lambda v: v.async_reset(seed=5), lambda v: v.recv(), lambda v: v.recv()], "vector"),
            ("groups (2 workers) step", lambda: vector(num_threads=2, copy_parallel="engines",
                                                       max_cycles=[2, 3, 2, 3]),
             lambda v: v.step(acts_vec()), "vector"),
            ("groups (2 workers) reset", lambda: vector(num_threads=2, copy_parallel="engines"),
             lambda v: v.reset(seed=4), "vector"),
            ("groups step SAME_STEP", lambda: vec_ending("same_step", batch_size=2),
             lambda v: v.step(acts_vec()), "vector"),
            ("groups reset_mask", lambda: vec_two_steps("disabled", batch_size=2), masked_reset(), "vector"),
            ("vector send while a group is in flight",
             lambda: _sent(vector(batch_size=2)),
             [lambda v: v.send(acts_vec(2), [2, 3]), lambda v: v.recv(), lambda v: v.recv()], "vector"),
            ("single close", single, lambda e: e.close(), "close"),
        ]
    return out


def _sent(v):
    v.send(acts_vec(2), [0, 1])
    return v


# --- checks ------------------------------------------------------------------------

def fingerprint(env, kind, steps=3):
    """The env's state: its counters, flags and engines' digests, then the
    outputs of ``steps`` more steps (the model's state shows in them)."""
    if kind == "vector":
        while env.in_flight:
            env.recv()
    core, b = env.core, env.core.batch
    engines = b.engines if hasattr(b, "groups") else [b.engine]
    out = [b.cycle.tobytes(), b.done.tobytes(), b.ep_return.tobytes(), b.ep_length.tobytes(),
           b.seeds_used.tobytes(), b.max_cycles.tobytes(), core.waiting.tobytes(), core.ended.tobytes(),
           None if core.last_obs is None else core.last_obs.tobytes(),
           tuple(None if e is None else e.state_digest() for e in engines), str(b.rng_states() if core.started else None)]
    if kind != "vector":
        out.append(tuple(env.agents))
    for _ in range(steps):
        try:
            if kind == "vector":
                r = env.step(acts_vec(env.num_envs))
            else:
                r = env.step_arrays(np.ones(A, np.int64))
        except RuntimeError as e:
            out.append(str(e))
            break
        out.append(tuple(np.asarray(x).tobytes() for x in r[:4]))
    return out


def marked(env):
    return env.core.interrupted is not None


def step_refuses(env, kind):
    try:
        if kind == "vector":
            env.step(acts_vec(env.num_envs))
        else:
            env.step_arrays(np.ones(A, np.int64))
    except RuntimeError as e:
        return "was interrupted" in str(e) and "call reset()" in str(e)
    return False


def retry_refuses(env, call):
    """A marked env refuses the masked reset retried, naming the full
    reset, and stays as it was (marked, its copies' counters unchanged)."""
    b = env.core.batch
    before = (b.cycle.tobytes(), b.seeds_used.tobytes(), env.core.ended.tobytes())
    try:
        call(env)
    except RuntimeError as e:
        return ("reset_mask" in str(e) and "call reset() without" in str(e) and marked(env)
                and (b.cycle.tobytes(), b.seeds_used.tobytes(), env.core.ended.tobytes()) == before)
    return False


def after_reset(env, kind):
    env.reset(seed=9)
    return fingerprint(env, kind)


class _Failures(list):
    def append(self, line):
        print("FAIL", line, flush=True)
        super().append(line)


def run(full, budget_s=None, only=None):
    failures, cases = _Failures(), 0
    t0 = time.monotonic()
    for name, make, calls, kind in scenarios(full):
        if only is not None and only not in name:
            continue
        print("scenario", name, flush=True)
        calls = calls if isinstance(calls, list) else [calls]

        def call(env, upto=len(calls)):
            for c in calls[:upto]:
                c(env)
        first = make()
        n = traced(lambda: call(first)).n
        first.close()
        # every state the env may be left in unmarked: before, and after each call of the sequence
        allowed, fresh = [], []
        if kind != "close":
            for i in range(len(calls) + 1):
                e = make()
                call(e, i)
                allowed.append(fingerprint(e, kind))
                e = make()
                call(e, i)
                while kind == "vector" and e.in_flight:
                    e.recv()
                fresh.append(after_reset(e, kind))     # (a restore keeps its copies' max_cycles)
        for k in range(n):
            if budget_s is not None and time.monotonic() - t0 > budget_s:
                break
            cases += 1
            env = make()
            try:
                r = traced(lambda: call(env), k)
            except KeyboardInterrupt:
                pass
            else:
                if r.n <= k:         # this run had fewer lines (workers racing for the groups)
                    env.close()
                    continue
                failures.append(f"{name} k={k}: no interrupt raised (line events {r.n})")
                continue
            try:
                if kind == "close":
                    env.close()
                    if not env.core.closed:
                        failures.append(f"{name} k={k}: close() after the interrupt left the env open")
                    continue
                if marked(env):
                    if not step_refuses(env, kind):
                        failures.append(f"{name} k={k}: marked ({env.core.interrupted}) but a step does not refuse")
                    if getattr(calls[0], "masked", False) and not retry_refuses(env, calls[0]):
                        failures.append(f"{name} k={k} at {LAST[0]}: marked, and the masked reset retried "
                                        "does not refuse naming the full reset (or changed the env)")
                else:
                    fp = fingerprint(env, kind)
                    if fp not in allowed:
                        failures.append(f"{name} k={k} at {LAST[0]}: unmarked, and neither as before nor as after the call")
                if after_reset(env, kind) not in fresh:
                    failures.append(f"{name} k={k} at {LAST[0]}: reset() does not give a fresh env")
            except Exception as e:       # noqa: BLE001 - every failure is reported
                failures.append(f"{name} k={k}: {type(e).__name__}: {e}")
            finally:
                try:
                    env.close()
                except Exception as e:       # noqa: BLE001
                    failures.append(f"{name} k={k}: close: {type(e).__name__}: {e}")
    return failures, cases


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "quick"
    budget = None if mode == "full" else float(sys.argv[2])
    fails, n = run(mode == "full", budget, sys.argv[3] if len(sys.argv) > 3 else None)
    print("OK" if not fails else "FAILED", n)
    sys.exit(1 if fails else 0)
