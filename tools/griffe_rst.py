# SPDX-License-Identifier: BSD-3-Clause
"""Griffe extension for the docs site's API pages (mkdocs.yml): SEER's
docstrings are written for Sphinx-style readers (``:class:`X```, ``>>>``
examples in prose); the API pages are Markdown.  Before a docstring is
parsed, its roles become code spans and each run of ``>>>`` lines (with the
output lines after it) becomes a fenced Python block."""

import importlib
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


def _split_params(text):
    """A parameter list's pieces, split at the commas outside brackets."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [p.strip() for p in out + [cur] if p.strip()]


def cython_init_params(source, cls_name):
    """``[(name, kind, default)]`` of a ``cdef class``'s constructor in its
    ``.pyx`` ``source``: its ``__init__``, else its ``__cinit__`` (Cython
    types and ``not None`` dropped; ``kind`` one of "positional", "*",
    "**", "keyword"), or None when the class is not there or takes only
    ``*args, **kwargs``.  Compiled classes carry no signature of their own,
    so the API pages would show ``Engine`` with none and every parameter
    "required"."""
    m = re.search(rf"^cdef class {re.escape(cls_name)}\b.*?:\n((?:[ \t]+.*\n|[ \t]*\n)*)", source, re.M)
    if not m:
        return None
    body = m.group(1)
    for hook in ("__init__", "__cinit__"):
        d = re.search(rf"^[ \t]+def {hook}\(self,?(.*?)\):", body, re.M | re.S)
        if not d:
            continue
        params, keyword = [], False
        for piece in _split_params(d.group(1).replace("\n", " ")):
            piece = piece.replace("not None", "").strip()
            lhs, eq, default = piece.partition("=")
            name = lhs.split()[-1] if lhs.split() else ""
            if name == "*":
                keyword = True
                continue
            kind = "*" if name.startswith("*") and not name.startswith("**") else "**" if name.startswith("**") else (
                "keyword" if keyword else "positional")
            keyword = keyword or kind == "*"
            params.append((name.lstrip("*"), kind, default.strip() if eq else None))
        if [k for _, k, _ in params] == ["*", "**"]:
            continue                                    # (*args, **kwargs): not the real signature
        return params
    return None


def _value(module, default):
    """A default that names a module constant (``DEF_MAX_PENDING_PER_LP``) as its value."""
    if default is None or not default.isidentifier() or default in ("None", "True", "False"):
        return default
    try:
        value = getattr(importlib.import_module(module), default)
    except (ImportError, AttributeError):
        return default
    return repr(value) if isinstance(value, (int, float, str)) else default


_KINDS = {"positional": griffe.ParameterKind.positional_or_keyword, "*": griffe.ParameterKind.var_positional,
          "**": griffe.ParameterKind.var_keyword, "keyword": griffe.ParameterKind.keyword_only}


def _walk(obj):
    for member in list(obj.members.values()):
        if member.is_alias:
            continue
        yield member
        if member.is_module or member.is_class:
            yield from _walk(member)


class RstToMarkdown(griffe.Extension):
    """Rewrite every docstring as above, for static and inspected objects
    alike; give compiled classes their constructor's signature (from the
    ``.pyx``) and drop the "method descriptor" label of compiled functions."""

    def on_instance(self, *, obj, **kwargs):
        if obj.docstring is not None:
            text = prose_out_of_sections(markdown(obj.docstring.value))
            obj.docstring.value = definition_lists(text) if obj.is_module else text

    def on_package(self, *, pkg, **kwargs):
        sources = {}
        for obj in _walk(pkg):
            obj.labels.discard("method descriptor")
            if not obj.is_class or obj.module.filepath is None:
                continue
            path = obj.module.filepath
            pyx = path.parent / (path.name.split(".")[0] + ".pyx")
            if path.suffix == ".py" or not pyx.exists():
                continue
            if pyx not in sources:
                sources[pyx] = pyx.read_text(encoding="utf-8")
            params = cython_init_params(sources[pyx], obj.name)
            if params is None:
                continue
            params = [(n, k, _value(obj.module.path, d)) for n, k, d in params]
            init = griffe.Function("__init__", parameters=griffe.Parameters(
                griffe.Parameter("self", kind=griffe.ParameterKind.positional_or_keyword),
                *(griffe.Parameter(n, kind=_KINDS[k], default=d) for n, k, d in params)))
            obj.set_member("__init__", init)
