# SPDX-License-Identifier: BSD-3-Clause
# ruff: noqa: E402
"""CleanRL-style PPO with parameter sharing on the Aircraft env, single file.

    pip install torch==2.13.0 && pip install -e ".[train]"
    python examples/cleanrl_ppo_aircraft.py [--updates 50 | --total-timesteps N] [--num-uavs 64]
        [--num-envs 2] [--async] [--overlap] [--track] [--save-model] [--capture-video]

One Gaussian actor and one critic (MLPs, 2 x 64) shared by every UAV.  Uses
SEER's vector env: all ``--num-envs`` copies of the arena live in one engine
(``seer_envs.vector_env``), observations come in as one (copies, UAVs, 25)
array and commanded accelerations go out as one (copies, UAVs, 2) array: no
per-agent dicts and no Python loop over copies.  Copy i of update u is
seeded exactly as a single env ``reset(seed=seed * 100000 + u * num_envs +
i)`` would be, and a UAV's rows after its episode ended (its battery ran
out, or its copy ended and auto-reset) are masked out of the loss, so the
training equals a loop over single envs with those seeds
(tests/integrations/test_rl_libraries.py checks the rollouts).  SuperSuit's
``concat_vec_envs_v1`` over single envs is the other option:
docs/training.md.  With ``--async`` the rollout overlaps the env and the
policy: the engine steps one half of the copies while the policy samples
the other's actions (``send`` / ``recv``).  With ``--overlap`` rollout
k + 1 is collected by a thread with a frozen copy of policy k (its
observation statistics included) while update k runs
(``seer_bench.ppo.Rollouts``): every batch after the first comes from the
policy one update behind the learner; the update computes the advantages
on its own critic's values and clips the ratio against itself as it begins,
each sample weighted by its probability under the learner over the behaviour
policy's (decoupled PPO); the alive masks are the rollout's own, as without
overlap.  The first rollout is the same bit for bit as without it.

CleanRL's habits (``seer_bench/ppo.py``, as in the PCS examples): ``--track`` logs
the losses, approximate KL, clip fraction, learning rate, SPS and episodic
return to TensorBoard under ``runs/<run name>``; ``--total-timesteps`` sets
the env steps instead of ``--updates`` (copies x ``--episode`` steps an
update at most: an update stops early once every UAV's episode ended);
``--save-model`` writes the weights there and ``--capture-video`` the mean
action's first evaluation episode as an animated GIF of ``rgb_array``
frames.

At the end it evaluates the learned policy (its mean action), a random
policy, zero acceleration and the steer-to-target heuristic on held-out
seeds.
"""

from seer_bench.needs import need

need("torch")     # before the imports that need them: one line, not a traceback

import argparse
import os
import time

import numpy as np
import torch
import torch.nn as nn
from seer_bench.ppo import (Clock, Logger, NEVER, ReturnScaler, Rollouts, RunningNorm, Tanh, add_device, add_habits,
                      add_overlap, add_scaling, behind, check_device, explained_variance, layer, positive_float,
                      learner_cores, learner_values, learning_rate, positive_int, ppo_epochs, report_update, run_dir, save_gif,
                      setup_learner)
from torch.distributions import Normal

import seer_envs


class Agent(nn.Module):
    """Shared Gaussian actor on a UAV's observation; shared critic on the
    observation and the time input (the step over the episode's length).
    Both read the observation through one running normaliser (its scales
    differ by 100x: a target's relative position against its age)."""

    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.obs_norm = RunningNorm(obs_dim)
        self.critic = nn.Sequential(layer(obs_dim + 1, 64), Tanh(), layer(64, 64), Tanh(),
                                    layer(64, 1, 1.0))
        self.mean = nn.Sequential(layer(obs_dim, 64), Tanh(), layer(64, 64), Tanh(),
                                  layer(64, act_dim, 0.01))
        self.log_std = nn.Parameter(torch.full((act_dim,), -0.5))

    def policy_mean(self, x):
        """The actor's mean action for raw observations ``x``."""
        return self.mean(self.obs_norm(x))

    def _value(self, z, tf):
        return self.critic(torch.cat([z, tf.unsqueeze(-1)], -1)).squeeze(-1)

    def value(self, x, tf):
        """The critic's values of raw observations ``x``; ``tf``: the time input, one per row."""
        return self._value(self.obs_norm(x), tf)

    def act(self, x, tf, action=None):
        """``tf``: the time input, one per row of ``x``."""
        return self.act_normalised(self.obs_norm(x), tf, action)

    def act_normalised(self, x, tf, action=None):
        """:meth:`act` on observations already through ``obs_norm``: the
        update normalises its batch once (the statistics hold through its
        epochs), not each minibatch again at every epoch."""
        dist = Normal(self.mean(x), self.log_std.exp())
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action).sum(-1), dist.entropy().sum(-1), self._value(x, tf)


def rollout(venv, agent, seed, T, stop=NEVER, clock=None):
    """One update's batch from the vector env ``venv``: reset with ``seed``
    (copy i as a single env's ``reset(seed=seed + i)``), then up to ``T``
    steps, until every UAV's episode has ended.  Returns ``(obs, actions,
    logp, rewards, values, alive, done)``, each ``(T_used, copies x UAVs,
    ...)``: ``alive`` marks the rows where the UAV acted in the episode
    begun at the reset, ``done`` the step that ended it; rewards outside
    ``alive`` are 0.  A copy that ends auto-resets (SAME_STEP), and its new
    episode's rows stay masked until the next update resets every copy.
    Rows the reset's ``infos["mask"]`` marks out of play (padding, with
    per-copy UAV counts) are never alive.  Once ``stop`` is set it returns
    after the step in progress (``--overlap``'s Ctrl-C); ``clock``
    (``seer_bench.ppo.Clock``) sums the env's and the policy's seconds."""
    clock = clock if clock is not None else Clock()
    with clock("env"):
        obs, infos = venv.reset(seed=seed)
    E, n, obs_dim = obs.shape
    N = E * n
    obs = obs.reshape(N, obs_dim)
    obs_b, act_b = torch.zeros(T, N, obs_dim), torch.zeros(T, N, 2)
    logp_b, rew_b, val_b = torch.zeros(T, N), torch.zeros(T, N), torch.zeros(T, N)
    alive_b = torch.zeros(T, N)      # the agent acted at t
    done_b = torch.zeros(T, N)       # its episode ended after t
    alive = in_play(infos, N)
    T_used = T
    dev = next(agent.parameters()).device
    for t in range(T):
        if stop.is_set():
            T_used = t
            break
        x = torch.from_numpy(obs)
        with clock("policy"), torch.no_grad():
            act, logp, _, val = (y.cpu() for y in agent.act(x.to(dev), torch.full((N,), t / T, device=dev)))
        obs_b[t], act_b[t], logp_b[t], val_b[t] = x, act, logp, val
        alive_b[t] = torch.from_numpy(alive.astype(np.float32))
        acts = act.clamp(-1, 1).numpy()
        with clock("env"):
            obs, rew, term, trunc, _ = venv.step(acts.reshape(E, n, 2))
        obs = obs.reshape(N, obs_dim)
        rew_b[t] = torch.from_numpy(rew.reshape(N)) * alive_b[t]
        ended = (term | trunc).reshape(N)
        done_b[t] = torch.from_numpy((ended & alive).astype(np.float32))
        alive &= ~ended
        if not alive.any():
            T_used = t + 1
            break
    return tuple(b[:T_used] for b in (obs_b, act_b, logp_b, rew_b, val_b, alive_b, done_b))


def rollout_async(venv, agent, seed, T, stop=NEVER, clock=None):
    """``rollout`` with the env and the policy overlapped: ``recv`` one half
    of the copies, sample its actions, ``send`` them while the engine steps
    the other half.  A half stops when all its UAVs' episodes have ended;
    the same buffers and masks, up to the longest half.  Once ``stop`` is
    set it sends no more and receives what is in flight, so the env is
    left between calls."""
    clock = clock if clock is not None else Clock()
    E, n, obs_dim = venv.num_envs, venv.num_agents, venv.single_observation_space.shape[0]
    N = E * n
    obs_b, act_b = torch.zeros(T, N, obs_dim), torch.zeros(T, N, 2)
    logp_b, rew_b, val_b = torch.zeros(T, N), torch.zeros(T, N), torch.zeros(T, N)
    alive_b, done_b = torch.zeros(T, N), torch.zeros(T, N)
    alive = np.ones(N, bool)
    steps = np.zeros(E, int)
    T_used = 0
    dev = next(agent.parameters()).device
    venv.async_reset(seed=seed)
    while venv.in_flight:
        with clock("env"):
            obs, rew, term, trunc, infos = venv.recv()
        ids = infos["env_id"]                      # a contiguous half of the copies
        rows = slice(int(ids[0]) * n, (int(ids[-1]) + 1) * n)
        t = int(steps[ids[0]])
        if t == 0:                                 # the reset: padding rows are never alive
            alive[rows] = in_play(infos, rows.stop - rows.start)
        if t > 0:
            rew_b[t - 1, rows] = torch.from_numpy(rew.reshape(-1)) * alive_b[t - 1, rows]
            ended = (term | trunc).reshape(-1)
            done_b[t - 1, rows] = torch.from_numpy((ended & alive[rows]).astype(np.float32))
            alive[rows] &= ~ended
        if t < T and alive[rows].any() and not stop.is_set():
            x = torch.from_numpy(obs.reshape(-1, obs_dim))
            with clock("policy"), torch.no_grad():
                act, logp, _, val = (y.cpu() for y in agent.act(x.to(dev), torch.full((len(x),), t / T, device=dev)))
            obs_b[t, rows], act_b[t, rows], logp_b[t, rows], val_b[t, rows] = x, act, logp, val
            alive_b[t, rows] = torch.from_numpy(alive[rows].astype(np.float32))
            venv.send(act.clamp(-1, 1).numpy().reshape(len(ids), n, 2), ids)
            steps[ids] += 1
            T_used = max(T_used, t + 1)
    return tuple(b[:T_used] for b in (obs_b, act_b, logp_b, rew_b, val_b, alive_b, done_b))


def in_play(infos, n):
    """The reset's rows in play, flat (``infos["mask"]``; all of them when a
    vector env gives no mask)."""
    mask = infos.get("mask") if isinstance(infos, dict) else None
    return np.ones(n, bool) if mask is None else np.asarray(mask, bool).reshape(n).copy()


def heuristic(env, obs):
    """Steer to the known target, keep apart, damp the velocity (see seer_envs.aircraft.heuristic)."""
    from seer_envs.aircraft.heuristic import heuristic_command
    return heuristic_command(env, obs)


def evaluate(policy, env_kw, seeds, threads):
    rets = []
    for s in seeds:
        env = seer_envs.make("aircraft_v0", num_threads=threads, **env_kw)
        obs = env.reset_arrays(seed=s)
        rng = np.random.default_rng(s)
        ret = 0.0
        while env.agents:
            obs, rew, term, trunc = env.step_arrays(np.clip(policy(env, obs, rng), -1, 1).astype(np.float32))
            ret += float(rew.mean(dtype=np.float64))
        rets.append(ret)
    return float(np.mean(rets)), float(np.std(rets))


def capture_video(policy, env_kw, path, threads, seed):
    """The policy's episode as an animated GIF of rgb_array frames."""
    env = seer_envs.make("aircraft_v0", num_threads=threads, render_mode="rgb_array", **env_kw)
    obs = env.reset_arrays(seed=seed)
    rng = np.random.default_rng(seed)
    frames = [env.render()]
    while env.agents:
        obs = env.step_arrays(np.clip(policy(env, obs, rng), -1, 1).astype(np.float32))[0]
        frames.append(env.render())
    return save_gif(frames, path)


def make_parser():
    """The example's command line (CleanRL's habits and PPO's settings)."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_habits(p, "cleanrl_ppo_aircraft")
    p.add_argument("--updates", type=positive_int, default=50)
    p.add_argument("--num-envs", type=positive_int, default=2)
    p.add_argument("--num-uavs", type=positive_int, default=64)
    p.add_argument("--episode", type=positive_int, default=100, help="max_cycles (steps per episode)")
    p.add_argument("--lr", type=positive_float, default=2e-3)
    p.add_argument("--epochs", type=positive_int, default=4)
    p.add_argument("--minibatches", type=positive_int, default=4)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--clip", type=positive_float, default=0.2)
    add_scaling(p)
    # A constant rate: decayed to 0, the first 40 updates learned at half of
    # it and the mean action still flew UAVs into each other (held-out greedy
    # return below random's; docs/measurements/dev2-2026-12-06, third run).
    p.set_defaults(anneal_lr=False)
    p.add_argument("--eval-seeds", type=positive_int, default=4)
    p.add_argument("--async", dest="async_env", action="store_true",
                   help="overlap the env and the policy: two halves of the copies in ping-pong")
    add_overlap(p)
    add_device(p)
    return p


def train(a, on_update=None, log=None, venv=None):
    """PPO with parameter sharing over ``a.updates`` updates (``a`` from
    :func:`make_parser`); returns the agent.  ``on_update(row)`` gets after
    each update a dict: ``update``, ``env_steps``, ``wall_s``, the seconds
    so far in the env, the policy's forward, the update and the glue
    (``env_s``, ``policy_s``, ``update_s``, ``glue_s``,
    ``seer_bench.ppo.Clock.figures``) and the training ``episode_return`` per UAV.
    With ``a.overlap`` rollout k >= 1 comes from policy k - 1
    (``seer_bench.ppo.Rollouts``).  ``venv`` is any vector env with
    SEER's batched interface and same-step autoreset (``num_envs``,
    ``single_observation_space``, ``reset(seed=)``, ``step(actions
    (copies, UAVs, 2))`` returning ``(copies, UAVs, ...)`` arrays; with
    ``--async`` also ``async_reset`` / ``send`` / ``recv``); default:
    SEER's vector env of ``--num-envs`` copies."""
    if a.total_timesteps is not None:
        a.updates = max(1, a.total_timesteps // (a.num_envs * a.episode))
    threads = a.num_threads
    setup_learner(a)
    env_kw = dict(num_uavs=a.num_uavs, max_cycles=a.episode, continuous_actions=True)
    if venv is None:
        venv = seer_envs.vector_env("aircraft_v0", a.num_envs, num_threads=threads,
                                    autoreset_mode="same_step",
                                    batch_size=a.num_envs // 2 if a.async_env else None, **env_kw)
    obs_dim = venv.single_observation_space.shape[0]
    agent = Agent(obs_dim, 2).to(a.device)
    opt = torch.optim.Adam(agent.parameters(), lr=a.lr, eps=1e-5)
    scaler = ReturnScaler(venv.num_envs * venv.num_agents, a.gamma) if a.reward_scaling else None
    clock = Clock()
    collect_fn = rollout_async if a.async_env else rollout

    def collect(policy, k, stop):
        return collect_fn(venv, policy, a.seed * 100_000 + k * a.num_envs, a.episode, stop, clock)
    t0 = time.perf_counter()
    env_steps = 0
    with Rollouts(collect, agent, a.updates, a.overlap, clock, reserve=learner_cores(a)) as rollouts:
        for update, batch in rollouts:
            with clock("update"):
                stats, clipfracs, ev, ep_ret, T_used = _update(a, agent, opt, scaler, batch, update, obs_dim)
            env_steps += a.num_envs * T_used
            fig = clock.figures(time.perf_counter() - t0, rollouts)
            if report_update(log, on_update, opt, stats, clipfracs, update, env_steps, t0, ep_ret, **fig,
                             explained_variance=ev, agent=agent):
                print(f"update {update + 1:3d}/{a.updates}: episode return per UAV "
                      f"{ep_ret:8.2f}  entropy {stats['entropy']:.2f}  EV {ev:5.2f}  "
                      f"({time.perf_counter() - t0:5.1f} s)")
    return agent.cpu()


def _update(a, agent, opt, scaler, batch, update, obs_dim):
    """PPO's update ``update`` on one rollout's batch, then the observation
    statistics folded in; returns (the last minibatch's stats, clip
    fractions, explained variance, the training episode return per UAV,
    the steps the rollout used)."""
    opt.param_groups[0]["lr"] = learning_rate(a, update)
    obs_b, act_b, logp_b, rew_b, val_b, alive_b, done_b = batch
    T_used, N = rew_b.shape
    raw_rew = rew_b
    if scaler is not None:                 # every episode starts at the rollout's reset
        scaler.reset()
        rew_b = torch.from_numpy(np.stack([scaler(r, m) for r, m in zip(raw_rew.numpy(),
                                                                         alive_b.numpy() > 0)]))
        rew_b = rew_b * alive_b
    t_in = (torch.arange(T_used).float() / a.episode).repeat_interleave(N)    # the critic's time input
    if behind(a, update):                  # policy k - 1's rollout: GAE on the learner's critic
        val_b = learner_values(agent, obs_b.reshape(-1, obs_dim), t_in).reshape(T_used, N)
    adv = torch.zeros(T_used, N)
    last = torch.zeros(N)
    for t in reversed(range(T_used)):
        nxt = val_b[t + 1] if t + 1 < T_used else torch.zeros(N)
        nonterm = 1.0 - done_b[t]
        delta = rew_b[t] + a.gamma * nxt * nonterm - val_b[t]
        last = delta + a.gamma * a.gae_lambda * nonterm * last
        adv[t] = last
    ret = adv + val_b
    mask = alive_b.reshape(-1) > 0
    ev = explained_variance(val_b.reshape(-1)[mask], ret.reshape(-1)[mask])
    b_obs = obs_b.reshape(-1, obs_dim)[mask]
    b_act = act_b.reshape(-1, 2)[mask]
    b_logp, b_adv, b_ret = logp_b.reshape(-1)[mask], adv.reshape(-1)[mask], ret.reshape(-1)[mask]
    b_t = t_in[mask]
    dev = next(agent.parameters()).device
    z, z_t, z_act = agent.obs_norm(b_obs.to(dev)), b_t.to(dev), b_act.to(dev)     # normalised once

    def forward(j):
        return agent.act_normalised(z[j], z_t[j], z_act[j])[1:]
    stats, clipfracs = ppo_epochs(agent, opt, a, update, b_obs, b_t, b_act, b_logp, b_adv, b_ret, forward)
    agent.obs_norm.update(b_obs.to(dev))   # the next rollout's statistics
    live = alive_b[0] > 0                  # the UAVs in play (padding rows never are)
    ep_ret = raw_rew.sum(0)[live].mean().item()
    return stats, clipfracs, ev, ep_ret, T_used


def main():
    p = make_parser()
    a = p.parse_args()
    check_device(p, a)
    if a.async_env and a.num_envs < 2:
        p.error("--async needs --num-envs >= 2 (two halves)")
    threads = a.num_threads
    out = run_dir("aircraft_v0", a)
    log = Logger(out, a.track, a)
    agent = train(a, log=log)
    env_kw = dict(num_uavs=a.num_uavs, max_cycles=a.episode, continuous_actions=True)
    log.close()
    if a.save_model:
        path = os.path.join(out, f"{a.exp_name}.cleanrl_model")
        torch.save(agent.state_dict(), path)
        print(f"model saved to {path}")

    seeds = list(range(10_000, 10_000 + a.eval_seeds))

    def learned(env, obs, rng):
        with torch.no_grad():
            return agent.policy_mean(torch.from_numpy(obs)).numpy()
    results = {
        "learned (mean action)": evaluate(learned, env_kw, seeds, threads),
        "random": evaluate(lambda e, o, rng: rng.uniform(-1, 1, (o.shape[0], 2)), env_kw, seeds, threads),
        "zero acceleration": evaluate(lambda e, o, rng: np.zeros((o.shape[0], 2)), env_kw, seeds, threads),
        "steer + separate": evaluate(lambda e, o, rng: heuristic(e, o), env_kw, seeds, threads),
    }
    if a.capture_video:
        path = os.path.join(out, "eval_episode.gif")
        frames = capture_video(learned, env_kw, path, threads, seeds[0])
        print(f"video of the mean action's episode (seed {seeds[0]}, {frames} frames) saved to {path}")
    print(f"\nheld-out evaluation, {len(seeds)} seeds, episode return per UAV (higher is better):")
    for name, (m, s) in results.items():
        print(f"  {name:<22} {m:9.2f} +- {s:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
