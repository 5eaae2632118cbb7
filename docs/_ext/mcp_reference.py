"""The command reference, generated from the parsers ``%mcp`` itself uses.

``mcp_notebook.magics.grammar.build_parsers()`` is the one source of truth for what a ``%mcp`` line accepts:
``%mcp?`` and ``%mcp SUB --help`` print from it, and so does this page. ``{mcp-commands}`` writes one
section per subcommand (its description, its usage line, every argument with its help);
``{mcp-settings}`` lists every ``%config MCPMagics`` setting with its default and help.
"""

from __future__ import annotations

import argparse
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective


def _argument_rows(parser: argparse.ArgumentParser) -> list[tuple[str, str]]:
    rows = []
    for action in parser._actions:
        if action.dest == "help":
            continue
        if action.option_strings:
            metavar = "" if action.nargs == 0 else " " + (action.metavar or action.dest.upper())
            names = ", ".join(f"{option}{metavar}" for option in action.option_strings)
        else:
            names = str(action.metavar or action.dest)
        help_text = " ".join((action.help or "").split())
        if action.choices and "{" not in names:
            help_text = f"{help_text} (one of: {', '.join(map(str, action.choices))})".strip()
        rows.append((names, help_text % vars(action) if "%(" in help_text else help_text))
    return rows


def _table(rows: list[tuple[str, str]], header: tuple[str, str]) -> nodes.table:
    table = nodes.table(classes=["mcp-reference"])
    group = nodes.tgroup(cols=2)
    table += group
    group += nodes.colspec(colwidth=35)
    group += nodes.colspec(colwidth=65)
    head = nodes.thead()
    group += head
    body = nodes.tbody()
    group += body
    for target, cells in ((head, [header]), (body, rows)):
        for left, right in cells:
            row = nodes.row()
            for text, literal in ((left, True), (right, False)):
                entry = nodes.entry()
                paragraph = nodes.paragraph()
                paragraph += nodes.literal(text, text) if literal and target is body else nodes.Text(text)
                entry += paragraph
                row += entry
            target += row
    return table


class CommandsDirective(SphinxDirective):
    """One section per ``%mcp`` subcommand, in the parsers' order."""

    def run(self) -> list[nodes.Node]:
        from mcp_notebook.magics.grammar import build_parsers

        sections: list[nodes.Node] = []
        for name, parser in build_parsers().items():
            section = nodes.section(ids=[f"mcp-{name}"])
            title = f"%mcp {name}" if name != "server" else "%%mcp server"
            section += nodes.title(title, title)
            if parser.description:
                section += nodes.paragraph(text=" ".join(parser.description.split()))
            usage = parser.format_usage().removeprefix("usage: ").rstrip()  # argparse's own wrapping
            section += nodes.literal_block(usage, usage, language="text")
            rows = _argument_rows(parser)
            if rows:
                section += _table(rows, ("argument", "what it does"))
            sections.append(section)
        return sections


class SettingsDirective(SphinxDirective):
    """Every ``%config MCPMagics`` setting: its name, default and help, from the traitlets themselves."""

    def run(self) -> list[nodes.Node]:
        from mcp_notebook.magics.magics import MCPMagics

        rows = []
        for name, trait in sorted(MCPMagics.class_traits(config=True).items()):
            default: Any = trait.default_value
            shown = repr(default) if default is not None and not callable(default) else "(computed)"
            rows.append((f"{name} = {shown}", " ".join((trait.help or "").split())))
        return [_table(rows, ("%config MCPMagics.", "what it sets"))]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("mcp-commands", CommandsDirective)
    app.add_directive("mcp-settings", SettingsDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
