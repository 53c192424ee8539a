# SPDX-License-Identifier: BSD-3-Clause
# ruff: noqa: E402
"""CleanRL-style PPO with parameter sharing (IPPO) on the PCS env, single file.

    pip install torch==2.13.0 && pip install -e ".[train]"
    python examples/cleanrl_ippo_pcs.py [--updates 150 | --total-timesteps N] [--num-envs 16] [--async] [--overlap]
        [--track] [--save-model] [--capture-video]

Every cell is an agent and all share one actor and one critic (MLPs, 2 x 64);
the critic also reads the step's fraction of the episode (the horizon is
fixed, so the return still to come depends on it).  Rewards are divided by
a running standard deviation of the return (``--no-reward-scaling`` turns
it off) and there is no entropy bonus by default (``--ent-coef``): with
raw rewards in the tens the critic explains little and a bonus swamps the
advantages, which kept the policy near uniform.
Uses SEER's vector env: all ``--num-envs`` copies of the grid live in one
engine (``seer_envs.vector_env``), observations come in as one
(copies, cells, 11) array, actions go out as one int array, no per-agent
dicts and no Python loop over copies.  Copy i of update u is seeded exactly
as a single env ``reset(seed=seed * 100000 + u * num_envs + i)`` would be.
(SuperSuit's ``concat_vec_envs_v1`` over single envs also works: docs/training.md.)  The task is
``pcs_hotspot_v1`` at its defaults (docs/pcs.md): hot spots of call load move
over an 8 x 8 torus, the load swings over the day, phones move every 10
minutes in rush hours (half of each day) and every 10 hours otherwise, and
every cell is paid the team's reward (a dropped handoff costs 5 blocked
calls), so how many channels to hold back follows the hour and the cell.  ``benchmarks/baselines.py`` trains
this example's ``train`` on several seeds and reports it with confidence
intervals.

With ``--async`` the rollout overlaps the env and the policy: the copies
are stepped in two halves (``batch_size = num_envs // 2``), the policy
sampling one half while the engine steps the other (``send`` / ``recv``,
docs/training.md).

With ``--overlap`` the actor and the learner overlap (``seer_bench.ppo.Rollouts``,
the double buffering of APPO / IMPALA / Sample Factory): while update k
runs, a thread collects rollout k + 1 with a frozen copy of policy k, so
every batch after the first comes from the policy one update behind the
learner (a one-update lag); the update computes the advantages on its own
critic's values and clips the ratio against itself as it begins, each
sample weighted by its probability under the learner over the behaviour
policy's (decoupled PPO, ``seer_bench.ppo.ppo_epochs``).  The first
rollout is the same bit for bit as without it;
``benchmarks/training_speed.py`` measures what it gains.  It combines with
``--async``.

CleanRL's habits: ``--track`` logs the losses, the entropy, the approximate KL, the
clip fraction, the critic's explained variance, the learning rate, SPS and the episodic return to TensorBoard
(``runs/<run name>``; ``tensorboard --logdir runs``); ``--total-timesteps``
sets the env steps (copies x steps) instead of ``--updates``;
``--save-model`` writes the agent's weights to ``runs/<run name>/``;
``--capture-video`` writes the greedy policy's first evaluation episode as
an animated GIF of ``rgb_array`` frames there.

At the end it evaluates the learned policy (sampled and greedy), a uniformly random
policy, fixed guards of 0 and 3 and the rush rule
(``seer_envs.pcs.heuristic.rush_guard``) on held-out seeds and prints
the comparison.
"""

from seer_bench.needs import need

need("torch")     # before the imports that need them: one line, not a traceback

import argparse
import os
import time

import numpy as np
import torch
import torch.nn as nn
from seer_bench.ppo import (Clock, Logger, NEVER, ReturnScaler, Rollouts, Tanh, add_device, add_habits, add_overlap,
                      add_scaling, behind, check_device, explained_variance, layer, positive_float, positive_int,
                      learner_cores, learner_values, learning_rate, ppo_epochs, report_update, run_dir, save_gif, setup_learner,
                      time_feature)
from torch.distributions import Categorical

import seer_envs
from seer_envs.pcs.heuristic import rush_guard

#: The task trained on (docs/pcs.md, "pcs_hotspot_v1") and parameters over its defaults.
ENV_ID = "pcs_hotspot_v1"
ENV_KW = {}


def episode_length(env_kw=None):
    """Steps of one episode of the task (its ``max_cycles``)."""
    return seer_envs.get(ENV_ID).build_config(dict(ENV_KW if env_kw is None else env_kw)).max_cycles


class Agent(nn.Module):
    """Shared actor on a cell's observation; shared critic on the
    observation and the time input (one more column)."""

    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.critic = nn.Sequential(layer(obs_dim + 1, 64), Tanh(), layer(64, 64), Tanh(),
                                    layer(64, 1, 1.0))
        self.actor = nn.Sequential(layer(obs_dim, 64), Tanh(), layer(64, 64), Tanh(),
                                   layer(64, n_actions, 0.01))

    def value(self, x, tf):
        """``tf``: the time input, one per row of ``x``."""
        return self.critic(torch.cat([x, tf.unsqueeze(-1)], -1)).squeeze(-1)

    def act(self, x, tf, action=None):
        dist = Categorical(logits=self.actor(x))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.value(x, tf)


def evaluate(policy, seeds, num_threads):
    """Mean episode return per cell of ``policy(obs, rng) -> actions``."""
    rets = []
    for s in seeds:
        env = seer_envs.make(ENV_ID, num_threads=num_threads, **ENV_KW)
        obs = env.reset_arrays(seed=s)
        rng = np.random.default_rng(s)
        ret = 0.0
        while env.agents:
            obs, rew, _, _ = env.step_arrays(policy(obs, rng))
            ret += float(rew.mean(dtype=np.float64))
        rets.append(ret)
    return float(np.mean(rets)), float(np.std(rets))


def _buffers(T, N):
    """(obs, actions, logp, rewards, values) buffers, each (T, N, ...)."""
    return (torch.zeros(T, N, 11), torch.zeros(T, N, dtype=torch.long), torch.zeros(T, N),
            torch.zeros(T, N), torch.zeros(T, N))


def _time_input(t, T, n):
    return torch.full((n,), time_feature(t, T))


def rollout(venv, agent, seed, T, stop=NEVER, clock=None):
    """T steps of every copy (copy i reset with seed + i), the policy
    sampling on the whole batch.  Returns (obs, actions, logp, rewards,
    values), each (T, copies * cells), and the seconds spent in the env;
    the rewards are the env's (the trainer scales them).  Once ``stop`` is
    set it returns after the step in progress (``--overlap``'s Ctrl-C);
    ``clock`` (``seer_bench.ppo.Clock``) sums the env's and the policy's
    seconds."""
    clock = clock if clock is not None else Clock()
    E, n_cells = venv.num_envs, venv.num_agents
    N = E * n_cells
    obs_buf, act_buf, logp_buf, rew_buf, val_buf = _buffers(T, N)
    dev = next(agent.parameters()).device
    te = time.perf_counter()
    obs = venv.reset(seed=seed)[0].reshape(N, 11)
    env_time = time.perf_counter() - te
    clock.s["env"] += env_time
    for t in range(T):
        if stop.is_set():
            break
        x = torch.from_numpy(obs)
        with clock("policy"), torch.no_grad():
            act, logp, _, val = (y.cpu() for y in agent.act(x.to(dev), _time_input(t, T, N).to(dev)))
        obs_buf[t], act_buf[t], logp_buf[t], val_buf[t] = x, act, logp, val
        te = time.perf_counter()
        # The last step (t = T - 1) auto-resets every copy; the next
        # update resets with fresh seeds anyway.
        obs, rew, _, _, _ = venv.step(act.numpy().reshape(E, n_cells))
        dt = time.perf_counter() - te
        env_time += dt
        clock.s["env"] += dt
        obs = obs.reshape(N, 11)
        rew_buf[t] = torch.from_numpy(rew.reshape(N))
    return obs_buf, act_buf, logp_buf, rew_buf, val_buf, env_time


def capture_video(policy, path, num_threads, seed):
    """The greedy policy's episode as an animated GIF of rgb_array frames."""
    env = seer_envs.make(ENV_ID, num_threads=num_threads, render_mode="rgb_array", **ENV_KW)
    obs = env.reset_arrays(seed=seed)
    rng = np.random.default_rng(seed)
    frames = [env.render()]
    while env.agents:
        obs = env.step_arrays(policy(obs, rng))[0]
        frames.append(env.render())
    return save_gif(frames, path)


def rollout_async(venv, agent, seed, T, stop=NEVER, clock=None):
    """``rollout`` with the env and the policy overlapped: ``recv`` one half
    of the copies, sample its actions, ``send`` them while the engine steps
    the other half.  The same buffers; the env time is the time spent
    waiting in ``recv``.  Once ``stop`` is set it sends no more and
    receives what is in flight, so the env is left between calls."""
    clock = clock if clock is not None else Clock()
    E, n_cells = venv.num_envs, venv.num_agents
    N = E * n_cells
    obs_buf, act_buf, logp_buf, rew_buf, val_buf = _buffers(T, N)
    steps = np.zeros(E, int)
    env_time = 0.0
    dev = next(agent.parameters()).device
    venv.async_reset(seed=seed)
    while venv.in_flight:
        te = time.perf_counter()
        obs, rew, _, _, infos = venv.recv()
        dt = time.perf_counter() - te
        env_time += dt
        clock.s["env"] += dt
        ids = infos["env_id"]                     # a contiguous half of the copies
        rows = slice(int(ids[0]) * n_cells, (int(ids[-1]) + 1) * n_cells)
        t = int(steps[ids[0]])
        if t > 0:
            rew_buf[t - 1, rows] = torch.from_numpy(rew.reshape(-1))
        if t < T and not stop.is_set():
            x = torch.from_numpy(obs.reshape(-1, 11))
            with clock("policy"), torch.no_grad():
                act, logp, _, val = (y.cpu() for y in agent.act(x.to(dev), _time_input(t, T, len(x)).to(dev)))
            obs_buf[t, rows], act_buf[t, rows], logp_buf[t, rows], val_buf[t, rows] = x, act, logp, val
            venv.send(act.numpy().reshape(len(ids), n_cells), ids)
            steps[ids] += 1
    return obs_buf, act_buf, logp_buf, rew_buf, val_buf, env_time


def save_and_evaluate(agent, a, out, threads, n_actions, n_cells):
    """After training: the model saved (``--save-model``), then the held-out
    evaluation of the greedy actor against random and fixed guards, and its
    episode as a GIF (``--capture-video``)."""
    if a.save_model:
        path = os.path.join(out, f"{a.exp_name}.cleanrl_model")
        torch.save(agent.state_dict(), path)
        print(f"model saved to {path}")
    seeds = list(range(10_000, 10_000 + a.eval_seeds))          # never used in training

    def learned(obs, rng):
        with torch.no_grad():
            return agent.actor(torch.from_numpy(obs)).argmax(-1).numpy()

    def sampled(obs, rng):
        with torch.no_grad():
            p = torch.softmax(agent.actor(torch.from_numpy(obs)), -1).double().numpy()
        return (rng.random((len(p), 1)) > np.cumsum(p, -1)).sum(-1).clip(0, p.shape[-1] - 1)
    results = {
        "learned (greedy)": evaluate(learned, seeds, threads),
        "learned (sampled)": evaluate(sampled, seeds, threads),
        "random": evaluate(lambda o, rng: rng.integers(0, n_actions, n_cells), seeds, threads),
        "fixed guard 0": evaluate(lambda o, rng: np.zeros(n_cells, np.int64), seeds, threads),
        "fixed guard 3": evaluate(lambda o, rng: np.full(n_cells, 3, np.int64), seeds, threads),
        "rush rule": evaluate(lambda o, rng: rush_guard(n_actions, o), seeds, threads),
    }
    if a.capture_video:
        path = os.path.join(out, "eval_episode.gif")
        frames = capture_video(learned, path, threads, seeds[0])
        print(f"video of the greedy policy's episode (seed {seeds[0]}, {frames} frames) saved to {path}")
    print(f"\nheld-out evaluation, {len(seeds)} seeds, episode return per cell (higher is better):")
    for name, (m, s) in results.items():
        print(f"  {name:<18} {m:9.2f} +- {s:.2f}")
    ours = results["learned (greedy)"][0]
    beat = ours > results["random"][0] and ours > results["fixed guard 0"][0]
    print(f"learned policy beats random and guard-0: {'YES' if beat else 'NO'}")


def make_parser():
    """The example's command line (CleanRL's habits and PPO's settings)."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_habits(p, "cleanrl_ippo_pcs")
    p.add_argument("--updates", type=positive_int, default=150)
    p.add_argument("--num-envs", type=positive_int, default=16)
    p.add_argument("--lr", type=positive_float, default=2.5e-3)
    p.add_argument("--epochs", type=positive_int, default=4)
    # 16 minibatches: 64 gradient steps an update instead of 16, at about the same cost
    # (docs/measurements/dev2-2026-12-06, third run: MAPPO's weak seed -48.2 -> -43.6)
    p.add_argument("--minibatches", type=positive_int, default=16)
    # A guard's effect on drops plays out within hours; over the whole day the
    # team reward's noise swamps it (gamma 0.99 drifted to low guards); 0.95
    # (a horizon of about 20 half-hour steps, the rush's length) beat 0.9 on
    # 3 of 3 training seeds (greedy, 64 held-out seeds: -42.6 against -44.6).
    p.add_argument("--gamma", type=float, default=0.95)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--clip", type=float, default=0.2)
    add_scaling(p)
    p.add_argument("--async", dest="async_env", action="store_true",
                   help="overlap the env and the policy: two halves of the copies in ping-pong")
    add_overlap(p)
    add_device(p)
    p.add_argument("--eval-seeds", type=positive_int, default=8)
    p.add_argument("--team-reward-share", type=float, default=None,
                   help="train on (1 - share) * own cell reward + share * team mean (default: the "
                        "task's, 1; evaluation reports the mean per cell, which the share does not change)")
    return p


def train(a, venv=None, on_update=None, log=None):
    """PPO with parameter sharing over ``a.updates`` updates (``a`` from
    :func:`make_parser`); returns the agent.  ``venv`` is any vector env
    with SEER's batched interface (``num_envs``, ``num_agents``,
    ``single_action_space``, ``reset(seed=)``, ``step(actions (copies,
    cells))``); default: SEER's vector env of the task.  ``on_update(row)``
    gets after each update a dict: ``update``, ``env_steps``, ``wall_s``,
    the seconds so far in the env, the policy's forward, the update and
    the glue (``env_s``, ``policy_s``, ``update_s``, ``glue_s``,
    ``seer_bench.ppo.Clock.figures``) and the training ``episode_return`` per
    cell.  With ``a.overlap`` rollout k >= 1 comes from policy k - 1
    (``seer_bench.ppo.Rollouts``)."""
    T = episode_length()
    if a.total_timesteps is not None:
        a.updates = max(1, a.total_timesteps // (a.num_envs * T))
    setup_learner(a)
    if venv is None:
        share = {} if a.team_reward_share is None else {"team_reward_share": a.team_reward_share}
        venv = seer_envs.vector_env(ENV_ID, a.num_envs, num_threads=a.num_threads,
                                    batch_size=a.num_envs // 2 if a.async_env else None, **share, **ENV_KW)
    n_cells = venv.num_agents
    n_actions = venv.single_action_space.n
    agent = Agent(11, n_actions).to(a.device)
    opt = torch.optim.Adam(agent.parameters(), lr=a.lr, eps=1e-5)
    N = a.num_envs * n_cells
    scaler = ReturnScaler(N, a.gamma) if a.reward_scaling else None
    t_in = torch.arange(T).repeat_interleave(N).float().reshape(T, N) / T      # the critic's time input
    clock = Clock()
    collect_fn = rollout_async if a.async_env else rollout

    def collect(policy, k, stop):
        return collect_fn(venv, policy, a.seed * 100_000 + k * a.num_envs, T, stop, clock)
    t0 = time.perf_counter()
    with Rollouts(collect, agent, a.updates, a.overlap, clock, reserve=learner_cores(a)) as rollouts:
        for update, batch in rollouts:
            with clock("update"):
                stats, clipfracs, ev, ep_ret, act_buf = _update(a, agent, opt, scaler, t_in, batch, update, T, N)
            env_steps = (update + 1) * a.num_envs * T
            fig = clock.figures(time.perf_counter() - t0, rollouts)
            if report_update(log, on_update, opt, stats, clipfracs, update, env_steps, t0, ep_ret, **fig,
                             explained_variance=ev, agent=agent):
                print(f"update {update + 1:3d}/{a.updates}: episode return per cell {ep_ret:8.2f}  "
                      f"mean guard {act_buf.float().mean().item():.2f}  entropy {stats['entropy']:.2f}  "
                      f"EV {ev:5.2f}  ({time.perf_counter() - t0:5.1f} s, env {fig['env_s']:5.1f} s)")
    return agent.cpu()


def _update(a, agent, opt, scaler, t_in, batch, update, T, N):
    """PPO's update ``update`` on one rollout's batch; returns (the last
    minibatch's stats, clip fractions, explained variance, the training
    episode return per cell, the actions)."""
    opt.param_groups[0]["lr"] = learning_rate(a, update)
    obs_buf, act_buf, logp_buf, rew_buf, val_buf, _ = batch
    raw_rew = rew_buf
    if scaler is not None:                       # every episode starts at the rollout's reset
        scaler.reset()
        rew_buf = torch.from_numpy(np.stack([scaler(r) for r in raw_rew.numpy()]))
    if behind(a, update):                        # policy k - 1's rollout: GAE on the learner's critic
        val_buf = learner_values(agent, obs_buf.reshape(-1, 11), t_in.reshape(-1)).reshape(T, N)
    # GAE; episodes end by truncation after T steps: bootstrap with 0
    adv = torch.zeros(T, N)
    last = torch.zeros(N)
    for t in reversed(range(T)):
        nxt = val_buf[t + 1] if t + 1 < T else torch.zeros(N)
        delta = rew_buf[t] + a.gamma * nxt - val_buf[t]
        last = delta + a.gamma * a.gae_lambda * last
        adv[t] = last
    ret = adv + val_buf
    ev = explained_variance(val_buf, ret)
    b_obs, b_act, b_logp = obs_buf.reshape(-1, 11), act_buf.reshape(-1), logp_buf.reshape(-1)
    b_adv, b_ret, b_t = adv.reshape(-1), ret.reshape(-1), t_in.reshape(-1)
    stats, clipfracs = ppo_epochs(agent, opt, a, update, b_obs, b_t, b_act, b_logp, b_adv, b_ret)
    ep_ret = raw_rew.sum(0).mean().item()
    return stats, clipfracs, ev, ep_ret, act_buf


def main():
    p = make_parser()
    a = p.parse_args()
    check_device(p, a)
    if a.async_env and a.num_envs < 2:
        p.error("--async needs --num-envs >= 2 (two halves)")
    out = run_dir(ENV_ID, a)
    log = Logger(out, a.track, a)
    agent = train(a, log=log)
    log.close()
    n_actions = agent.actor[-1].out_features
    save_and_evaluate(agent, a, out, a.num_threads, n_actions, seer_envs.get(ENV_ID).build_config(ENV_KW).num_cells)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
