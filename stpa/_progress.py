# SPDX-License-Identifier: BSD-3-Clause
"""A small progress bar on stderr (no dependency)."""

import sys
import time


class Progress:
    """``with Progress(total, "collect") as p: ... p.update()``; silent when
    stderr is not a terminal unless ``force`` is set."""

    def __init__(self, total, label="", force=False, stream=None):
        self.total = max(1, total)
        self.label = label
        self.done = 0
        self.stream = stream or sys.stderr
        self.enabled = force or self.stream.isatty()
        self.t0 = time.perf_counter()
        self._last = 0.0

    def __enter__(self):
        self._draw()
        return self

    def update(self, n=1, note=""):
        self.done += n
        now = time.perf_counter()
        if now - self._last > 0.1 or self.done >= self.total:
            self._last = now
            self._draw(note)

    def _draw(self, note=""):
        if not self.enabled:
            return
        frac = min(1.0, self.done / self.total)
        el = time.perf_counter() - self.t0
        eta = el / frac - el if frac > 0 else 0.0
        bar = "#" * int(30 * frac) + "-" * (30 - int(30 * frac))
        self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total} "
                          f"{el:5.0f}s elapsed, ~{eta:4.0f}s left {note[:30]:<30}")
        self.stream.flush()

    def __exit__(self, *exc):
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
        return False
