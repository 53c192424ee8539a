# SPDX-License-Identifier: BSD-3-Clause
"""Hardware features: cores, affinity, frequency, memory, load, caches.

psutil supplies most of them; without psutil the probe falls back to the
standard library with a warning, never an error.
"""

import glob
import os
import warnings

from seer_runtime._threads import available_cpus, omp_num_threads_cap  # noqa: F401 (re-export)
from seer_runtime._threads import thread_caps as _runtime_caps

_CACHE_INDEX = "/sys/devices/system/cpu/cpu0/cache/index*"


def _size_kb(text):
    text = text.strip().upper()
    mult = {"K": 1, "M": 1024, "G": 1024 * 1024}
    if text and text[-1] in mult:
        return int(float(text[:-1]) * mult[text[-1]])
    return int(text) // 1024 if text.isdigit() else 0


def _read(path):
    with open(path) as f:
        return f.read()


def cache_sizes_kb():
    """{'l1d': .., 'l2': .., 'l3': ..} in KiB where the OS exposes them (Linux sysfs)."""
    out = {"l1d": 0, "l2": 0, "l3": 0}
    for d in glob.glob(_CACHE_INDEX):
        try:
            level = _read(os.path.join(d, "level")).strip()
            kind = _read(os.path.join(d, "type")).strip()
            size = _size_kb(_read(os.path.join(d, "size")))
        except OSError:
            continue
        if level == "1" and kind in ("Data", "Unified"):
            out["l1d"] = size
        elif level in ("2", "3"):
            out["l" + level] = size
    return out


_cpu_model = None


def cpu_model():
    """The CPU's model name (Linux /proc/cpuinfo, else platform), '' if unknown."""
    global _cpu_model
    if _cpu_model is None:
        import platform
        name = ""
        try:
            for line in _read("/proc/cpuinfo").splitlines():
                if line.lower().startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    break
        except OSError:
            pass
        _cpu_model = name or platform.processor() or platform.machine()
    return _cpu_model


def affinity_cpus():
    return available_cpus()


_physical = None


def physical_cores():
    """Physical cores (psutil; the logical count without it), read once per
    process: the cap of a choice already made is checked at every episode
    start, and the full :func:`probe` costs a millisecond of sysfs reads."""
    global _physical
    if _physical is None:
        try:
            import psutil
            _physical = psutil.cpu_count(logical=False) or os.cpu_count() or 1
        except ImportError:
            _physical = os.cpu_count() or 1
    return _physical


def probe():
    """Hardware features of this machine now (a dict of numbers)."""
    logical = os.cpu_count() or 1
    feats = {"logical_cores": logical, "physical_cores": logical, "affinity_cpus": affinity_cpus(),
             "freq_mhz": 0.0, "mem_total_gb": 0.0, "mem_avail_gb": 0.0, "load_per_cpu": 0.0,
             "psutil": 0}
    try:
        import psutil
    except ImportError:
        warnings.warn("stpa: psutil is not installed; hardware probe uses os.cpu_count() only "
                      "(physical cores unknown: assuming logical)", RuntimeWarning, stacklevel=2)
    else:
        feats["psutil"] = 1
        feats["physical_cores"] = psutil.cpu_count(logical=False) or logical
        freq = psutil.cpu_freq()
        feats["freq_mhz"] = float(freq.max or freq.current) if freq else 0.0
        vm = psutil.virtual_memory()
        feats["mem_total_gb"] = vm.total / 2**30
        feats["mem_avail_gb"] = vm.available / 2**30
    try:
        feats["load_per_cpu"] = os.getloadavg()[0] / logical
    except (AttributeError, OSError):
        pass
    caches = cache_sizes_kb()
    feats.update({f"{k}_kb": v for k, v in caches.items()})
    return feats


def thread_caps(hw=None):
    """The hard caps on a thread count and which of them bind: (cap, reasons).

    :func:`seer_runtime.thread_caps` with the probed physical cores (of
    ``hw``, else :func:`physical_cores`) and the affinity mask now."""
    if hw is None:
        return _runtime_caps(physical_cores=physical_cores(), affinity=affinity_cpus())
    return _runtime_caps(physical_cores=hw["physical_cores"], affinity=hw["affinity_cpus"])
