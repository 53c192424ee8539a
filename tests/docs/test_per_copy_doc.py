# SPDX-License-Identifier: BSD-3-Clause
"""docs/training.md's table of per-copy fields is each scenario's own
declaration (``per_copy`` on its ``Copies`` class): a scenario that
declares more (or fewer) fields fails here with the table to paste;
``python tests/docs/test_per_copy_doc.py`` writes it into the page."""

import dataclasses
import os

import seer_envs
from seer_envs.episode.worlds import per_copy_fields

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def table():
    """The markdown table of every scenario with copies: its per-copy
    fields besides ``max_cycles``, and the fields all copies share."""
    rows = ["| scenario | per copy (besides `max_cycles`) | shared by all copies of a batch |",
            "| --- | --- | --- |"]
    for sid, spec in seer_envs.envs().items():
        if spec.copies is None:
            continue
        per = per_copy_fields(spec.copies)[1:]
        shared = [f.name for f in dataclasses.fields(spec.config) if f.name not in per and f.name != "max_cycles"]
        rows.append(f"| `{sid}` | {', '.join(f'`{f}`' for f in per) or 'none'} | "
                    f"{', '.join(f'`{f}`' for f in shared)} |")
    return "\n".join(rows)


def test_the_per_copy_table_is_the_scenarios_declaration():
    doc = open(os.path.join(ROOT, "docs", "training.md"), encoding="utf-8").read()
    want = table()
    assert want in doc, "docs/training.md, \"The per-copy fields\": replace the table by\n\n" + want


def write():
    """Replace the table in docs/training.md by :func:`table`."""
    path = os.path.join(ROOT, "docs", "training.md")
    lines = open(path, encoding="utf-8").read().split("\n")
    start = next(i for i, ln in enumerate(lines) if ln.startswith("| scenario | per copy"))
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    lines[start:end] = table().split("\n")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    write()
