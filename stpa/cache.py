# SPDX-License-Identifier: BSD-3-Clause
"""STPA's preflight results, kept per configuration and hardware in a user
cache file so that other processes (RLlib env runners, sweep points, later
sessions) reuse them instead of measuring again.

The file is ``$STPA_CACHE`` or ``~/.cache/seer/stpa.json`` (``$XDG_CACHE_HOME``
honoured); ``STPA_CACHE=off`` disables it.  Writers hold an advisory lock on
a sidecar ``.lock`` file while they read, merge and atomically replace the
file (write to a temporary file, then ``os.replace``), so concurrent
processes never see a torn file nor lose each other's entries.  A corrupt or
unreadable file is treated as empty: the cache is an optimisation, never an
error.
"""

import contextlib
import json
import os
import tempfile
import time

VERSION = 1
MAX_ENTRIES = 2000


def path():
    """The cache file in use, or None when disabled."""
    p = os.environ.get("STPA_CACHE")
    if p is not None:
        return None if p.strip().lower() in ("", "off", "0", "none") else os.path.expanduser(p)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "seer", "stpa.json")


@contextlib.contextmanager
def _locked(p):
    os.makedirs(os.path.dirname(os.path.abspath(p)), exist_ok=True)
    with open(p + ".lock", "a") as lock:
        try:
            import fcntl
        except ImportError:        # not POSIX: the atomic replace still prevents torn files
            yield
            return
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _read(p):
    try:
        with open(p) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("entries"), dict):
        return {}
    return data["entries"]


def get(key):
    """The stored value for ``key`` (a string), or None."""
    p = path()
    if p is None:
        return None
    entry = _read(p).get(key)
    return entry.get("value") if isinstance(entry, dict) else None


def put(key, value):
    """Store ``value`` (JSON-able) under ``key``; failures are silent."""
    p = path()
    if p is None:
        return False
    try:
        with _locked(p):
            entries = _read(p)
            entries[key] = {"time": time.time(), "value": value}
            if len(entries) > MAX_ENTRIES:      # drop the oldest
                for k in sorted(entries, key=lambda k: entries[k].get("time", 0))[:len(entries) - MAX_ENTRIES]:
                    del entries[k]
            d = os.path.dirname(os.path.abspath(p))
            fd, tmp = tempfile.mkstemp(prefix=".stpa.", suffix=".tmp", dir=d)
            try:
                with os.fdopen(fd, "w") as f:
                    json.dump({"version": VERSION, "entries": entries}, f)
                os.replace(tmp, p)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        return True
    except (OSError, TypeError, ValueError):
        return False


def clear():
    """Remove the cache file (when enabled)."""
    p = path()
    if p is not None:
        with contextlib.suppress(OSError):
            os.unlink(p)
