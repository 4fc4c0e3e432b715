"""The ``<available_skills>`` block agents paste into their system prompt (skills-ref's format)."""

from __future__ import annotations

import html
from collections.abc import Iterable


def available_skills_xml(entries: Iterable[tuple[str, str, str]]) -> str:
    """``(name, description, location)`` triples → the XML block, byte for byte as skills-ref
    writes it (each value on its own line, escaped; no trailing newline)."""
    lines = ["<available_skills>"]
    for name, description, location in entries:
        lines += [
            "<skill>",
            "<name>",
            html.escape(name),
            "</name>",
            "<description>",
            html.escape(description),
            "</description>",
            "<location>",
            location,
            "</location>",
            "</skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)
