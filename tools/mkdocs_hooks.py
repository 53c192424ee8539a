# SPDX-License-Identifier: BSD-3-Clause
"""MkDocs hook (mkdocs.yml, ``hooks``): links from a page to a file of the
repository outside docs/ (a model's source, a test, a config file).

On GitHub such a link opens the file; the site holds only docs/, so there it
becomes the file's path in code type, or a link into the repository when
mkdocs.yml sets ``repo_url``.  A link whose file does not exist stays as
written, so ``mkdocs build --strict`` reports it."""

import os
import re

LINK = re.compile(r"(?<!!)\[([^\]]+)\]\(([^)\s#]+)(#[^)\s]*)?\)")


def on_page_markdown(markdown, page, config, files):
    docs = os.path.abspath(config["docs_dir"])
    root = os.path.dirname(docs)
    here = os.path.dirname(os.path.join(docs, page.file.src_path))

    def outside(m):
        text, target, anchor = m.group(1), m.group(2), m.group(3) or ""
        if "://" in target or target.startswith(("/", "mailto:")):
            return m.group(0)
        path = os.path.normpath(os.path.join(here, target))
        if path == docs or path.startswith(docs + os.sep) or not path.startswith(root + os.sep):
            return m.group(0)
        if not os.path.exists(path):
            return m.group(0)
        rel = os.path.relpath(path, root)
        if config.get("repo_url"):
            kind = "tree" if os.path.isdir(path) else "blob"
            return f"[{text}]({config['repo_url'].rstrip('/')}/{kind}/main/{rel}{anchor})"
        return text if text.strip("`") == rel.rstrip("/") else f"{text} (`{rel}`)"

    return LINK.sub(outside, markdown)
