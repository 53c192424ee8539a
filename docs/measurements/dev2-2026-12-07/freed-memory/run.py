"""The Aircraft IPPO example with and without glibc's freed memory kept
(seer_bench.ppo.keep_freed_memory; --no-keep-freed-memory), each a process
of its own as a user runs it, alternating, with an A/A (kept, again) in
each round:

    python docs/measurements/dev2-2026-12-07/freed-memory/run.py [--copies 32 64 128] [--rounds 2]

Prints and writes runs.csv beside this file: per run the training wall
seconds (the trainer's own clock at its last update: env construction and
the evaluation left out), the whole process's minor page faults and peak
RSS."""
import argparse, csv, os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, *[".."] * 4))
p = argparse.ArgumentParser()
p.add_argument("--copies", type=int, nargs="+", default=[32, 64, 128])
p.add_argument("--rounds", type=int, default=2)
p.add_argument("--updates", type=int, default=4)
a = p.parse_args()
rows = []
for r in range(a.rounds):
    for c in a.copies:
        for arm, flags in (("kept", []), ("default", ["--no-keep-freed-memory"]), ("kept_aa", [])):
            cmd = [sys.executable, "examples/cleanrl_ppo_aircraft.py", "--num-envs", str(c), "--updates", str(a.updates),
                   "--num-threads", "1", "--torch-threads", "1", "--eval-seeds", "1", *flags]
            proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            out = proc.stdout.read()
            _, status, ru = os.wait4(proc.pid, 0)          # this run's own rusage
            assert status == 0, (cmd, status)
            train_s = float(re.findall(r"\(\s*([0-9.]+) s\)", out)[-1])
            row = dict(round=r, copies=c, arm=arm, train_s=train_s,
                       env_steps_per_s=round(c * 100 * a.updates / train_s, 1),
                       minor_faults=ru.ru_minflt, peak_rss_mb=ru.ru_maxrss // 1024)
            rows.append(row)
            print(row, flush=True)
with open(os.path.join(HERE, "runs.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]))
    w.writeheader(); w.writerows(rows)
print("\ncopies  default/kept  kept_aa/kept  (train seconds, the upper median over rounds)")
for c in a.copies:
    med = lambda arm: sorted(x["train_s"] for x in rows if x["copies"] == c and x["arm"] == arm)[a.rounds // 2]
    print(f"{c:6d}  {med('default') / med('kept'):.2f}x  {med('kept_aa') / med('kept'):.2f}x")
