# SPDX-License-Identifier: BSD-3-Clause
"""Every copy its own world: each copy's values of the per-copy config
fields, what ``set_params`` has pending for its next reset, and the
parameter sampler drawn at every reset (:class:`Worlds`, held by a
:class:`~seer_envs.layout.batch.Batch`; docs/training.md, "Per-copy worlds").

A copy's world is a whole config of the scenario: the base config with
the copy's values of the per-copy fields (``max_cycles`` and the fields
the scenario's :class:`~seer_envs.scenario.copies.Copies` lists in ``per_copy``),
so it is validated by the config's own checks and a copy of a batch equals
a single env built with that config.  The values live in three
``(copies, fields)`` float64 arrays, which snapshots carry:

- ``base``: the values the user set (construction, ``set_params``);
- ``values``: the values in force for the running episode (``base`` and
  the sampler's draws);
- ``pending``: values for the copy's next reset (NaN: none).

At a copy's reset, pending values become its base, and the sampler (if
any) draws the episode's values from ``np.random.default_rng([episode
seed, PARAM_STREAM])``: the same seeds give the same worlds at any thread
count, layout or batch size, and a restored copy continues its draws (its
seed generator is in the snapshot).

The core's part (:class:`WorldsAPI`, mixed into
:class:`seer_envs.episode.core.EpisodeCore`): per-copy values at
construction, ``set_params``, the reset option ``"params"``, the sampler
and each copy's values in force.
"""

import dataclasses
import numbers

import numpy as np

#: The second word of a copy's parameter stream: ``default_rng([episode_seed, PARAM_STREAM])``.
PARAM_STREAM = 0x5EED9A7A


def per_copy_fields(copies_cls):
    """The config fields that may take one value per copy: ``max_cycles``
    and the scenario's ``per_copy`` declaration."""
    return ("max_cycles",) + tuple(f for f in copies_cls.per_copy if f != "max_cycles")


def refuse_field(config, name, fields, what):
    """The ValueError of a field that cannot take per-copy values (or does not exist)."""
    known = [f.name for f in dataclasses.fields(config)]
    cls = type(config).__name__
    if name not in known:
        return ValueError(f"{what}: {cls} has no field {name!r}; the per-copy fields are "
                          + ", ".join(fields))
    return ValueError(f"{what}: {cls}.{name} cannot differ between copies (array shapes, spaces or "
                      "the engine's lookahead depend on it); the per-copy fields are " + ", ".join(fields))


class Sampler:
    """A parameter sampler: a callable ``f(rng) -> {field: value}``, or a
    dict ``{field: spec}`` where ``spec`` is ``(low, high)`` (uniform; an
    integer field draws an int in ``[low, high]``), a list of choices,
    ``{"uniform": [low, high]}`` or ``{"choice": [...]}`` (the config-file
    forms).  Fields are drawn in sorted order, one draw each."""

    def __init__(self, spec, config, fields):
        self.spec = spec
        if callable(spec):
            self._draw = spec
            return
        if not isinstance(spec, dict) or not spec:
            raise TypeError("param_sampler must be a callable f(rng) -> dict or a non-empty dict "
                            f"{{field: (low, high) | [choices]}}, got {spec!r}")
        plan = []
        for name in sorted(spec):
            if name not in fields:
                raise refuse_field(config, name, fields, "param_sampler")
            plan.append((name, _form(name, spec[name]), config.__dataclass_fields__[name].metadata.get("integer")))
        self._plan = plan
        self._draw = self._draw_plan

    def _draw_plan(self, rng):
        out = {}
        for name, (kind, args), integer in self._plan:
            if kind == "choice":
                out[name] = args[int(rng.integers(len(args)))]
            elif integer:
                out[name] = int(rng.integers(int(args[0]), int(args[1]), endpoint=True))
            else:
                out[name] = float(rng.uniform(args[0], args[1]))
        return out

    def draw(self, episode_seed, fields, config):
        """The values drawn for an episode of seed ``episode_seed``."""
        got = self._draw(np.random.default_rng([int(episode_seed), PARAM_STREAM]))
        if not isinstance(got, dict):
            raise TypeError(f"param_sampler returned a {type(got).__name__}, not a dict of field values")
        for name in got:
            if name not in fields:
                raise refuse_field(config, name, fields, "param_sampler")
        return got


def _form(name, v):
    """``("uniform", (lo, hi))`` or ``("choice", values)`` of one sampler entry."""
    if isinstance(v, dict) and len(v) == 1 and next(iter(v)) in ("uniform", "choice"):
        kind, args = next(iter(v.items()))
        v = tuple(args) if kind == "uniform" else list(args)
    if isinstance(v, tuple):
        if len(v) != 2 or not all(isinstance(x, numbers.Real) and not isinstance(x, bool) for x in v) \
                or not v[0] <= v[1]:
            raise ValueError(f"param_sampler[{name!r}]: a range is (low, high) with low <= high, got {v!r}")
        return "uniform", (float(v[0]), float(v[1]))
    if isinstance(v, list) and v and all(isinstance(x, numbers.Real) and not isinstance(x, bool) for x in v):
        return "choice", list(v)
    raise ValueError(f"param_sampler[{name!r}] must be (low, high), a non-empty list of numbers, "
                     f'{{"uniform": [low, high]}} or {{"choice": [...]}}, got {v!r}')


class Worlds:
    """Each of ``num_copies`` copies' world under the base ``config``
    (module docstring); ``fields``: :func:`per_copy_fields`."""

    def __init__(self, config, fields, num_copies, configs, counts=()):
        self.config, self.fields = config, tuple(fields)
        self.caps = {self.fields.index(f): getattr(config, f) for f in counts}
        self.index = {f: i for i, f in enumerate(self.fields)}
        self._integer = tuple(bool(config.__dataclass_fields__[f].metadata.get("integer")) for f in self.fields)
        row = np.array([getattr(config, f) for f in self.fields], np.float64)
        self.base = np.tile(row, (num_copies, 1))
        self.values = self.base.copy()
        self.pending = np.full_like(self.base, np.nan)
        self.configs = configs          # the copies' list (Copies.configs): read here, set by configure
        self.sampler = None
        self._cache = {tuple(row.tolist()): config}

    def config_for(self, row, where="copy"):
        """The validated config with these per-copy values (the config's own errors)."""
        key = tuple(np.asarray(row, np.float64).tolist())
        cfg = self._cache.get(key)
        if cfg is None:
            for i, cap in self.caps.items():
                if key[i] > cap:
                    raise ValueError(f"{type(self.config).__name__}.{self.fields[i]} must be <= {cap} in this "
                                     f"batch (built for the largest value of each copy), got {key[i]:g}")
            cfg = dataclasses.replace(self.config, **{f: int(v) if integer and v.is_integer() else v
                                                      for f, v, integer in zip(self.fields, key, self._integer)})
            if len(self._cache) < 4096:
                self._cache[key] = cfg
        return cfg

    def row(self, c, values):
        """Copy ``c``'s base row with ``values`` (field -> value) over it."""
        r = self.base[c].copy()
        for name, v in values.items():
            if name not in self.index:
                raise refuse_field(self.config, name, self.fields, "set_params")
            r[self.index[name]] = _number(name, v)
        return r

    def next_worlds(self, idx, seeds):
        """The configs of copies ``idx`` for episodes of ``seeds``: pending
        values over the base, then the sampler's draws; every one
        validated before anything changes.  Returns ``(bases, rows,
        configs)`` for :meth:`commit`."""
        bases, rows, configs = [], [], []
        for c, s in zip(idx, seeds):
            p = self.pending[c]
            base = np.where(np.isnan(p), self.base[c], p)
            row = base
            if self.sampler is not None:
                got = self.sampler.draw(s, self.fields, self.config)
                row = base.copy()
                for name, v in got.items():
                    row[self.index[name]] = _number(name, v, "param_sampler")
            bases.append(base)
            rows.append(row)
            configs.append(self.config_for(row))
        return bases, rows, configs

    def commit(self, idx, bases, rows, configs):
        """Put :meth:`next_worlds`' result in force; returns ``(copy,
        config)`` of the copies whose config changed (to configure)."""
        changed = []
        for c, base, row, cfg in zip(idx, bases, rows, configs):
            self.base[c] = base
            self.values[c] = row
            self.pending[c] = np.nan
            if cfg is not self.configs[c]:
                changed.append((c, cfg))
        return changed

    def set_rows(self, idx, base, values, pending):
        """Rows ``idx`` of the arrays (all of them from a whole snapshot,
        one from a per-copy restore): checked by building each row's config
        (``ValueError`` before anything changes); returns ``(copy, config)``
        of the copies whose config changed."""
        configs = [self.config_for(r) for r in values]
        for r in base:
            self.config_for(r)
        for b, p in zip(base, pending):
            self.config_for(np.where(np.isnan(p), b, p))
        self.base[idx] = base
        self.values[idx] = values
        self.pending[idx] = pending
        return [(c, cfg) for c, cfg in zip(idx.tolist(), configs) if cfg is not self.configs[c]]


def _number(name, v, what="set_params"):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ValueError(f"{what}: {name} must be a number, got {v!r}")
    return float(v)


class WorldsAPI:
    """The worlds part of the core: needs ``batch``, ``config``,
    ``per_copy_fields``, ``num_copies`` and the core's checks."""

    @staticmethod
    def _per_copy_values(spec, params, fields, E):
        """``(params with copy 0's values, (copies, fields) rows or None)``:
        a per-copy field may be a sequence of one value per copy; each
        copy's config is validated by the config's own checks."""
        seqs = {k: v for k, v in params.items()
                if not isinstance(v, (str, bytes, dict)) and np.ndim(v) == 1}
        if not seqs:
            return params, None
        for k in seqs:
            if k not in fields:
                raise refuse_field(spec.build_config({}), k, fields, f"{k}=[...]")
            if len(seqs[k]) != E:
                raise ValueError(f"{k} must be one value or {E} values (one per copy), got {len(seqs[k])}")
        # copy 0's values, but the largest of each count: the batch's width
        counts = spec.copies.per_copy_counts
        top = {k: (max(v) if k in counts else v[0]) for k, v in seqs.items()}
        spec.build_config({**params, **top})
        for k, vs in seqs.items():
            for c, v in enumerate(vs):
                if isinstance(v, bool) or not isinstance(v, numbers.Real):
                    raise ValueError(f"{k}[{c}] must be a number, got {v!r}")
        # each copy's own config (the config's own errors), whose defaults
        # derive from the copy's own values (Aircraft's arena_size, num_targets)
        cfgs = [spec.build_config({**params, **{k: v[c] for k, v in seqs.items()}}) for c in range(E)]
        rows = np.array([[getattr(cfg, f) for f in fields] for cfg in cfgs], np.float64)
        return {**params, **top}, rows

    @property
    def param_values(self):
        """Each copy's values of the per-copy fields in force: field ->
        array ``(copies,)`` (int64 for integer fields), a fresh dict."""
        vals = self.batch.param_values
        out = {}
        for i, f in enumerate(self.per_copy_fields):
            integer = self.config.__dataclass_fields__[f].metadata.get("integer")
            out[f] = vals[:, i].astype(np.int64) if integer else vals[:, i].copy()
        return out

    def set_params(self, copies=None, **values):
        """Values of per-copy fields for the next reset of each copy in
        ``copies`` (None: every copy), whether a ``reset`` or an autoreset
        starts it; a value is one number or one per named copy.  Checked now
        by each copy's config (its own errors); nothing changes on a refusal."""
        self.check_open()
        ids = list(range(self.num_copies)) if copies is None else self.copy_ids(copies)
        rows = self._pending_rows(ids, values, "set_params")
        with self.batch.using():
            self.batch.set_pending(ids, rows)

    def _pending_rows(self, ids, values, what):
        """Pending rows of copies ``ids`` with ``values`` over what is
        pending, each checked by the copy's config."""
        fields, b = self.per_copy_fields, self.batch
        pending, base = b.param_pending[ids], b.param_base[ids]
        for name, v in values.items():
            if name not in fields:
                raise refuse_field(self.config, name, fields, what)
            vs = v if not isinstance(v, (str, bytes)) and np.ndim(v) == 1 else [v] * len(ids)
            if len(vs) != len(ids):
                raise ValueError(f"{what}: {name} must be one value or {len(ids)} values (one per "
                                 f"copy named), got {len(vs)}")
            for j, x in enumerate(vs):
                if isinstance(x, bool) or not isinstance(x, numbers.Real):
                    raise ValueError(f"{what}: {name} must be a number, got {x!r}")
                pending[j, fields.index(name)] = x
        w = b.worlds
        for j in range(len(ids)):
            w.config_for(np.where(np.isnan(pending[j]), base[j], pending[j]))
        return pending

    def set_param_sampler(self, sampler):
        """The sampler drawn at every later reset of every copy (None: none)."""
        self.check_open()
        s = None if sampler is None else Sampler(sampler, self.config, self.per_copy_fields)
        self.batch.set_sampler(s)
