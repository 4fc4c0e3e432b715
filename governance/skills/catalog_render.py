"""Safe rendering for catalog pages: skill bodies as sanitised Markdown, and version diffs.

Two layers: markdown-it renders with raw HTML disabled (a ``<script>`` in a body becomes text),
then nh3 keeps only an allowlist of tags and attributes. Images never load: a skill body is
untrusted text, and a remote image is a tracking pixel (it tells its owner who opened the page
and when); they are shown as a labelled placeholder with the address as text.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

import nh3
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

ALLOWED_TAGS = {
    "a", "p", "br", "hr", "strong", "em", "code", "pre", "blockquote", "ul", "ol", "li",
    "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td", "span", "del",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "span": {"class", "title"}, "th": {"style"}, "td": {"style"}}


def _image(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env)
    src = str(token.attrGet("src") or "")
    label = escape(alt or "no description")
    return f'<span class="img-blocked" title="{escape(src)}">[image not loaded: {label}]</span>'


_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")
_md.add_render_rule("image", _image)


def _filter(element: str, attribute: str, value: str) -> str | None:
    if element == "a" and attribute == "href":
        lowered = value.strip().lower()
        if not lowered.startswith(("http://", "https://", "mailto:", "#")):
            return None
    if element in {"th", "td"} and attribute == "style":
        return value if value.startswith("text-align:") and ";" not in value.rstrip(";") else None
    return value


def render_markdown(text: str) -> str:
    """Sanitised HTML for an untrusted Markdown body."""
    html = _md.render(text)
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        attribute_filter=_filter,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )


@dataclass(frozen=True, slots=True)
class FileDiff:
    path: str
    change: str  # added | removed | changed
    lines: list[tuple[str, str]]  # (kind: add|del|ctx|hunk, text)
    binary: bool = False


def _text(data: bytes | None) -> str | None:
    if data is None:
        return ""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def package_diff(old: Mapping[str, bytes], new: Mapping[str, bytes], *, context: int = 3) -> list[FileDiff]:
    """Unified diff of two whole packages, file by file (SKILL.md first)."""
    out: list[FileDiff] = []
    paths = sorted(set(old) | set(new), key=lambda p: (p != "SKILL.md", p))
    for path in paths:
        a, b = old.get(path), new.get(path)
        if a == b:
            continue
        change = "added" if a is None else "removed" if b is None else "changed"
        ta, tb = _text(a), _text(b)
        if ta is None or tb is None:
            out.append(FileDiff(path, change, [], binary=True))
            continue
        lines: list[tuple[str, str]] = []
        diff = difflib.unified_diff(
            ta.splitlines(), tb.splitlines(), f"a/{path}", f"b/{path}", lineterm="", n=context
        )
        for line in diff:
            if line.startswith(("---", "+++")):
                continue
            kind = (
                "hunk"
                if line.startswith("@@")
                else "add"
                if line[:1] == "+"
                else "del"
                if line[:1] == "-"
                else "ctx"
            )
            lines.append((kind, line))
        out.append(FileDiff(path, change, lines))
    return out


def file_tree(paths: Sequence[str]) -> list[dict[str, Any]]:
    """Flat, indented tree entries for a package's paths: folders once, files under them."""
    entries: list[dict[str, Any]] = []
    seen: set[str] = set()
    for path in sorted(paths, key=lambda p: (p.count("/") > 0, p)):
        parts = path.split("/")
        for depth in range(len(parts) - 1):
            folder = "/".join(parts[: depth + 1])
            if folder not in seen:
                seen.add(folder)
                entries.append({"path": folder, "name": parts[depth] + "/", "depth": depth, "is_dir": True})
        entries.append({"path": path, "name": parts[-1], "depth": len(parts) - 1, "is_dir": False})
    entries.sort(key=lambda e: e["path"] + ("/" if e["is_dir"] else ""))
    return entries
