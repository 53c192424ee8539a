# SPDX-License-Identifier: BSD-3-Clause
"""Write the environments' reference pages (docs/envs/) from the scenario
registry: one page per env of ``seer_envs.envs()`` with its parameters
(default, unit, range, per copy or shared, meaning: the config fields'
``param(...)`` metadata), its spaces and observation layout (read from the
env built at its defaults) and its description, and docs/envs/README.md,
their index.

    python scripts/env_reference_doc.py          # rewrite docs/envs/
    python scripts/env_reference_doc.py --check  # exit 1 if a page is stale

tests/docs/test_env_reference.py keeps the committed pages equal to these.
"""

import dataclasses
import inspect
import math
import os
import re
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import seer_envs  # noqa: E402
from seer_envs.episode.worlds import per_copy_fields  # noqa: E402

OUT = os.path.join("docs", "envs")
COMMAND = "python scripts/env_reference_doc.py"
POWER = re.compile(r"(?<=[\w).])\*\*(?=[\w(.-])")
TIMES = re.compile(r"(?<=[\w)])\*(?=[\w(])")
ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj|const):`~?([^`]+)`")
CODE = re.compile(r"(`+)(.+?)\1")
DOC_LINK = re.compile(r"(?<![\w/`\[])docs/(\w+)\.md\b")


# --- formatting -------------------------------------------------------------------------------

def number(v):
    """A bound or a value as written on the pages: integers in full (a power
    of two from 2^16 on as ``2^k``), floats as their shortest repr."""
    if isinstance(v, bool):
        return repr(v)
    if isinstance(v, int):
        for k in range(-8, 9):                       # 2^32 - 3 rather than 4294967293
            w = v + k
            if v >= 1 << 16 and w & (w - 1) == 0:
                e = w.bit_length() - 1
                return f"2^{e}" + (f" - {k}" if k > 0 else f" + {-k}" if k < 0 else "")
        return str(v)
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.6g}"


def value_range(meta):
    """A field's allowed values: its choices, or an interval (``(`` open,
    ``]`` with ``inf`` where inf is allowed), "integer" for an integer field."""
    if meta.get("choices") is not None:
        return "one of " + ", ".join(f"`{c!r}`" for c in meta["choices"])
    lo, hi = meta.get("lo"), meta.get("hi")
    left = "(-inf" if lo is None else ("(" if meta.get("lo_open") else "[") + number(lo)
    right = ("inf]" if meta.get("allow_inf") else "inf)") if hi is None else number(hi) + "]"
    return ("integer in " if meta.get("integer") else "") + f"`{left}, {right}`"


def prose(text):
    """Text for a Markdown page: outside code spans, a power ``2**14``
    becomes ``2^14`` and a glued product ``a*b`` becomes ``a x b`` (Markdown
    would read both as emphasis)."""
    parts, last = [], 0
    for m in CODE.finditer(text):
        parts.append(_plain(text[last:m.start()]))
        parts.append(m.group(0))
        last = m.end()
    parts.append(_plain(text[last:]))
    return "".join(parts)


def _plain(text):
    text = POWER.sub("^", text)
    return TIMES.sub(" x ", text)


def cell(text):
    """Text for a table cell: :func:`rst`, with ``|`` escaped."""
    return rst(text).replace("|", "\\|")


def rst(text):
    """A docstring's reStructuredText as Markdown: roles and ``literals``
    become code spans, ``docs/X.md`` a link to the page."""
    text = ROLE.sub(r"``\1``", text)
    text = re.sub(r"``(.+?)``", lambda m: "`" + m.group(1) + "`", text, flags=re.S)
    text = DOC_LINK.sub(lambda m: f"[{m.group(1)}.md](../{m.group(1)}.md)"
                        if os.path.exists(os.path.join(ROOT, "docs", m.group(1) + ".md")) else m.group(0), text)
    return prose(text)


def docstring_markdown(doc, skip=("Parameters (",)):
    """A module docstring as Markdown: its title (a line underlined with
    ``=``) dropped, a simple two-column table made a list of bold terms,
    paragraphs starting with one of ``skip`` left out (the parameter list:
    this page's table has it)."""
    lines = inspect.cleandoc(doc).split("\n")
    if len(lines) > 1 and re.fullmatch(r"=+", lines[1].strip()):
        lines = lines[2:]
    out, i = [], 0
    border = re.compile(r"^(=+)(\s+)=+\s*$")
    while i < len(lines):
        m = border.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        col = len(m.group(1)) + len(m.group(2))
        i += 1
        rows = []
        while i < len(lines) and not border.match(lines[i]):
            line = lines[i]
            if line[:col].strip():
                rows.append([line[:col].strip(), line[col:].strip()])
            elif line.strip() and rows:
                rows[-1][1] += " " + line.strip()
            i += 1
        i += 1                                    # the closing border
        out += [f"- **{term}**: {text}" for term, text in rows]
    paras = "\n".join(out).split("\n\n")
    keep = [p.strip("\n") for p in paras if p.strip() and not p.lstrip().startswith(skip)]
    return rst("\n\n".join(keep))


def space_text(space):
    """A space in one line: ``Discrete(n)``, or a Box's shape, dtype and
    bounds where they are one value for every slot."""
    from gymnasium import spaces
    if isinstance(space, spaces.Box):
        lo, hi = np.unique(space.low), np.unique(space.high)
        bounds = (f"{number(float(lo[0]))}, {number(float(hi[0]))}, "
                  if len(lo) == 1 and len(hi) == 1 else "")
        return f"Box({bounds}{space.shape}, {space.dtype})"
    return str(space)


def slots(where):
    if isinstance(where, slice):
        return f"{where.start}-{where.stop - 1}" if where.stop - where.start > 1 else str(where.start)
    return str(where)


def bounds_of(arr, where):
    """A part's bound: one value, or the slots' values (a pattern that
    repeats written once, ``x 4``)."""
    vals = np.atleast_1d(arr[where])
    if len(np.unique(vals)) == 1:
        return number(float(vals[0]))
    n = len(vals)
    period = next(p for p in range(1, n + 1) if n % p == 0 and np.array_equal(vals, np.tile(vals[:p], n // p)))
    text = ", ".join(number(float(v)) for v in vals[:period])
    return text + (f" (x {n // period})" if period < n else "")


# --- the pages --------------------------------------------------------------------------------

def built(spec):
    """The env at its defaults (the spec's ``test_params`` if the defaults
    do not build here) and which of the two it is."""
    try:
        return spec.make_env(num_threads=1), "the defaults"
    except (MemoryError, ValueError):
        return spec.make_env(num_threads=1, **spec.test_params), "the spec's `test_params`"


def narrative(spec):
    """``(title, link, Bounds anchor or None)`` of the scenario's own page,
    docs/<package>.md (``seer_envs.pcs`` -> docs/pcs.md), or None."""
    pkg = spec.config.__module__.split(".")[1]
    path = os.path.join(ROOT, "docs", pkg + ".md")
    if not os.path.exists(path):
        return None
    heads = re.findall(r"^#+ (.+)$", open(path, encoding="utf-8").read(), re.M)
    title = re.split(r" [—(-] ", heads[0])[0] if heads else pkg
    bounds = next((slug(h) for h in heads if h.startswith("Bounds")), None)
    return title, f"../{pkg}.md", bounds


def slug(heading):
    """A heading's anchor, as MkDocs' toc (and GitHub) make it."""
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
    return re.sub(r"[\s]+", "-", text)


def page(sid, spec):
    cfg_cls, env_cls = spec.config, spec.env
    per = per_copy_fields(spec.copies) if spec.copies is not None else ()
    home = narrative(spec)
    out = [f"# `{sid}`", "", cell(spec.description) + ".", ""]
    written = getattr(sys.modules.get(env_cls.__module__), env_cls.__qualname__, None) is env_cls
    env_name = (f"`{env_cls.__module__}.{env_cls.__qualname__}`" if written else
                f"`{env_cls.__qualname__}` (made by the registry from the spec: `seer_envs.get(\"{sid}\").env`)")
    out += [f"Env class {env_name}, config "
            f"`{cfg_cls.__module__}.{cfg_cls.__qualname__}`, copies `{spec.copies.__module__}."
            f"{spec.copies.__qualname__}`" + (f"; the scenario's page: [{home[0]}]({home[1]})"
                                             if home else "") + ".",
            f"This page is generated from the scenario's spec by `{COMMAND}`.", ""]
    out += ["```python", "import seer_envs", "",
            f'env = seer_envs.make("{sid}")                      # the defaults below',
            f'vec = seer_envs.vector_env("{sid}", num_envs=8)     # 8 copies in one engine',
            "```", ""]

    out += ["## Parameters", "",
            "Keywords of `seer_envs.make`, `seer_envs.vector_env` and the env class, and keys of a "
            "scenario file's `[params]` table (`seer run FILE`). *Per copy*: a field a vector env may give one value per copy "
            "(a list, `set_params`, a `param_sampler`; [training](../training.md#per-copy-worlds)); "
            "*shared*: one value for every copy of a batch.", "",
            "| parameter | default | unit | range | per copy | meaning |",
            "| --- | --- | --- | --- | --- | --- |"]
    fields = dataclasses.fields(cfg_cls)
    for f in fields:
        m = f.metadata
        default = f"`{f.default!r}`" if not isinstance(f.default, int) else f"`{number(f.default)}`"
        out.append(f"| `{f.name}` | {default} | {cell(m.get('unit', ''))} | {value_range(m)} | "
                   f"{'per copy' if f.name in per else 'shared'} | {cell(m.get('doc', ''))} |")
    modes = ", ".join(["`None`"] + ['`"%s"`' % r for r in env_cls.metadata.get("render_modes", [])])
    out += ["", "Besides these, the env takes `num_threads` (`\"auto\"` or an int >= 1), `full_infos` "
            f"(`False`: infos at an agent's last step only) and `render_mode` ({modes})."]
    bounds = ("" if not home or not home[2] else
              f" ([{home[0]}, \"Bounds\"]({home[1]}#{home[2]}))")
    out += ["Bounds that tie several fields together (the horizon `max_cycles * dt` against the "
            "time constants, the expected work of one step, the memory a configuration needs) are "
            f"checked when the config is built, with an error naming the field and its limit{bounds}.",
            ""]

    env, at = built(spec)
    try:
        agent = env.possible_agents[0]
        obs, act = env.observation_space(agent), env.action_space(agent)
        n = len(env.possible_agents)
        names = f"`{env.possible_agents[0]}`" + (f" .. `{env.possible_agents[-1]}`" if n > 1 else "")
        out += ["## Spaces", "",
                f"Built at {at} ({n} agents: {names}), the first agent's spaces:", "",
                f"- **Observation space**: `{space_text(obs)}`",
                f"- **Action space**: `{space_text(act)}`"]
        state = getattr(env, "state_space", None)
        if state is not None:
            out.append(f"- **State space** (`env.state()`): `{space_text(state)}`")
        defaults = {f.name: f.default for f in fields}
        for f in fields:
            for choice in f.metadata.get("choices") or ():
                if choice == f.default:
                    continue
                o2, a2 = spec.spaces(dict(defaults, **{f.name: choice}))
                changed = [f"observation space `{space_text(o2)}`" if o2 != obs else "",
                           f"action space `{space_text(a2)}`" if a2 != act else ""]
                if any(changed):
                    out.append(f"- **With `{f.name}={choice!r}`**: " + ", ".join(c for c in changed if c))
        layout = getattr(env, "obs_layout", None)
        if layout:
            out += ["", "The observation's layout (`env.obs_layout`): each part's slots and bounds.", "",
                    "| part | slots | low | high |", "| --- | --- | --- | --- |"]
            order = sorted(layout.items(), key=lambda kv: kv[1].start if isinstance(kv[1], slice) else kv[1])
            for name, where in order:
                out.append(f"| `{name}` | {slots(where)} | {bounds_of(obs.low, where)} | "
                           f"{bounds_of(obs.high, where)} |")
        out.append("")
    finally:
        env.close()

    out += ["## Description", ""]
    first = (env_cls.__doc__ or "").strip().split("\n\n")[0]
    if first:
        out += [rst(inspect.cleandoc(first)), ""]
    mod = sys.modules[env_cls.__module__]
    if mod.__doc__:
        out += [f"From the docstring of `{env_cls.__module__}`:", "", docstring_markdown(mod.__doc__), ""]
    return "\n".join(out)


def index(envs):
    out = ["# Environments: reference", "",
           "One page per registered environment (`seer_envs.envs()`), generated from its spec by "
           f"`{COMMAND}`: every parameter with its default, unit, range and meaning, which "
           "parameters may differ per copy of a vector env, the spaces and the observation's layout.",
           "", "| env | description |", "| --- | --- |"]
    for sid, spec in envs.items():
        out.append(f"| [`{sid}`]({sid}.md) | {cell(spec.description)} |")
    return "\n".join(out) + "\n"


def pages():
    """``{path relative to the repository: text}`` of every page."""
    envs = seer_envs.envs()
    out = {os.path.join(OUT, "README.md"): index(envs)}
    for sid, spec in envs.items():
        out[os.path.join(OUT, f"{sid}.md")] = page(sid, spec)
    return out


def main(argv):
    want = pages()
    if "--check" in argv:
        stale = []
        for rel, text in want.items():
            path = os.path.join(ROOT, rel)
            if not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
                stale.append(rel)
        if stale:
            print(f"stale: {', '.join(stale)}; run {COMMAND}", file=sys.stderr)
            return 1
        return 0
    os.makedirs(os.path.join(ROOT, OUT), exist_ok=True)
    for rel, text in want.items():
        with open(os.path.join(ROOT, rel), "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
