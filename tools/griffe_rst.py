# SPDX-License-Identifier: BSD-3-Clause
"""Griffe extension for the docs site's API pages (mkdocs.yml): SEER's
docstrings are written for Sphinx-style readers (``:class:`X```, ``>>>``
examples in prose); the API pages are Markdown.  Before a docstring is
parsed, its roles become code spans and each run of ``>>>`` lines (with the
output lines after it) becomes a fenced Python block."""

import re

import griffe

ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj|const):`~?([^`]+)`")


def markdown(text):
    text = ROLE.sub(r"`\1`", text)
    out, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(">>>"):
            indent = line[:len(line) - len(line.lstrip())]
            block = []
            while i < len(lines) and lines[i].strip() and lines[i].startswith(indent):
                block.append(lines[i][len(indent):])
                i += 1
            out += [indent + "```python"] + [indent + b for b in block] + [indent + "```"]
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


NUMPY = {"parameters", "returns", "yields", "raises", "warns", "see also", "notes", "examples",
         "attributes", "methods", "other parameters", "receives", "references"}


def definition_lists(text):
    """A module docstring's own sections (a title underlined with dashes that
    is not a numpy section) hold definition lists: ``Name`` then an indented
    description.  They become a bold title and a bullet per entry."""
    lines, out, i, own = text.split("\n"), [], 0, False
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and re.fullmatch(r"-{3,}", nxt.strip()):
            own = line.strip().lower() not in NUMPY
            if own:
                out += [f"**{line.strip()}**", ""]
                i += 2
                continue
        if own and line.strip() and not line.startswith(" ") and nxt.startswith("    "):
            desc = []
            i += 1
            while i < len(lines) and lines[i].startswith("    "):
                desc.append(lines[i].strip())
                i += 1
            out.append(f"- `{line.strip()}`: " + " ".join(desc))
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def prose_out_of_sections(text):
    """Numpy-style sections run to the next section; a paragraph of prose
    after a section's entries (``Errors are deterministic: ...`` after
    ``Parameters``) would be read as more entries.  Such a paragraph moves
    in front of the section's title."""
    lines = text.split("\n")
    i = 0
    while i < len(lines) - 1:
        if lines[i].strip().lower() in NUMPY and re.fullmatch(r"-{3,}", lines[i + 1].strip()):
            head, j = i, i + 2
            while j < len(lines):
                line = lines[j]
                if not line.strip() or line.startswith(" "):
                    j += 1
                    continue
                nxt = lines[j + 1] if j + 1 < len(lines) else ""
                if re.fullmatch(r"-{3,}", nxt.strip()):
                    break                                   # the next section
                entry = re.match(r"^[*\w][\w, *]*( : .*)?$", line) and (nxt.startswith(" ") or " : " in line)
                if not entry and not lines[j - 1].strip():
                    k = j
                    while k < len(lines) and not (k + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[k + 1].strip())):
                        k += 1
                    para = lines[j:k]
                    lines = lines[:head] + para + [""] + lines[head:j] + lines[k:]
                    i = head + len(para) + 1
                    break
                j += 1
        i += 1
    return "\n".join(lines)


class RstToMarkdown(griffe.Extension):
    """Rewrite every docstring as above, for static and inspected objects alike."""

    def on_instance(self, *, obj, **kwargs):
        if obj.docstring is not None:
            text = prose_out_of_sections(markdown(obj.docstring.value))
            obj.docstring.value = definition_lists(text) if obj.is_module else text
