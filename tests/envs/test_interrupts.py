# SPDX-License-Identifier: BSD-3-Clause
"""Ctrl-C and fork: a KeyboardInterrupt anywhere in an env call leaves the
env as it was, as after the call, or marked interrupted ("... was
interrupted ...; call reset()"); reset() then gives a fresh env; close()
and exit never block; no step runs untracked; a forked child refuses
clearly.  Risky cases run in a subprocess with a timeout, so a hang fails
instead of blocking the suite."""

import linecache
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import seer_envs

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SEER_DIR = os.path.dirname(os.path.abspath(seer_envs.__file__))
P = dict(grid_width=4, grid_height=4)
A = 16


def _python(code, timeout=120, args=(), path=None):
    """Run ``code`` (or the script ``path``) in a fresh interpreter of this
    tree; a hang is a failure."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT] + sys.path))
    cmd = [sys.executable] + ([path] if path else ["-c", textwrap.dedent(code)]) + list(args)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=HERE)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        pytest.fail(f"hung for {timeout} s; its output ended: {out[-2000:]}", pytrace=False)
    return r.returncode, r.stdout, r.stderr


class _RaiseAt:
    """A tracer raising KeyboardInterrupt at the first line event (in
    seer_envs) for which ``where(frame, source_line)`` is true, or at the
    ``k``-th line event."""

    def __init__(self, where=None, k=None):
        self.where, self.k, self.n, self.fired = where, k, 0, False

    def __call__(self, frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(SEER_DIR):
            return self.local
        return None

    def local(self, frame, event, arg):
        if event != "line" or self.fired:
            return self.local
        hit = self.n == self.k if self.where is None else self.where(
            frame, linecache.getline(frame.f_code.co_filename, frame.f_lineno))
        self.n += 1
        if hit:
            self.fired = True
            raise KeyboardInterrupt
        return self.local


def _interrupted_call(fn, where=None, k=None):
    """Run ``fn`` with a Ctrl-C where ``where`` says (or at line event ``k``);
    True when it landed."""
    r = _RaiseAt(where, k)
    sys.settrace(r)
    try:
        fn()
    except KeyboardInterrupt:
        pass
    finally:
        sys.settrace(None)
    return r.fired


def _after(text, fn_name=None):
    """``where``: the line event right after the line holding ``text`` ran."""
    state = {"seen": False}

    def where(frame, line):
        if state["seen"] and (fn_name is None or frame.f_code.co_name == fn_name):
            return True
        if text in line and (fn_name is None or frame.f_code.co_name == fn_name):
            state["seen"] = True
        return False
    return where


def _in(fn_name, file_suffix, nth=0):
    """``where``: the ``nth`` line event inside function ``fn_name`` of ``file_suffix``."""
    state = {"n": 0}

    def where(frame, line):
        if frame.f_code.co_name == fn_name and frame.f_code.co_filename.endswith(file_suffix):
            state["n"] += 1
            return state["n"] > nth
        return False
    return where


def _vector(n=4, **kw):
    kw = dict(P, **kw)
    kw.setdefault("num_threads", 1)
    return seer_envs.vector_env("pcs_v0", n, **kw)


def _refuses_interrupted(fn):
    with pytest.raises(RuntimeError, match=r"was interrupted.*call reset\(\)"):
        fn()


# --- 9: the guard's __exit__ -------------------------------------------------------

@pytest.mark.parametrize("kind", ["single", "vector"])
def test_a_ctrl_c_in_the_guard_exit_never_leaves_the_env_busy(kind):
    if kind == "single":
        env = seer_envs.make("pcs_v0", num_threads=1, **P)
        step = lambda: env.step_arrays(np.ones(A, np.int64))      # noqa: E731
        twin = seer_envs.make("pcs_v0", num_threads=1, **P)
        twin_step = lambda: twin.step_arrays(np.ones(A, np.int64))      # noqa: E731
    else:
        env, twin = _vector(), _vector()
        step = lambda: env.step(np.ones((4, A), np.int64))     # noqa: E731
        twin_step = lambda: twin.step(np.ones((4, A), np.int64))     # noqa: E731
    env.reset(seed=1)
    assert _interrupted_call(step, _in("__exit__", "layout/guard.py"))
    # the step completed (only its return was lost) or is marked: never "in use by another thread"
    env.reset(seed=2)
    twin.reset(seed=2)
    assert np.array_equal(step()[0], twin_step()[0])


_SIGINT_STORM = """
import signal, sys, time
import numpy as np
import seer_envs

kind = sys.argv[1]
P = dict(grid_width=8, grid_height=8)
if kind == "single":
    env = seer_envs.make("pcs_v0", num_threads=1, **P)
    a = np.ones(64, np.int64)
    step = lambda: env.step_arrays(a)
else:
    env = seer_envs.vector_env("pcs_v0", 4, num_threads=1, **P)
    a = np.ones((4, 64), np.int64)
    step = lambda: env.step(a)

armed, hits = False, 0

def handler(*_):          # a Ctrl-C, armed only around the env's calls (it disarms itself)
    global armed, hits
    if armed:
        armed = False
        hits += 1
        raise KeyboardInterrupt
signal.signal(signal.SIGALRM, handler)
t0, need_reset = time.monotonic(), True
signal.setitimer(signal.ITIMER_REAL, 0.0007, 0.0007)     # a Ctrl-C every 0.7 ms
while hits < 300 and time.monotonic() - t0 < 30:
    try:
        try:
            armed = True
            if need_reset:
                env.reset(seed=1)
                need_reset = False
            step()
            armed = False
        except RuntimeError as e:
            armed = False
            if "in use by another thread" in str(e):
                signal.setitimer(signal.ITIMER_REAL, 0)
                print("WEDGED after", hits, "interrupts:", e)
                sys.exit(1)
            need_reset = True
    except KeyboardInterrupt:
        need_reset = True
signal.setitimer(signal.ITIMER_REAL, 0)
signal.signal(signal.SIGALRM, signal.SIG_IGN)
env.reset(seed=2)
ref = seer_envs.make("pcs_v0", num_threads=1, **P) if kind == "single" else seer_envs.vector_env("pcs_v0", 4, num_threads=1, **P)
ref.reset(seed=2)
out = step()
ref_out = ref.step_arrays(a) if kind == "single" else ref.step(a)
assert np.array_equal(out[0], ref_out[0]) and np.array_equal(out[1], ref_out[1])
env.close()
print("OK", hits)
"""


@pytest.mark.parametrize("kind", ["single", "vector"])
def test_ctrl_c_every_0_7_ms_never_wedges_the_env(kind):
    rc, out, err = _python(_SIGINT_STORM, args=(kind,))
    assert rc == 0 and "OK" in out, out + err[-3000:]
    assert int(out.split()[-1]) >= 20, out        # the storm did hit the env


# --- 10: send with another group in flight ------------------------------------------

def test_send_with_a_group_in_flight_refuses_an_interrupted_env():
    v = _vector(batch_size=2)
    v.reset(seed=0)
    a = np.ones((2, A), np.int64)
    v.send(a, [0, 1])
    # a Ctrl-C inside the second send's preparation, once it has begun changing state
    assert _interrupted_call(lambda: v.send(a, [2, 3]), _in("prepare", "layout/batch.py", nth=2))
    _refuses_interrupted(lambda: v.send(a, [2, 3]))
    _refuses_interrupted(lambda: v.recv())
    obs, _ = v.reset(seed=0)
    assert v.in_flight == 0 and not v.cycles.any()
    v.send(a, [0, 1])
    v.send(a, [2, 3])
    v.recv(), v.recv()
    assert v.cycles.tolist() == [1, 1, 1, 1]
    v.close()


# --- 11: reset with a mask, SAME_STEP's restart ------------------------------------

def test_a_ctrl_c_inside_a_masked_reset_marks_the_env():
    v = _vector(autoreset_mode="disabled", max_cycles=[2, 3, 2, 3])
    v.reset(seed=0)
    a = np.ones((4, A), np.int64)
    v.step(a)
    v.step(a)                       # copies 0 and 2 end
    mask = np.array([True, False, True, False])
    assert _interrupted_call(lambda: v.reset(options={"reset_mask": mask}),
                             _in("restart", "layout/batch.py", nth=3))
    _refuses_interrupted(lambda: v.step(a))
    twin = _vector(autoreset_mode="disabled", max_cycles=[2, 3, 2, 3])
    assert np.array_equal(v.reset(seed=5)[0], twin.reset(seed=5)[0])
    for _ in range(2):
        assert np.array_equal(v.step(a)[0], twin.step(a)[0])


def test_a_ctrl_c_inside_same_steps_restart_marks_the_env():
    v = _vector(autoreset_mode="same_step", max_cycles=[2, 3, 2, 3])
    v.reset(seed=0)
    a = np.ones((4, A), np.int64)
    v.step(a)
    assert _interrupted_call(lambda: v.step(a), _in("restart", "layout/batch.py", nth=3))     # copies 0, 2 restart
    _refuses_interrupted(lambda: v.step(a))
    twin = _vector(autoreset_mode="same_step", max_cycles=[2, 3, 2, 3])
    assert np.array_equal(v.reset(seed=5)[0], twin.reset(seed=5)[0])
    for _ in range(4):
        assert np.array_equal(v.step(a)[0], twin.step(a)[0])
    assert (v.cycles <= v.max_cycles).all()


# --- 12: a step submitted, not yet recorded ----------------------------------------

def test_a_ctrl_c_right_after_submitting_a_step_leaves_no_step_untracked():
    v, twin = _vector(), _vector()
    v.reset(seed=0)
    a = np.ones((4, A), np.int64)
    assert _interrupted_call(lambda: v.send(a), _after("submit(job)", "send"))
    v.reset(seed=3)                 # waits for the step the engine's thread was given
    twin.reset(seed=3)
    for _ in range(3):
        v.send(a)
        assert np.array_equal(v.recv()[0], twin.step(a)[0])
    assert np.array_equal(v.step(a)[0], twin.step(a)[0])
    v.close()


# --- 13, 14: recv ------------------------------------------------------------------

_RECV_WAIT = """
import numpy as np, seer_envs, sys
sys.path.insert(0, ".")
from test_interrupts import _interrupted_call, _after
P = dict(grid_width=16, grid_height=16, power_control_iters=3000)     # steps of ~0.1-0.5 s: recv waits
v = seer_envs.vector_env("pcs_v0", 2, num_threads=1, **P)
v.reset(seed=0)
a = np.ones((2, 256), np.int64)
v.send(a)
# a Ctrl-C right after the wait's acquire (the wait itself changes nothing)
assert _interrupted_call(lambda: v.recv(), _after("self.done.acquire()", "wait"))
obs = v.recv()[0]
twin = seer_envs.vector_env("pcs_v0", 2, num_threads=1, **P)
twin.reset(seed=0)
assert np.array_equal(obs, twin.step(a)[0])
v.send(a)
v.recv()
v.send(a)
v.close()
v2 = seer_envs.vector_env("pcs_v0", 2, num_threads=1, **P)
v2.reset(seed=0)
v2.send(a)
assert _interrupted_call(lambda: v2.recv(), _after("self.done.acquire()", "wait"))
print("OK")
# v2 is left to the exit-time __del__, with its group in flight
"""


def test_a_ctrl_c_inside_recvs_wait_never_blocks_recv_close_or_exit():
    rc, out, err = _python(_RECV_WAIT, timeout=60)
    assert rc == 0 and "OK" in out, out + err[-3000:]


def _recv_lines():
    v = _vector(batch_size=2)
    v.reset(seed=0)
    v.send(np.ones((2, A), np.int64), [0, 1])
    r = _RaiseAt()
    sys.settrace(r)
    try:
        v.recv()
    finally:
        sys.settrace(None)
    v.close()
    return r.n


def test_a_ctrl_c_at_any_line_of_recv_leaves_no_copy_in_flight_after_reset():
    a = np.ones((2, A), np.int64)
    twin = _vector(batch_size=2)
    twin.reset(seed=0)
    ref = twin.step(np.ones((4, A), np.int64))[0][:2]
    for k in range(_recv_lines()):
        v = _vector(batch_size=2)
        v.reset(seed=0)
        v.send(a, [0, 1])
        assert _interrupted_call(lambda: v.recv(), k=k), k
        if v.core.interrupted is None and v.in_flight:
            assert np.array_equal(v.recv()[0], ref), k        # still in flight: received now
        v.reset(seed=1)
        assert v.in_flight == 0, k
        v.send(np.ones((4, A), np.int64))                    # no copy still "in flight"
        obs, *_ = v.recv()
        assert obs.shape == (4, A) + v.single_observation_space.shape, k
        v.close()


# --- 15: "auto" with groups, the first reset ----------------------------------------

def test_a_ctrl_c_while_laying_out_the_groups_at_the_first_reset():
    v = _vector(num_threads="auto", batch_size=2)
    assert _interrupted_call(lambda: v.reset(seed=0), _after("self.batch = b", "ensure_layout"))
    obs, _ = v.reset(seed=0)
    assert v.layout == "groups"
    twin = _vector(batch_size=2)
    a = np.ones((4, A), np.int64)
    assert np.array_equal(obs, twin.reset(seed=0)[0])
    assert np.array_equal(v.step(a)[0], twin.step(a)[0])
    v.close()


# --- 16: fork with a step in flight ---------------------------------------------------

_FORK = """
import os, sys, time
import numpy as np, seer_envs
P = dict(grid_width=16, grid_height=16, power_control_iters=3000)     # steps of ~0.1-0.5 s
v = seer_envs.vector_env("pcs_v0", 2, num_threads=1, **P)
v.reset(seed=0)
a = np.ones((2, 256), np.int64)
v.send(a)
pid = os.fork()
if pid == 0:
    try:
        v.recv()
        print("CHILD recv returned", flush=True)
        os._exit(3)
    except RuntimeError as e:
        print("CHILD refused:", e, flush=True)
    try:
        v.step(a)
        os._exit(4)
    except RuntimeError as e:
        assert "interrupted" in str(e), e
    v.reset(seed=1)                 # usable again after reset
    v.send(a)
    v.recv()
    v.send(a)                       # left in flight at the child's exit
    sys.exit(0)                     # a normal exit: atexit and __del__ must not hang
v.recv()
deadline = time.monotonic() + 60
while True:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
    if time.monotonic() > deadline:
        os.kill(pid, 9)
        print("CHILD HUNG", flush=True)
        sys.exit(1)
    time.sleep(0.05)
print("CHILD STATUS", os.waitstatus_to_exitcode(status), flush=True)
v.close()
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_process_forked_with_a_step_in_flight_refuses_clearly_and_exits():
    rc, out, err = _python(_FORK, timeout=120)
    assert rc == 0, out + err[-3000:]
    assert "CHILD refused:" in out and "was interrupted" in out and "CHILD STATUS 0" in out, out + err[-3000:]


# --- every line ------------------------------------------------------------------------

def test_a_ctrl_c_at_every_line_of_the_env_calls_quick():
    """Single step/reset/restore, vector step (restarts, SAME_STEP),
    reset with a mask (with params; refused under NEXT_STEP and SAME_STEP;
    retried after the interrupt), send/recv (one engine and groups),
    restores (a single env's into a one-copy groups layout), close: a
    KeyboardInterrupt at each line
    (tests/envs/_interrupt_harness.py)."""
    rc, out, err = _python(None, timeout=240, args=("quick", "80"), path=os.path.join(HERE, "_interrupt_harness.py"))
    assert rc == 0 and "OK" in out, out[-4000:] + err[-3000:]


@pytest.mark.slow
def test_a_ctrl_c_at_every_line_of_the_env_calls_full():
    """Adds the first reset, async_reset, groups on two workers, a send with
    a group in flight and the single env's close; every line of each."""
    rc, out, err = _python(None, timeout=1200, args=("full",), path=os.path.join(HERE, "_interrupt_harness.py"))
    assert rc == 0 and "OK" in out, out[-4000:] + err[-3000:]
