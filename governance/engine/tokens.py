"""Token estimates for SKILL.md bodies, shared by the linter, the catalogue and the listing budget.

No tokenizer is shipped with the portal, so tokens are *estimated*: one token per 4 bytes of
UTF-8. For English prose and code this is the usual "4 characters per token"; it also stays
honest for other scripts, where a character costs more than a quarter of a token: Cyrillic and
Greek letters (2 bytes) count half a token each, CJK characters (3 bytes) three quarters, emoji
(4 bytes) one. Measured tokenizers give 3.5-4.5 characters per token on English Markdown, so the
estimate is within ~15% on the bodies that matter; the 5,000-token compaction limit of Claude
Code (DOMAIN §4) is a rough line, not a byte-exact one, so this is enough to say which headings
fall past it. The estimate is cheap (one C-level encode) so it can run on every ingest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BYTES_PER_TOKEN = 4
# Claude Code re-attaches the first 5,000 tokens of each invoked skill after compaction.
COMPACTION_KEEP_TOKENS = 5_000

# One pass finds every line that can matter: ATX headings and code fences (up to 3 spaces
# indent). The pattern starts with a literal newline (the body is searched with one prepended) so
# the regex engine can skip ahead to line starts instead of trying every position.
_INTERESTING = re.compile(r"\n {0,3}(?:(#{1,6})(?:[ \t]+([^\n]*?))?[ \t#]*|(`{3,}|~{3,})[^\n]*?)\r?(?=\n|\Z)")


def token_estimate(text: str) -> int:
    """Estimated tokens of ``text``: UTF-8 bytes / 4, rounded up (see the module docstring)."""
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    return -(-size // BYTES_PER_TOKEN)


def body_token_estimate(body: str) -> int:
    """Estimated tokens of a SKILL.md body (what the model loads when the skill is chosen)."""
    return token_estimate(body)


@dataclass(frozen=True, slots=True)
class Heading:
    """A Markdown ATX heading of a body. ``line`` is 1-based within the body; ``token_offset`` is
    the estimated number of body tokens before the heading line."""

    level: int
    title: str
    line: int
    token_offset: int


def headings_with_token_offsets(
    body: str, *, from_tokens: int = 0, limit: int | None = None, max_scan: int | None = None
) -> list[Heading]:
    """ATX headings (``#`` .. ``######``) outside fenced code blocks, with their token offsets.

    ``from_tokens`` skips headings that start before that token offset and ``limit`` stops after
    that many headings (the linter asks for the first few past the compaction point, so a hostile
    body of a million headings costs little); ``max_scan`` bounds the heading and fence lines
    looked at (a body of a million code fences). Setext headings (underlined with ``===``) are rare
    in skills and are not reported.
    """
    headings: list[Heading] = []
    fence: str | None = None
    ascii_only = body.isascii()
    line = 1
    last = 0
    for scanned, match in enumerate(_INTERESTING.finditer("\n" + body)):
        if max_scan is not None and scanned >= max_scan:
            break
        start = match.start()  # the newline before the line in the padded text = the line's start in body
        line += body.count("\n", last, start)
        last = start
        marker = match.group(3)
        if marker is not None:
            if fence is None:
                fence = marker
            elif (
                marker[0] == fence[0]
                and len(marker) >= len(fence)
                and not match.group(0).strip()[len(marker) :]
            ):
                fence = None
            continue
        if fence is not None:
            continue
        offset = start if ascii_only else len(body[:start].encode("utf-8", "surrogatepass"))
        if offset < from_tokens * BYTES_PER_TOKEN:
            continue
        headings.append(
            Heading(
                level=len(match.group(1)),
                title=(match.group(2) or "").strip(),
                line=line,
                token_offset=-(-offset // BYTES_PER_TOKEN),
            )
        )
        if limit is not None and len(headings) >= limit:
            break
    return headings
