# SPDX-License-Identifier: BSD-3-Clause
"""Closed-loop thread-count tuning for ``num_threads="auto"``.

One controller, :class:`ThreadTuner`, used after every *unit* of a run: an
env step, or a chunk of simulated time in a headless PCS or PHOLD run.  It
only ever changes ``Engine.num_threads`` between units, which is safe at any
point because results do not depend on the thread count.

1. Closed loop: the first units measure the time per event at the start
   count (STPA's pick), then at the neighbouring counts, and climb in the
   better direction for a few trials; it then settles on the best.
2. Contention: when the workers mostly wait (idle share of their time) and
   the run got slower than when the count was set, or the team is slower
   than one thread doing the same work, it tries half the team and keeps it
   when it is not slower than the units just measured (a failed trial backs
   off the next check).
3. Recovery: below the closed loop's pick (or the start count, when the
   closed loop went below it) it probes upward now and then (exponential
   backoff) and keeps a probe only when it is faster.

After the closed loop, a trial (2 or 3) replaces the current count only
when it wins by ``HYSTERESIS`` (10%): the log shows decisions, not the
noise of a shared machine.

An env starts a tuner at every episode start; the closed loop runs at the
first one, and later starts from the same STPA pick begin at its result
(:meth:`ThreadTuner.learned`): its trials would cost every short episode
their slower units again, and contention and recovery still act.

Per unit it reads two counters and a few numbers: O(1), no per-agent work.
Every switch is reported in :meth:`ThreadTuner.report` (``adapted``: step,
from, to, reason, measured seconds per event); a trial that was not kept
changes nothing, so it is only counted there (``trials_not_kept``) and
listed in :attr:`ThreadTuner.history`.
"""

import math
import os
import time
from collections import deque

from seer_runtime._threads import thread_caps

# Contention: healthy runs on the development machine spend at most ~0.2 of
# their thread time waiting; with another process on a core it is 0.4-0.6
# (docs/stpa.md).  Waiting alone is not enough (many-core runs can be idle
# and still fastest): the cost per event must also have risen this much.
IDLE_SHARE = 0.3
SLOWDOWN = 1.25
CONTENTION_WINDOW = 5      # units pooled to decide contention
WINDOW = 3                 # units pooled per trial
SETTLE = 1                 # units discarded after a switch (team start-up)
MARGIN = 1.03              # more threads must be this much faster to win
# Hysteresis: once the closed loop has picked, a trial of another count (a
# step down under suspected contention, a probe up) is kept only when it is
# this much faster than the count it left, measured just before.  Unit times
# on a shared machine scatter by 5-15%: with MARGIN alone, a level trial
# down was kept and the next probe up won on noise, and `seer run` printed
# "2 -> 1 ... 1 -> 2 ..." six times in 240 steps.
HYSTERESIS = 1.10
# A team is dropped as slower than one thread only when it is clearly so:
# its phases are elastic, so a team level with one thread costs nothing, and
# under load unit times scatter by more than MARGIN.
SLOWER = 1.10
ABORT = 2.0                # a trial unit this much slower than the best ends the trial
MAX_TRIALS = 5             # closed-loop trials, start count included
PROBE_FIRST = 8            # units before the first upward probe
PROBE_MAX = 512            # longest wait between probes
MAX_REPORTED = 64          # decisions kept in the report


def usable_threads():
    """CPUs this process may use for "auto": the affinity mask capped by
    OMP_NUM_THREADS (which Ray sets to the CPUs it gave a task); 1 without
    OpenMP."""
    return thread_caps()[0]


def free_cpus(own_threads=1):
    """CPUs of this process's affinity mask not wanted by other runnable
    tasks right now (Linux: /proc/loadavg's runnable count, scaled to the mask
    when it is a part of the machine); None where unknown.  Read before a
    larger team is tried, never per unit."""
    try:
        with open("/proc/loadavg") as f:
            running = int(f.read().split()[3].split("/")[0])
        mask = len(os.sched_getaffinity(0))
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    others = max(0, running - own_threads) * mask / max(mask, os.cpu_count() or mask)
    return mask - others


def _step(t):
    return max(1, t // 4)


def _pooled(units):
    """Seconds per event over units of (wall_s, events): total wall over total
    events, as throughput is measured.  Not the median unit: under load the
    units' costs are bimodal (the team has the cores, or shares them), and
    the median of a few such units can sit far from the run's throughput."""
    return sum(u[0] for u in units) / sum(u[1] for u in units)


class ThreadTuner:
    """Decides the thread count of the next unit from the last units' times.

    Parameters
    ----------
    start : int
        The count the run starts with (STPA's pick).
    cap : int, optional
        Largest count it may use; default :func:`usable_threads`.
    predicted : dict, optional
        ``{threads: predicted speedup}``; a larger neighbour predicted below
        half the start count's speedup is not tried.
    explore : bool
        Run the closed loop at the start (else the start count is taken as
        the best, and only contention and recovery act).
    engine, thread_times : optional
        For :meth:`after_unit`: the engine to read and switch, and a
        callable returning cumulative (busy_s, idle_s) of its team (default
        ``engine.thread_times``).
    learned : dict, optional
        An earlier tuner's :meth:`learned` for the same workload: when it
        started from the same count, the closed loop is skipped and the run
        starts at its pick (its report's ``closed_loop`` says ``carried``).
    free : callable, optional
        ``free(own_threads)`` -> CPUs other processes leave free (e.g.
        :func:`free_cpus`); a larger team is then tried (closed loop or
        probe) only when that many CPUs are free.  Default: no check.  The
        team's phases are elastic (a member that gets no core holds nothing
        up), so trying a larger team on a busy machine costs at most what
        its members fail to add, and under load it often wins (it gets a
        larger share of the cores); the trial's measurement decides.

    :meth:`observe` is the pure decision function (unit deltas in, new
    count or None out); :meth:`after_unit` reads the engine and applies it.
    """

    def __init__(self, start, cap=None, predicted=None, explore=True, engine=None,
                 thread_times=None, free=None, learned=None):
        self.count = self._start = int(start)
        self.cap = max(int(cap if cap is not None else usable_threads()), self.count, 1)
        self.predicted = {int(k): float(v) for k, v in (predicted or {}).items()}
        self.unit = 0
        self.decisions = []                # switches only: the report's "adapted"
        self.dropped = 0
        self.history = []                  # every decision, trials not kept included
        self.trials_not_kept = 0
        self.measured = {}                 # count -> latest trial cost (s per event)
        self._recent = deque(maxlen=CONTENTION_WINDOW)   # (wall_s, events, busy_s, idle_s)
        self._baseline = None              # cost when the current count was set
        self._backoff = PROBE_FIRST
        self._next_probe = None
        self._probe = None                 # (from count, its cost, reason, report info) while trying
        self._calm_until = 0               # no contention check before this unit
        self._calm_backoff = PROBE_FIRST
        self._samples = []
        self._skip = SETTLE
        self.closed_loop = None
        self.best = self.count             # the probes' ceiling (set by the closed loop)
        if explore and learned is not None and learned["start"] == self._start:
            self.count = min(learned["picked"], self.cap)
            self.measured = dict(learned["measured"])
            self.best = min(learned["best"], self.cap)
            self.closed_loop = dict(learned["closed_loop"], carried=True)
            explore = False
        if explore and self.cap > 1:
            # Fewer threads first: a smaller team is never the catastrophic
            # one, and its time lets a much slower larger team be cut short.
            self.state = "explore"
            self._queue = sorted([self.count] + self._neighbours(self.count))
            self._trials = 0
            self._unreached = 0
            self._trial = self.count = self._queue.pop(0)
        else:
            self.state = "steady"
        self._reported = (self._start, 0, 0)
        self.skipped = 0                   # larger teams not tried: the CPUs were taken
        self._free = free
        self.engine = engine
        self._times = thread_times or (engine.thread_times if engine is not None else None)
        if engine is not None:
            if engine.num_threads != self.count:
                engine.num_threads = self.count
            self._last = self._sample()

    # --- decisions ----------------------------------------------------------------

    def _neighbours(self, t):
        out = []
        ref = self.predicted.get(t)
        for n in (t - _step(t), t + _step(t)):
            if 1 <= n <= self.cap and n != t:
                # a larger team predicted far slower is not worth a trial; a
                # smaller one always is (it is the safe side under contention)
                if n > t and ref is not None and n in self.predicted and self.predicted[n] < 0.5 * ref:
                    continue
                out.append(n)
        return out

    @staticmethod
    def _prefer(a, ca, b, cb):
        """Is count a (cost ca) better than count b (cost cb)?  Fewer threads
        win unless more are MARGIN faster."""
        if a == b:
            return ca < cb
        if a < b:
            return ca <= cb * MARGIN
        return ca * MARGIN < cb

    def _best_measured(self):
        best = None
        for t, c in sorted(self.measured.items()):
            if best is None or self._prefer(t, c, best, self.measured[best]):
                best = t
        return best

    def _record(self, reason, old, new, step=None, **info):
        d = {"step": self.unit if step is None else step, "from": old, "to": new, "reason": reason}
        d.update({k: (round(v, 12) if isinstance(v, float) else v) for k, v in info.items()})
        if len(self.history) >= MAX_REPORTED:
            self.history.pop(0)
        self.history.append(d)
        if new == old:
            # a trial not kept: reporting it as a switch would read "threads
            # 1 -> 1 (probe up)"
            self.trials_not_kept += 1
            return
        if len(self.decisions) >= MAX_REPORTED:
            self.decisions.pop(0)
            self.dropped += 1
        self.decisions.append(d)

    def _room_for(self, t):
        """May a team of t be tried now?  Not when other processes hold the
        CPUs it would need: such a trial costs much and tells nothing new."""
        if self._free is None or t <= self.count:
            return True
        f = self._free(self.count)
        if f is None or f >= t:
            return True
        self.skipped += 1
        return False

    def _switch(self, new):
        self.count = new
        self._skip = SETTLE
        self._samples = []
        self._recent.clear()
        return new

    def observe(self, wall_s, events, busy_s=0.0, idle_s=0.0):
        """One unit ran at ``self.count`` threads: ``wall_s`` seconds for
        ``events`` events, its workers ``busy_s`` busy and ``idle_s`` idle
        (summed).  Returns the count for the next unit when it changes, else
        None."""
        self.unit += 1
        if events <= 0 or wall_s <= 0:
            return None                    # nothing ran: no information
        unit = (wall_s, events, busy_s, idle_s)
        if self.state == "explore":
            return self._explore(unit)
        if self.state == "probe":
            return self._probing(unit)
        return self._steady(unit)

    def _explore(self, unit):
        cost = unit[0] / unit[1]
        best = self._best_measured()
        ref = self.measured[best] if best is not None else None
        if self._skip:
            self._skip -= 1
            if ref is None or cost <= ABORT * ref:
                return None
        self._samples.append(unit)
        if len(self._samples) < WINDOW and (ref is None or cost <= ABORT * ref):
            return None
        self.measured[self._trial] = _pooled(self._samples)   # aborted trials keep their bad cost
        self._trials += 1
        best = self._best_measured()
        if not self._queue and best != self._start and self._trials < MAX_TRIALS:
            # keep climbing in the direction that won
            d = 1 if best > self._start else -1
            nxt = best + d * _step(best)
            if 1 <= nxt <= self.cap and nxt not in self.measured:
                self._queue.append(nxt)
        while self._queue and self._trials < MAX_TRIALS:
            self._trial = self._queue.pop(0)
            if not self._room_for(self._trial):
                # not tried now; the upward probes may reach it later
                self._unreached = max(self._unreached, self._trial)
                self._queue = [t for t in self._queue if t < self._trial]
                continue
            return self._switch(self._trial) if self._trial != self.count else None
        # done: settle on the best
        self.state = "steady"
        # The probes' ceiling: a pick below the start count may be the load
        # of the moment (three units per trial), and a load that leaves must
        # not leave the run on a small team for good.
        self.best = max(best, self._start, self._unreached)
        self.closed_loop = {"units": self.unit, "start": self._start, "picked": best,
                            "measured_s_per_event": {t: round(c, 12) for t, c in sorted(self.measured.items())}}
        old = self.count
        self._baseline = self.measured[best]
        if best != self._start:
            self._record("closed loop", self._start, best,
                         measured=dict(self.closed_loop["measured_s_per_event"]))
        if best != old:
            return self._switch(best)
        self._skip = 0
        return None

    def _steady(self, unit):
        if self._skip:
            self._skip -= 1
            return None
        self._recent.append(unit)
        if self.count > 1 and len(self._recent) == self._recent.maxlen and self.unit >= self._calm_until:
            mc = _pooled(self._recent)
            busy = sum(u[2] for u in self._recent)
            total = busy + sum(u[3] for u in self._recent)
            mi = (total - busy) / total if total > 0 else 0.0
            ms = busy / sum(u[1] for u in self._recent) if busy > 0 else math.inf
            if self._baseline is None:
                self._baseline = mc
            one = min(ms, self.measured.get(1, math.inf))
            reason = None
            if mi > IDLE_SHARE and mc > self._baseline * SLOWDOWN:
                reason = "contention: workers waiting"
            elif mc > one * SLOWER:
                reason = "contention: slower than one thread"
            if reason:
                # A trial of half the team, judged against the window just
                # measured: "slower than one thread" and "slowed down" both
                # compare with times taken earlier, under another load.
                old, new = self.count, max(1, self.count // 2)
                self._probe = (old, mc, reason, dict(step=self.unit, idle_share=mi, s_per_event=mc,
                                                     baseline_s_per_event=self._baseline,
                                                     one_thread_s_per_event=one))
                self.state = "probe"
                return self._switch(new)
        return self._maybe_probe()

    def _maybe_probe(self):
        if self.count >= self.best:
            return None
        if self._next_probe is None:
            self._next_probe = self.unit + self._backoff
        if self.unit < self._next_probe or len(self._recent) < WINDOW:
            return None
        ref = _pooled(self._recent)
        target = min(self.cap, self.count + max(1, (self.best - self.count + 1) // 2))
        if not self._room_for(target):
            self._backoff = min(PROBE_MAX, self._backoff * 2)
            self._next_probe = self.unit + self._backoff
            return None
        self._probe = (self.count, ref, "probe up", dict(s_per_event=ref))
        self.state = "probe"
        return self._switch(target)

    def _probing(self, unit):
        """A trial of another count (a probe up, or half the team under
        suspected contention) against the cost ``ref`` of the count it left,
        measured just before: the trial is kept when it is better."""
        old, ref, reason, info = self._probe
        cost = unit[0] / unit[1]
        self._samples.append(unit)
        bad = cost > ABORT * ref
        if self._skip and not bad:
            self._skip -= 1
            self._samples = []
            return None
        if len(self._samples) < WINDOW and not bad:
            return None
        pc = _pooled(self._samples)
        target = self.count
        self.state = "steady"
        self._probe = None
        up = target > old
        kept = not bad and pc * HYSTERESIS <= ref
        # Both costs are of this moment's load: later "slower than one
        # thread" checks compare with them, not with an older, quieter time.
        self.measured[target] = pc
        self.measured[old] = ref
        self._record(reason, old, target if kept else old, tried=target, kept=kept,
                     **info, trial_s_per_event=pc)
        if kept:
            self._baseline = pc
            self._samples = []
            self._skip = 0
            self._recent.clear()
            if not up:
                self._calm_backoff = PROBE_FIRST     # the suspicion was right
            self._backoff = PROBE_FIRST
            self._next_probe = self.unit + PROBE_FIRST
            return None
        if up:
            self._backoff = min(PROBE_MAX, self._backoff * 2)
            self._next_probe = self.unit + self._backoff
        else:
            # the team was not the trouble: take its cost as the new normal
            # and check again later, backing off
            self._baseline = ref
            self._calm_until = self.unit + self._calm_backoff
            self._calm_backoff = min(PROBE_MAX, self._calm_backoff * 2)
        self._switch(old)
        self._skip = 0                     # back to a known count
        return old

    def learned(self):
        """What a later start of the same workload may begin from (the
        ``learned`` argument): the closed loop's pick, the costs it measured
        and the probes' ceiling; None until the closed loop has ended."""
        if self.closed_loop is None:
            return None
        return {"start": self._start, "picked": self.closed_loop["picked"], "best": self.best,
                "measured": dict(self.measured), "closed_loop": dict(self.closed_loop)}

    # --- engine glue --------------------------------------------------------------

    def _sample(self):
        wall, events = self.engine.counters()
        busy, idle = self._times()
        return wall, events, busy, idle

    def after_unit(self):
        """Read the engine's counters for the unit that just ran, decide, and
        switch the engine's team when the decision changes it.  Returns True
        when the count or the report changed (a switch, a closed-loop trial,
        the closed loop's end)."""
        if self.state == "steady" and self.count == 1 and self.best == 1:
            self.unit += 1                 # nothing left to decide: skip the reads
            return False
        now = self._sample()
        w0, e0, b0, i0 = self._last
        new = self.observe(now[0] - w0, now[1] - e0, max(0.0, now[2] - b0), max(0.0, now[3] - i0))
        if new is not None and new != self.engine.num_threads:
            self.engine.num_threads = new
            now = self._sample()           # a new team starts its own counters
        self._last = now
        state = (self.count, len(self.decisions) + self.dropped + (self.closed_loop is not None),
                 self.trials_not_kept)
        changed, self._reported = state != self._reported, state
        return changed

    def report(self):
        """``{"chosen", "adapted": [decisions], "closed_loop": {...} or None, ...}``:
        the tuner's fields of a :class:`~seer_runtime.ThreadChoice`
        (``choice.replace(**tuner.report())``)."""
        out = {"chosen": self.count, "tuned": True, "adapted": [dict(d) for d in self.decisions],
               "closed_loop": dict(self.closed_loop) if self.closed_loop else None,
               "trials_not_kept": self.trials_not_kept, "larger_teams_skipped": self.skipped}
        if self.dropped:
            out["adapted_dropped"] = self.dropped
        return out


def tuner_for(engine, num_threads_setting, choice=None, thread_times=None, learned=None):
    """A :class:`ThreadTuner` for ``engine`` when the setting is "auto" and
    more than one thread is usable; None otherwise (an explicit count is the
    user's).  ``learned``: an earlier tuner's :meth:`ThreadTuner.learned`."""
    if num_threads_setting != "auto":
        return None
    cap = usable_threads()
    if cap <= 1 and engine.num_threads <= 1:
        return None
    pred = (choice.predicted_speedup if choice is not None else None) or None
    return ThreadTuner(engine.num_threads, cap, predicted=pred, engine=engine,
                       thread_times=thread_times, learned=learned)


# Headless runs split the run into units of about this much wall time.
UNIT_WALL_S = 0.01


def run_until_tuned(engine, t_end, tuner=None, unit_wall_s=UNIT_WALL_S, max_wall_s=None):
    """``engine.run_until(t_end)`` in chunks of simulated time sized to about
    ``unit_wall_s`` of wall time, with ``tuner.after_unit()`` between them.
    Without a tuner (and ``max_wall_s``) it is one ``run_until`` call.
    Results are the same either way (chunk boundaries and team sizes do not
    change them).  ``max_wall_s`` stops early, between chunks (benchmarks).
    Returns the events run."""
    if tuner is None and max_wall_s is None:
        return engine.run_until(t_end)
    t_end = float(t_end)
    now = engine.now
    span = t_end - now
    if not span > 0:
        return engine.run_until(t_end)
    floor = span / 4096                # at most a few thousand units
    chunk = 4 * floor                  # start small: the first units are trials
    events = 0
    count = engine.num_threads
    start = time.perf_counter()
    while now < t_end and (max_wall_s is None or time.perf_counter() - start < max_wall_s):
        if engine.num_threads != count:
            # a team size not yet timed may be far slower: keep its first unit short
            count = engine.num_threads
            chunk = max(floor, chunk / 8)
        nxt = min(t_end, now + chunk)
        if t_end - nxt < 0.5 * chunk:
            nxt = t_end
        t0 = time.perf_counter()
        events += engine.run_until(nxt)
        dt = time.perf_counter() - t0
        now = nxt
        if tuner is not None:
            tuner.after_unit()
        # aim the next chunk at unit_wall_s (at most doubling / halving)
        chunk = max(floor, chunk * min(2.0, max(0.5, unit_wall_s / dt if dt > 0 else 2.0)))
    return events
