# SPDX-License-Identifier: BSD-3-Clause
"""Gymnasium's vector wrappers that need optional packages, on the
agent-level env: ``RecordVideo`` (moviepy, the ``video`` extra) writes a
video of copy 0, or of every row tiled; ``NumpyToTorch`` and
``ArrayConversion`` (torch, and array-api-compat for Gymnasium >= 1.2: the
``train`` extra) hand out tensors equal to the plain env's arrays.  Each
test skips when its package is missing; ``.ci/run`` installs them (README,
"Optional, for RLlib") and allows no skip here.  The wrappers without
optional packages: tests/envs/test_gymnasium_wrappers.py."""

import os

import gymnasium.wrappers.vector as W
import numpy as np
import pytest

from seer_envs.views.agent_vector import agent_vector_env

PCS = dict(grid_width=2, grid_height=2, max_cycles=4)


def _agent(**kw):
    return agent_vector_env("pcs_v0", 2, num_threads=1, **PCS, **kw)


def _actions(env, steps, seed=0):
    env.action_space.seed(seed)
    return [env.action_space.sample() for _ in range(steps)]


@pytest.mark.heavy
@pytest.mark.parametrize("first_only", [True, False], ids=["copy0", "tiled"])
def test_record_video_writes_a_file(tmp_path, first_only):
    pytest.importorskip("moviepy", reason="moviepy is not installed (pip install moviepy: the video extra)")
    from moviepy.video.io.VideoFileClip import VideoFileClip
    env = _agent(render_mode="rgb_array")
    folder = tmp_path / "videos"
    w = W.RecordVideo(env, str(folder), record_first_only=first_only, episode_trigger=lambda e: e == 0)
    w.reset(seed=0)
    h, wd, _ = env.vec.render()[0].shape
    for a in _actions(env, PCS["max_cycles"] + 1):
        w.step(a)
    w.close()
    files = sorted(os.listdir(folder))
    assert files == ["rl-video-episode-0.mp4"], files
    clip = VideoFileClip(str(folder / files[0]))
    try:
        width, height = clip.size
        # the reset's frame and the episode's 4 steps, at the scenario's frame rate
        assert clip.fps == env.metadata["render_fps"]
        assert clip.duration == pytest.approx((PCS["max_cycles"] + 1) / clip.fps, abs=1.5 / clip.fps)
    finally:
        clip.close()
    tiles = 1 if first_only else env.num_envs                 # every row: its copy's frame
    assert width * height == tiles * wd * h, (clip.size, (wd, h), tiles)


@pytest.mark.parametrize("name", [n for n in ("NumpyToTorch", "ArrayConversion") if n in W.__all__])
def test_numpy_to_torch(name):
    torch = pytest.importorskip("torch", reason="torch is not installed (the train extra)")
    try:
        cls = getattr(W, name)
    except ImportError as e:
        pytest.skip(f"{name} needs {e.name} (gymnasium[torch]; the train extra lists array-api-compat)")
    env = cls(_agent()) if name == "NumpyToTorch" else cls(_agent(), env_xp=np, target_xp=torch)
    plain = _agent()
    obs, _ = env.reset(seed=0)
    pobs, _ = plain.reset(seed=0)
    assert isinstance(obs, torch.Tensor)
    np.testing.assert_array_equal(obs.numpy(), pobs)
    for a in _actions(plain, PCS["max_cycles"] + 2):
        out, pout = env.step(torch.as_tensor(a)), plain.step(a)
        for x, y in zip(out[:4], pout[:4]):
            assert isinstance(x, torch.Tensor)
            np.testing.assert_array_equal(x.numpy(), y)
        np.testing.assert_array_equal(np.asarray(out[4]["mask"]), pout[4]["mask"])
    env.close()
    plain.close()
