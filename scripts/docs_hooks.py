"""MkDocs hooks of the documentation site (mkdocs.yml), and a griffe extension.

- The home page is README.md, generated at build time (one source, no copy in docs/):
  its links to ``docs/x.md`` become ``x.md``; links to files outside docs/ (benchmarks/)
  become plain text, since the site has no page for them.
- ``<!-- cli-help: report -->`` in a page is replaced by that command's ``--help``
  (``main`` for ``searcheval`` itself), so the CLI reference is the parser's own text.
- :class:`SphinxRoles`: the docstrings cross-reference in Sphinx's roles
  (``:func:`judge```), which Markdown would print as they are; they become code spans.
"""

from __future__ import annotations

import io
import os
import re
import sys
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

_DOCS_LINK = re.compile(r"\]\(docs/")
_OUTSIDE_LINK = re.compile(r"\[([^\]]+)\]\((?!https?:|#|[\w.-]+\.md(?:#[^)]*)?\))[^)]*\)")
_CLI_HELP = re.compile(r"<!-- cli-help: (\w+) -->")
_ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|exc|obj|math):`~?\.?([^`]+)`")


def readme_as_home(text: str) -> str:
    """README.md's text with its links made relative to docs/ (the site's root)."""
    text = _DOCS_LINK.sub("](", text)
    return _OUTSIDE_LINK.sub(r"\1", text)


def cli_help(command: str) -> str:
    """The ``--help`` text of ``searcheval`` (``main``) or one of its subcommands."""
    import importlib

    module = importlib.import_module(f"searcheval_frames.cli.{command}")
    os.environ["COLUMNS"] = "100"  # argparse wraps at the terminal's width: fix it
    buf = io.StringIO()
    with redirect_stdout(buf):
        module.build_parser().print_help()
    return buf.getvalue()


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    text = readme_as_home((ROOT / "README.md").read_text(encoding="utf-8"))
    files.append(File.generated(config, "index.md", content=text))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return _CLI_HELP.sub(lambda m: f"```text\n{cli_help(m.group(1)).rstrip()}\n```", markdown)


def sphinx_roles_to_code(text: str) -> str:
    """``:func:`~.judge``` -> ```judge``` (a Markdown code span)."""
    return _ROLE.sub(r"`\1`", text)


try:  # the extension is loaded by mkdocstrings (griffe); the hooks above need no griffe
    import griffe
except ImportError:  # pragma: no cover - only without the docs extra
    pass
else:

    class SphinxRoles(griffe.Extension):
        """Docstrings' Sphinx roles as Markdown code spans."""

        def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
            if obj.docstring is not None:
                obj.docstring.value = sphinx_roles_to_code(obj.docstring.value)
