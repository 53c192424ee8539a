# SPDX-License-Identifier: BSD-3-Clause
"""Every copy its own world, the core's part (:class:`WorldsAPI`, mixed into
:class:`seer_envs.core.EpisodeCore`): per-copy values at construction,
``set_params``, the reset option ``"params"``, the sampler and each
copy's values in force.  The worlds themselves (values, pending values,
draws) are :mod:`seer_envs._worlds`'s, held by the batch."""

import numbers

import numpy as np

from seer_envs._worlds import Sampler, refuse_field


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
        first = spec.build_config({**params, **top})
        rows = np.array([[getattr(first, f) for f in fields]] * E, np.float64)
        for k, vs in seqs.items():
            for c, v in enumerate(vs):
                if isinstance(v, bool) or not isinstance(v, numbers.Real):
                    raise ValueError(f"{k}[{c}] must be a number, got {v!r}")
                rows[c, fields.index(k)] = v
        for c in range(1, E):         # each copy's own config: the config's own errors
            spec.build_config({**params, **{k: v[c] for k, v in seqs.items()}})
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
