"""A/B of the Aircraft IPPO update: the batch normalised once (B) against each minibatch (A), one
torch thread, a 32-copy batch of 64 UAVs x 100 steps; alternating, A/A beside."""
import sys, time, copy, torch, numpy as np
sys.path.insert(0, __import__("os").path.join(__import__("os").path.dirname(__file__), "..", "..", "..", "..", "examples"))
from seer_bench.examples import load
from seer_bench import ppo
ex = load("cleanrl_ppo_aircraft")
torch.set_num_threads(1)
T, N, d = 100, 32 * 64, 25
torch.manual_seed(0)
agent0 = ex.Agent(d, 2); agent0.obs_norm.update(torch.randn(1000, d) * 30)
batch = (torch.randn(T, N, d) * 30, torch.rand(T, N, 2) * 2 - 1, -torch.rand(T, N), torch.randn(T, N),
         torch.randn(T, N), torch.ones(T, N), torch.zeros(T, N))
a = ex.make_parser().parse_args([])
orig = ex.ppo_epochs
def run(once):
    ex.ppo_epochs = orig if once else (lambda *args: ppo.ppo_epochs(*args[:10]))
    agent = copy.deepcopy(agent0); opt = torch.optim.Adam(agent.parameters(), lr=1e-3, eps=1e-5)
    t = time.perf_counter(); ex._update(a, agent, opt, None, batch, 0, d); return time.perf_counter() - t
res = {"A": [], "B": [], "A2": []}
for rep in range(int(sys.argv[1]) if len(sys.argv) > 1 else 5):
    for k in ("A", "B", "A2"):
        res[k].append(run(k == "B"))
med = {k: float(np.median(v)) for k, v in res.items()}
print({k: np.round(v, 3).tolist() for k, v in res.items()})
print(f"update s, median: per minibatch {med['A']:.3f}, once {med['B']:.3f}; once / per minibatch "
      f"{med['B'] / med['A']:.3f}; A/A {med['A2'] / med['A']:.3f}")
