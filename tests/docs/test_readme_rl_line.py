# SPDX-License-Identifier: BSD-3-Clause
"""README's optional RL line (the first line of the fenced block after
"Optional, for RLlib", which ``.ci/run`` runs) installs the packages of the
``rllib``, ``train``, ``torchrl`` and ``video`` extras as pyproject.toml lists them,
without installing SEER again (``pip install -e .`` would rebuild every
extension): pyproject.toml stays the one list, and this test catches the
line falling behind it."""

import os
import re
import shlex
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXTRAS = ("rllib", "train", "torchrl", "video")


def _rl_block():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    after = text[text.index("\nOptional, for RLlib"):]
    m = re.search(r"^```[a-z]*\n(.*?)^```", after, re.S | re.M)
    assert m, "no fenced block after 'Optional, for RLlib' in README.md"
    return m.group(1).splitlines()


def _installed(line):
    """The requirements each ``pip install`` of a ``&&`` chain names."""
    reqs = []
    for cmd in line.split("&&"):
        words = shlex.split(cmd)
        assert words[:2] == ["pip", "install"], cmd
        reqs += [w for w in words[2:] if not w.startswith("-")]
    return reqs


def test_rl_line_installs_the_extras_without_seer():
    lines = _rl_block()
    assert len(lines) == 2, lines           # .ci/run: line 1 the RL extras, line 2 the peers
    reqs = _installed(lines[0])
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        extras = tomllib.load(f)["project"]["optional-dependencies"]
    for name in EXTRAS:
        for req in extras[name]:
            if req.startswith("torch>="):
                assert "torch==2.13.0" in reqs, reqs        # the pin, first
                continue
            assert req in reqs, f"README's RL line lacks {req!r} of the {name!r} extra"
    assert not any(r == "." or r.startswith((".[", "seer")) for r in reqs), reqs
    assert " -e " not in f" {lines[0]} ", lines[0]


def test_peers_line_installs_pufferlib_without_its_dependencies():
    cmds = [shlex.split(c) for c in _rl_block()[1].split("&&")]
    puffer = [c for c in cmds if any(w.startswith("pufferlib-core") for w in c)]
    assert puffer and "--no-deps" in puffer[0], cmds       # its wheel pins torch 2.9.0
