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

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t#]*$")


def token_estimate(text: str) -> int:
    """Estimated tokens of ``text``: UTF-8 bytes / 4, rounded up (see the module docstring)."""
    if not text:
        return 0
    return -(-len(text.encode("utf-8", "surrogatepass")) // BYTES_PER_TOKEN)


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


def headings_with_token_offsets(body: str) -> list[Heading]:
    """ATX headings (``#`` .. ``######``) outside fenced code blocks, with their token offsets.

    Setext headings (underlined with ``===``) are rare in skills and are not reported.
    """
    headings: list[Heading] = []
    offset_bytes = 0
    fence: str | None = None
    for number, line in enumerate(body.splitlines(keepends=True), start=1):
        stripped = line.rstrip("\r\n")
        fence_match = _FENCE.match(stripped)
        if fence_match:
            marker = fence_match.group(1)
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None
        elif fence is None and stripped.lstrip(" ").startswith("#"):
            atx = _ATX.match(stripped)
            if atx:
                headings.append(
                    Heading(
                        level=len(atx.group(1)),
                        title=(atx.group(2) or "").strip(),
                        line=number,
                        token_offset=-(-offset_bytes // BYTES_PER_TOKEN),
                    )
                )
        offset_bytes += len(line.encode("utf-8", "surrogatepass"))
    return headings
