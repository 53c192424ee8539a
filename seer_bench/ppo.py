# SPDX-License-Identifier: BSD-3-Clause
"""What the examples' trainers share (the CleanRL-style ones, and the
argparse types of the RLlib ones), in one place the benchmarks import too
(needs torch, README's RL line): CleanRL's habits (``--track``,
``--total-timesteps``, ``--save-model``, ``--capture-video``, ``--seed``,
``--num-threads``), the learner's setup (:func:`setup_learner`: torch's seed
and threads, glibc's malloc kept from unmapping the update's tensors), the TensorBoard logger, the layer initialisation and activation, PPO's
minibatch loss, the GIF writer, and the rollouts collected one update ahead
(:class:`Rollouts`, ``--overlap``) with their clock.  One name per thing; each example stays one file of its own
algorithm and runs as ``python examples/<example>.py``; the benchmarks
load one with :func:`seer_bench.examples.load`.
"""

import argparse
import collections
import contextlib
import copy
import ctypes
import os
import platform
import threading
import time

import numpy as np
import torch
import torch.nn as nn

import seer_runtime


def layer(i, o, std=np.sqrt(2)):
    """A linear layer with CleanRL's orthogonal initialisation."""
    lin = nn.Linear(i, o)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.constant_(lin.bias, 0.0)
    return lin


class _Tanh(torch.autograd.Function):
    """tanh as ``2 sigmoid(2x) - 1``; the backward from the saved output."""

    @staticmethod
    def forward(ctx, x):
        y = torch.sigmoid(2 * x).mul_(2).sub_(1)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return torch.ops.aten.tanh_backward(grad, y)      # grad * (1 - y^2), fused


class Tanh(nn.Module):
    """The trainers' hidden activation: tanh, computed as
    ``2 sigmoid(2x) - 1`` (within 2e-7 of ``torch.tanh``).  On the CPU
    torch's own tanh costs about four times the sigmoid and the three
    elementwise steps together (1.7 ms against 0.4 ms on a 12,288 x 64
    minibatch, one thread, 2-core AMD EPYC), and the activations were a
    third of the PPO update, the loop's bottleneck
    (docs/measurements/dev2-2026-12-07/README.md)."""

    def forward(self, x):
        return _Tanh.apply(x)


def ppo_loss(logp, old_logp, adv, val, ret, ent, clip, ent_coef, weight=None):
    """CleanRL's PPO loss on one minibatch.

    Parameters
    ----------
    logp, old_logp : torch.Tensor
        Log-probabilities of the taken actions under the current policy and
        under the policy that collected them; any shape, the same for all
        the per-sample tensors here.
    adv : torch.Tensor
        Advantages; normalised over the minibatch here.
    val, ret : torch.Tensor
        The critic's values and the return targets.
    ent : torch.Tensor
        The policy's entropy per sample.
    clip : float
        The clip range of the probability ratio.
    ent_coef : float
        The entropy bonus's weight (the value loss weighs 0.5).
    weight : torch.Tensor, optional
        Per-sample weights of the policy term: the decoupled objective's
        importance weights when ``old_logp`` is not the behaviour policy's
        (:func:`ppo_epochs` under overlap).

    Returns
    -------
    loss : torch.Tensor
        The scalar to minimise: the clipped policy objective, half the value
        loss, minus the entropy bonus.
    stats : dict
        Floats for logging: ``policy_loss``, ``value_loss``, ``entropy``,
        ``approx_kl`` (the k3 estimator, ``(r - 1) - log r``) and
        ``clipfrac`` (the share of samples whose ratio left the clip range).
    """
    log_ratio = logp - old_logp
    ratio = log_ratio.exp()
    with torch.no_grad():
        approx_kl = ((ratio - 1) - log_ratio).mean().item()
        clipfrac = ((ratio - 1.0).abs() > clip).float().mean().item()
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    pg = torch.max(-adv * ratio, -adv * ratio.clamp(1 - clip, 1 + clip))
    pg = (pg if weight is None else weight * pg).mean()
    v_loss = 0.5 * ((val - ret) ** 2).mean()
    entropy = ent.mean()
    loss = pg + 0.5 * v_loss - ent_coef * entropy
    return loss, {"policy_loss": pg.item(), "value_loss": v_loss.item(), "entropy": entropy.item(),
                  "approx_kl": approx_kl, "clipfrac": clipfrac}


class ReturnScaler:
    """Rewards divided by a running standard deviation of the discounted
    return (Gymnasium's ``NormalizeReward``, CleanRL's default for
    continuous control), one return per agent row: PPO's value targets then
    have a scale near 1 on every task, so the critic's loss and the policy's
    advantages stay in range whatever the reward's units.  Statistics are
    float64 and updated once per step from the whole batch; ``reset(rows)``
    restarts the returns of rows whose episode began."""

    def __init__(self, n, gamma, eps=1e-8):
        self.ret = np.zeros(n)
        self.gamma, self.eps = gamma, eps
        self.count, self.mean, self.var = 1e-4, 0.0, 1.0

    def __call__(self, rew, alive=None):
        """``rew`` (n,) -> rewards divided by the running std, as float32."""
        rew = np.asarray(rew, np.float64).reshape(-1)
        self.ret = self.ret * self.gamma + rew
        live = self.ret if alive is None else self.ret[np.asarray(alive, bool).reshape(-1)]
        if live.size:
            m, v, k = live.mean(), live.var(), live.size
            d, tot = m - self.mean, self.count + k
            self.mean += d * k / tot
            self.var = (self.var * self.count + v * k + d * d * self.count * k / tot) / tot
            self.count = tot
        return (rew / np.sqrt(self.var + self.eps)).astype(np.float32)

    def reset(self, rows=None):
        if rows is None:
            self.ret[:] = 0
        else:
            self.ret[np.asarray(rows).reshape(-1)] = 0

    @property
    def scale(self):
        """The divisor in force: a return in the task's units is this times
        a scaled one."""
        return float(np.sqrt(self.var + self.eps))


class RunningNorm(nn.Module):
    """An input normaliser (CleanRL's ``NormalizeObservation``):
    ``(x - mean) / sqrt(var + eps)`` clipped to +-``clip``, from running
    statistics kept as buffers, so a saved agent evaluates as it trained.
    The trainer calls :meth:`update` with a rollout's inputs after that
    rollout's update: the statistics stay fixed from a rollout through its
    PPO epochs, so the probability ratio compares the same inputs."""

    def __init__(self, dim, clip=10.0, eps=1e-8):
        super().__init__()
        self.clip, self.eps = clip, eps
        self.register_buffer("mean", torch.zeros(dim, dtype=torch.float64))
        self.register_buffer("var", torch.ones(dim, dtype=torch.float64))
        self.register_buffer("count", torch.tensor(1e-4, dtype=torch.float64))

    def forward(self, x):
        z = (x.double() - self.mean) / torch.sqrt(self.var + self.eps)
        return z.clamp(-self.clip, self.clip).to(x.dtype)

    @torch.no_grad()
    def update(self, x):
        """Fold the rows of ``x`` (``(n, dim)``) into the statistics."""
        x = x.double().reshape(-1, self.mean.numel())
        if len(x) == 0:
            return
        m, v, k = x.mean(0), x.var(0, unbiased=False), float(len(x))
        d, tot = m - self.mean, self.count + k
        self.mean += d * k / tot
        self.var.copy_((self.var * self.count + v * k + d * d * self.count * k / tot) / tot)
        self.count.fill_(float(tot))


def explained_variance(pred, target):
    """1 - Var(target - pred) / Var(target): 1 is a perfect critic, 0 one no
    better than a constant (NaN when the targets do not vary)."""
    pred, target = np.asarray(pred, np.float64).ravel(), np.asarray(target, np.float64).ravel()
    var = target.var()
    return float("nan") if var == 0 else float(1.0 - (target - pred).var() / var)


def minibatch_rng(seed, update):
    """The generator of one update's minibatch order: its own stream of the
    run's seed, so two training seeds never share an order."""
    return np.random.default_rng([seed, update, 0x6D62])


def time_feature(t, horizon):
    """The critic's time input, ``t / horizon`` in [0, 1): with a fixed
    horizon the return still to come depends on the step."""
    return float(t) / float(horizon)


#: The cap on the decoupled objective's importance weights (V-trace's rho
#: bar is 1; a little above keeps more of the signal at a one-update lag).
WEIGHT_CAP = 2.0


def behind(a, update):
    """Whether update ``update``'s batch came from the policy of one update
    before (``a.overlap``: :class:`Rollouts`; update 0's never does)."""
    return bool(getattr(a, "overlap", False)) and update > 0


def learner_values(agent, x, tf, chunk=8192):
    """The critic's values of a batch's rows ``x`` (time inputs ``tf``) by
    ``agent.value`` as the learner is now, on the CPU; no gradient.  Under
    overlap (:func:`behind`) the rollout's values came from the behaviour
    policy's critic, one update old: GAE on them scored every advantage
    against a stale baseline, which cost Aircraft IPPO about 6 of 60
    (docs/measurements/dev2-2026-12-07/tuning-7).  So the trainers compute
    the advantages on these, as a synchronous update's come from the critic
    as it begins."""
    dev = next(agent.parameters()).device
    with torch.no_grad():
        return torch.cat([agent.value(x[s:s + chunk].to(dev), tf[s:s + chunk].to(dev)).cpu()
                          for s in range(0, len(x), chunk)])


def proximal_logp(forward, n, dev, chunk=8192):
    """Log-probabilities of a batch's ``n`` samples' actions under the agent
    as it is now (``forward``, :func:`ppo_epochs`'s; no gradient, no random
    draw)."""
    with torch.no_grad():
        return torch.cat([forward(torch.arange(s, min(s + chunk, n), device=dev))[0] for s in range(0, n, chunk)])


def ppo_epochs(agent, opt, a, update, b_obs, b_t, b_act, b_logp, b_adv, b_ret, forward=None):
    """PPO's passes over one update's flat batch (a row a sample; ``b_t`` the
    critic's time input): ``a.epochs`` passes of ``a.minibatches``
    minibatches in the order of :func:`minibatch_rng`, CleanRL's loss,
    gradient norm clipped to 0.5.  The batch moves to the agent's device.
    Returns the last minibatch's stats and every minibatch's clip fraction.
    ``forward(j)``, for a trainer whose sample is not one row of
    ``agent.act`` (MAPPO's (step, copy) with a centralised critic), gives
    the log-probabilities, entropies and values of the samples ``j``
    (default: ``agent.act`` on the rows ``j``).

    Under ``a.overlap`` the batch of update k >= 1 comes from policy k - 1
    (:class:`Rollouts`), so the ratio is clipped against the policy as this
    update begins, the proximal policy, and each sample's policy term is
    weighted by proximal / behaviour probability, capped at
    :data:`WEIGHT_CAP`: decoupled PPO (Hilton et al. 2022, "Batch
    size-invariance for policy optimization").  Clipped against the stale
    behaviour policy, the ratio starts away from 1 and the clip cut the
    update short (the baselines' overlap rows, before).  The advantages
    come in computed on the learner's values (:func:`learner_values`)."""
    dev = next(agent.parameters()).device
    b_obs, b_act, b_logp, b_adv, b_ret, b_t = (x.to(dev) for x in (b_obs, b_act, b_logp, b_adv, b_ret, b_t))
    if forward is None:
        def forward(j):
            return agent.act(b_obs[j], b_t[j], b_act[j])[1:]
    weight = None
    if behind(a, update):
        prox = proximal_logp(forward, b_obs.shape[0], dev)
        weight = (prox - b_logp).exp().clamp(max=WEIGHT_CAP)
        b_logp = prox
    idx = np.arange(b_obs.shape[0])
    mb = max(1, len(idx) // a.minibatches)
    clipfracs = []
    order = minibatch_rng(a.seed, update)
    for _ in range(a.epochs):
        order.shuffle(idx)
        for s in range(0, len(idx), mb):
            j = torch.from_numpy(idx[s:s + mb]).to(dev)
            logp, ent, val = forward(j)
            loss, stats = ppo_loss(logp, b_logp[j], b_adv[j], val, b_ret[j], ent, a.clip, a.ent_coef,
                                   None if weight is None else weight[j])
            clipfracs.append(stats["clipfrac"])
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
            opt.step()
    return stats, clipfracs


def threads(value):
    """argparse type: "auto" or an int >= 1 (SEER's ``num_threads``)."""
    if value == "auto":
        return value
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f'expected "auto" or an int >= 1, got {value!r}')
    return n


def positive_int(value):
    """argparse type: an int >= 1."""
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected an int >= 1, got {value!r}")
    return n


def positive_float(value):
    """argparse type: a finite float > 0."""
    try:
        x = float(value)
    except ValueError:
        x = float("nan")
    if not np.isfinite(x) or x <= 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {value!r}")
    return x


def add_habits(p, exp_name):
    """CleanRL's common flags on the parser ``p``."""
    p.add_argument("--exp-name", default=exp_name)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--total-timesteps", type=positive_int, default=None,
                   help="env steps (copies x steps) to train for; overrides --updates")
    p.add_argument("--track", action="store_true", help="log to TensorBoard under runs/<run name>")
    p.add_argument("--save-model", action="store_true", help="save the agent under runs/<run name>")
    p.add_argument("--capture-video", action="store_true",
                   help="save the greedy policy's first evaluation episode as a GIF under runs/<run name>")
    p.add_argument("--num-threads", default="auto", type=threads, help='SEER threads: "auto" or an int')
    p.add_argument("--torch-threads", type=positive_int, default=1)
    p.add_argument("--keep-freed-memory", action=argparse.BooleanOptionalAction, default=True,
                   help="glibc: keep the update's freed memory for its next tensors instead of "
                        "unmapping it (seer_bench.ppo.keep_freed_memory; --no-keep-freed-memory: glibc's defaults)")


def setup_learner(a):
    """What every trainer sets before it builds its agent: torch's seed
    (``a.seed``) and intra-op threads (``a.torch_threads``), and, unless
    ``--no-keep-freed-memory``, :func:`keep_freed_memory`."""
    torch.manual_seed(a.seed)
    torch.set_num_threads(a.torch_threads)
    if getattr(a, "keep_freed_memory", True):
        keep_freed_memory()


M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4         # glibc's <malloc.h>


def keep_freed_memory():
    """Make glibc's malloc keep freed memory in the process for reuse: no
    separate mapping for large blocks (``M_MMAP_MAX`` 0) and no trimming of
    the heap's top below 2 GiB (``M_TRIM_THRESHOLD``).

    torch's CPU tensors come from malloc, and glibc gives each block above
    its mmap threshold (32 MiB at most) a fresh mapping that ``free``
    unmaps, so an update whose activations outgrow it faults every op's
    output in again page by page: the Aircraft IPPO example at 128 copies
    (52 MB activations a minibatch) took 17.7 million page faults in 4
    updates and trained at 810-845 env steps/s, with this 0.47 million and
    1,410 (docs/measurements/dev2-2026-12-07/freed-memory).  What
    ``LD_PRELOAD``-ing jemalloc or tcmalloc, as PyTorch's CPU performance
    guide suggests, does, from inside the process.  Process-wide and kept:
    the process holds the most memory its learner has used (1.9 GB against
    1.05 GB there).  Returns whether it was applied (glibc only; a no-op
    elsewhere)."""
    if platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, 2**31 - 1))


def add_scaling(p):
    """The flags of reward scaling, the learning rate's decay and the
    entropy bonus (the PPO examples' defaults: scaled rewards, a decaying
    rate, no bonus; an example may change them with ``set_defaults``)."""
    p.add_argument("--no-reward-scaling", dest="reward_scaling", action="store_false",
                   help="train on raw rewards (default: divided by a running std of the return)")
    p.add_argument("--anneal-lr", action=argparse.BooleanOptionalAction, default=True,
                   help="decay the learning rate linearly to 0 over the run (--no-anneal-lr: constant)")
    p.add_argument("--ent-coef", type=float, default=0.0,
                   help="entropy bonus weight (0: the clipped objective alone; a bonus on noisy "
                        "advantages keeps the policy near uniform)")


def learning_rate(a, update):
    """Update ``update``'s learning rate: ``a.lr`` decayed linearly to 0
    over ``a.updates`` (CleanRL's ``--anneal-lr``), or ``a.lr`` throughout
    with ``--no-anneal-lr`` (BenchMARL's way)."""
    return (1.0 - update / a.updates) * a.lr if a.anneal_lr else a.lr


def run_dir(env_id, a):
    """``runs/<env>__<exp name>__<seed>__<time>``, created when something
    will be written there."""
    path = os.path.join("runs", f"{env_id}__{a.exp_name}__{a.seed}__{int(time.time())}")
    if a.track or a.save_model or a.capture_video:
        os.makedirs(path, exist_ok=True)
    return path


class Logger:
    """TensorBoard scalars under ``runs/<run name>`` with ``--track``
    (tensorboardX: ``pip install -e ".[train]"``), else nothing."""

    def __init__(self, run_dir, track, args):
        self.writer = None
        if track:
            from tensorboardX import SummaryWriter
            self.writer = SummaryWriter(run_dir)
            self.writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(
                f"|{k}|{v}|" for k, v in sorted(vars(args).items())))

    def scalar(self, tag, value, step):
        if self.writer is not None:
            self.writer.add_scalar(tag, value, step)

    def scalars(self, values, step):
        """``{tag: value}`` at ``step``."""
        for tag, value in values.items():
            self.scalar(tag, value, step)

    def close(self):
        if self.writer is not None:
            self.writer.close()



def report_update(log, on_update, opt, stats, clipfracs, update, env_steps, t0, ep_ret, agent=None, **extra):
    """One update's figures: to the logger (TensorBoard, W&B) and to
    ``on_update`` (benchmarks/baselines.py) when given; returns whether the
    caller prints its own progress line (no ``on_update``).  ``stats`` are
    the last minibatch's (:func:`ppo_loss`); ``extra`` carries the update's
    own figures (``explained_variance``, ``env_s``, ...).  ``agent``, the
    live policy after this update, reaches ``on_update`` as the row's
    ``"agent"`` so a caller can evaluate it (the time to a target on
    held-out evaluation returns); copy it to keep it."""
    wall = time.perf_counter() - t0
    if log is not None:
        log.scalars({"charts/episodic_return": ep_ret, "charts/learning_rate": opt.param_groups[0]["lr"],
                     "charts/SPS": env_steps / wall, **{f"losses/{k}": v for k, v in stats.items()},
                     "losses/clipfrac": float(np.mean(clipfracs)),
                     **{f"losses/{k}": v for k, v in extra.items() if k == "explained_variance"}}, env_steps)
    if on_update is None:
        return True
    on_update({"update": update + 1, "env_steps": env_steps, "wall_s": wall, **extra,
               "entropy": stats["entropy"], "approx_kl": stats["approx_kl"],
               "clipfrac": float(np.mean(clipfracs)), "episode_return": ep_ret,
               **({} if agent is None else {"agent": agent})})
    return False

class Clock:
    """Seconds per activity of a training run (``env``, ``policy``,
    ``rollout``, ``update``, ...), summed over the run; ``with
    clock("env"):`` times a block.  The rollout thread and the learner
    write different names, so one clock serves both."""

    def __init__(self):
        self.s = collections.defaultdict(float)

    @contextlib.contextmanager
    def __call__(self, name):
        t = time.perf_counter()
        try:
            yield
        finally:
            self.s[name] += time.perf_counter() - t

    def figures(self, wall, rollouts=None):
        """The run's seconds so far as ``{name}_s`` floats, with ``glue_s``:
        the rollouts' time outside the env and the policy plus the learner's
        time outside the update, the rollouts it collected itself and its
        waits for the rollout thread (:class:`Rollouts`).  Without overlap
        env + policy + update + glue is the wall time; with it, the rollout
        thread's env and policy seconds overlap the update's, so the sum
        exceeds it."""
        s = self.s
        main = rollouts.main_s if rollouts is not None else s["rollout"]
        wait = rollouts.wait_s if rollouts is not None else 0.0
        glue = (s["rollout"] - s["env"] - s["policy"]) + max(0.0, wall - s["update"] - main - wait)
        return {"env_s": s["env"], "policy_s": s["policy"], "update_s": s["update"],
                "rollout_s": s["rollout"], "wait_s": wait, "glue_s": glue}


class _Stopped:
    """A stop flag that is never set (the rollouts of a plain call)."""

    @staticmethod
    def is_set():
        return False


NEVER = _Stopped()


class Rollouts:
    """A PPO run's rollouts in order: ``for update, batch in rollouts`` gives
    update k its batch.  ``collect(behaviour, k, stop)`` collects rollout k
    with the policy ``behaviour`` and returns the batch; it ends early,
    leaving the env between calls (no group in flight), once ``stop`` is
    set.

    Without ``overlap`` rollout k is collected with the learner itself just
    before update k.  With it, actor and learner overlap as in APPO /
    IMPALA / Sample Factory's double buffering: rollout 0 is collected the
    same way (so it is the same bit for bit), and when update k begins a
    thread collects rollout k + 1 with a frozen deep copy of the learner as
    it is then (policy k, its observation statistics included) while the
    update runs; the env's engine and torch's kernels release the GIL.  So
    the batch of update k >= 1 comes from the policy of one update before:
    a one-update lag, which the update corrects: the advantages are
    computed on the learner's values (:func:`learner_values`), and
    :func:`ppo_epochs` uses the decoupled objective (clipped against the
    learner as the update begins, weighted by proximal / behaviour
    probability).  The torch draws of the rollouts happen
    in rollout order, and the update draws none, so a run stays
    reproducible from its seed.

    With overlap the update computes beside the env, so inside the ``with``
    block ``reserve`` cores are kept for it
    (:func:`seer_runtime.reserve_cores`, :func:`learner_cores`): an env at
    ``num_threads="auto"`` then takes what is left instead of every core.
    Without overlap the two alternate and nothing is reserved.

    Use it as a context manager: leaving the ``with`` block (at the end, or
    by an exception such as a KeyboardInterrupt in the update) sets the stop
    flag and joins the thread, so no rollout steps the env afterwards and
    the env is left between calls, ready for ``reset()``; the reservation
    is undone."""

    def __init__(self, collect, agent, updates, overlap=False, clock=None, reserve=0):
        self.collect, self.agent, self.updates, self.overlap = collect, agent, updates, overlap
        self.reserve = reserve if overlap else 0
        self._reserved_before = None
        self.clock = clock if clock is not None else Clock()
        self.stop = threading.Event()
        self.main_s = 0.0            # rollouts collected by the learner's thread
        self.wait_s = 0.0            # the learner waiting for the rollout thread
        self._thread = None
        self._out = None

    def _collect(self, behaviour, k):
        with self.clock("rollout"):
            return self.collect(behaviour, k, self.stop)

    def _run(self, behaviour, k):
        try:
            self._out = (True, self._collect(behaviour, k))
        except BaseException as e:   # handed to the learner by _join
            self._out = (False, e)

    def _join(self):
        t = time.perf_counter()
        self._thread.join()
        self.wait_s += time.perf_counter() - t
        self._thread = None
        ok, out = self._out
        self._out = None
        if not ok:
            raise out
        return out

    def _main(self, k):
        t = time.perf_counter()
        try:
            return self._collect(self.agent, k)
        finally:
            self.main_s += time.perf_counter() - t

    def __iter__(self):
        if self.updates < 1:
            return
        batch = self._main(0)
        for k in range(self.updates):
            last = k + 1 == self.updates
            if self.overlap and not last:
                behaviour = copy.deepcopy(self.agent)      # policy k, frozen
                self._thread = threading.Thread(target=self._run, args=(behaviour, k + 1),
                                                name=f"{ROLLOUT_THREAD} {k + 1}", daemon=True)
                self._thread.learner = threading.current_thread()   # whose rollout (wait_for_rollouts)
                self._thread.start()
            yield k, batch
            if not last:
                batch = self._join() if self.overlap else self._main(k + 1)

    def __enter__(self):
        if self.reserve:
            self._reserved_before = seer_runtime.reserve_cores(self.reserve)
        return self

    def __exit__(self, *exc):
        try:
            self.close()
        finally:
            if self._reserved_before is not None:
                seer_runtime.reserve_cores(self._reserved_before)
                self._reserved_before = None
        return False

    def close(self):
        """Stop and join the rollout thread (its batch is dropped); a second
        Ctrl-C while it finishes its step is held until it has."""
        self.stop.set()
        interrupted = None
        while self._thread is not None and self._thread.is_alive():
            try:
                self._thread.join()
            except KeyboardInterrupt as e:
                interrupted = e
        self._thread = None
        self._out = None
        if interrupted is not None:
            raise interrupted


#: The name of a :class:`Rollouts` thread (then its rollout's number).
ROLLOUT_THREAD = "rollout"


def wait_for_rollouts():
    """Join the overlapped rollout in flight of the learner calling it (the
    :class:`Rollouts` iterated on this thread; another learner's, on
    another thread, runs on).  Called in ``on_update`` before work whose
    time the caller takes out of the run's wall clock (the evaluations of
    ``training_speed.py --to-target``), it keeps the rollout from going on
    for free during that work; the learner waits for the rollout at its
    next batch anyway, so the run's own timing is unchanged."""
    me = threading.current_thread()
    for t in threading.enumerate():
        if getattr(t, "learner", None) is me:
            t.join()


def learner_cores(a):
    """The cores a learner running beside the env needs: torch's intra-op
    threads on the CPU, one (the Python thread driving the kernels) on a
    GPU."""
    return a.torch_threads if a.device == "cpu" else 1


def add_device(p):
    """The ``--device`` flag: where the agent lives and learns (the rollout
    moves each step's observations there and the actions back)."""
    p.add_argument("--device", default="cpu", type=device,
                   help="the learner's torch device: cpu, cuda or cuda:N")


def device(value):
    """argparse type: "cpu", "cuda" or "cuda:N"."""
    if value in ("cpu", "cuda") or (value.startswith("cuda:") and value[5:].isdigit()):
        return value
    raise argparse.ArgumentTypeError(f"expected cpu, cuda or cuda:N, got {value!r}")


def check_device(p, a):
    """``p.error`` (exit 2) when ``a.device`` names CUDA and torch sees none."""
    if a.device.startswith("cuda") and not torch.cuda.is_available():
        p.error(f"argument --device: {a.device}, but torch sees no CUDA device")


def add_overlap(p):
    """The ``--overlap`` flag (:class:`Rollouts`)."""
    p.add_argument("--overlap", action="store_true",
                   help="collect rollout k+1 with a frozen copy of policy k while update k runs "
                        "(one-update lag, corrected by the update: advantages on the learner's critic, decoupled PPO)")


def save_gif(frames, path):
    """``rgb_array`` frames as an animated GIF (4 frames a second)."""
    from PIL import Image
    images = [Image.fromarray(f) for f in frames]
    images[0].save(path, save_all=True, append_images=images[1:], duration=250, loop=0)
    return len(images)
