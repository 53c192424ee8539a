"""scratch patches for exp.py (tuning-7): PATCHES[name] is exec'd with mod (the example module) and torch."""
import importlib.util
_spec = importlib.util.spec_from_file_location("patches6", __import__("os").path.join(__import__("os").path.dirname(__file__), "..", "tuning-6", "patches.py"))
_m = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(_m)
PATCHES = dict(_m.PATCHES)
# under --overlap, the critic's values recomputed by the learner as the update begins (GAE on fresh values)
PATCHES["freshval"] = """
import torch
_upd = mod._update
def _update(a, agent, opt, scaler, batch, update, obs_dim):
    if a.overlap and update > 0:
        obs_b, act_b, logp_b, rew_b, val_b, alive_b, done_b = batch
        T_used, N = rew_b.shape
        tf = (torch.arange(T_used).float() / a.episode).repeat_interleave(N)
        with torch.no_grad():
            v = agent.act(obs_b.reshape(-1, obs_dim), tf, act_b.reshape(-1, 2))[3].reshape(T_used, N)
        batch = (obs_b, act_b, logp_b, rew_b, v, alive_b, done_b)
    return _upd(a, agent, opt, scaler, batch, update, obs_dim)
mod._update = _update
"""
# the same for PCS IPPO
PATCHES["freshval_pcs"] = """
import torch
_upd = mod._update
def _update(a, agent, opt, scaler, t_in, batch, update, T, N):
    if a.overlap and update > 0:
        obs_buf, act_buf, logp_buf, rew_buf, val_buf, rest = batch
        with torch.no_grad():
            v = agent.value(obs_buf.reshape(-1, 11), t_in.reshape(-1)).reshape(T, N)
        batch = (obs_buf, act_buf, logp_buf, rew_buf, v, rest)
    return _upd(a, agent, opt, scaler, t_in, batch, update, T, N)
mod._update = _update
"""
