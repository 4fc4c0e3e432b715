"""The skill listing an agent builds under its character budget, and what survives compaction.

Plain Python, no Django (DOMAIN §3 and §4).

Listing: the budget is ``context window tokens × 4 chars × fraction`` (1% by default). The
classic algorithm (sid-code, older Claude Code) degrades in three levels:

1. every full line ``- name: description`` fits: emit them all;
2. otherwise bundled skills keep their full lines and the others share what remains equally;
   if each share leaves at least 30 characters of description, descriptions are cut to it;
3. if not, the non-bundled skills are listed by name only.

Claude Code's current profile caps description + when_to_use at 1,536 characters per entry,
takes the fraction from ``skillListingBudgetFraction`` and, over budget, drops the least-invoked
skills first. Hidden (``disable-model-invocation``) and conditional (``paths:``) skills are not
listed: they cost nothing until activated.

Compaction (Claude Code): after a summary, each invoked skill's latest body is re-attached, at
most 5,000 tokens per skill and 25,000 in total, most recently invoked first; older ones are
dropped whole and long tails are cut. Body tokens and headings come from ``tokens.py`` (UTF-8
bytes / 4), the same estimate the linter's body-over-compaction-limit finding uses, so a
Cyrillic or CJK body gets the same count and the same lost headings on every page.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from governance.engine.tokens import (
    BYTES_PER_TOKEN,
    COMPACTION_KEEP_TOKENS,
    Heading,
    body_token_estimate,
    headings_with_token_offsets,
)

CHARS_PER_TOKEN = 4
DEFAULT_WINDOW_TOKENS = 200_000
DEFAULT_FRACTION = 0.01
MIN_DESC_CHARS = 30
ELLIPSIS = "…"


class EntryState(enum.StrEnum):
    FULL = "full"
    TRUNCATED = "truncated"
    NAME_ONLY = "name-only"
    DROPPED = "dropped"


class Level(enum.IntEnum):
    FULL = 1
    TRUNCATED = 2
    NAMES_ONLY = 3


@dataclass(frozen=True, slots=True)
class ListingProfile:
    key: str
    label: str
    fraction: float = DEFAULT_FRACTION
    max_desc_chars: int | None = None  # per-entry cap applied before budgeting
    include_when_to_use: bool = False
    drop_least_invoked: bool = False  # newer Claude Code: drop instead of degrade
    note: str = ""


LISTING_PROFILES: dict[str, ListingProfile] = {
    "classic": ListingProfile(
        key="classic",
        label="Three-level degradation (sid-code, older Claude Code)",
        max_desc_chars=250,
        note="Descriptions capped at 250 characters; full → truncated → names only; bundled exempt.",
    ),
    "claude-code-current": ListingProfile(
        key="claude-code-current",
        label="Claude Code (current)",
        max_desc_chars=1536,
        include_when_to_use=True,
        drop_least_invoked=True,
        note=(
            "description + when_to_use capped at 1,536 characters (skillListingMaxDescChars); "
            "budget fraction from skillListingBudgetFraction; over budget, the least-invoked "
            "non-bundled skills are dropped first (ties: the longest entry goes first)."
        ),
    ),
}


def listing_profile(key: str, *, fraction: float | None = None) -> ListingProfile:
    try:
        base = LISTING_PROFILES[key]
    except KeyError:
        raise ValueError(f"unknown listing profile {key!r}; known: {', '.join(LISTING_PROFILES)}") from None
    if fraction is None:
        return base
    if not 0 < fraction <= 1:
        raise ValueError(f"budget fraction must be in (0, 1], got {fraction}")
    return ListingProfile(
        base.key, base.label, fraction, base.max_desc_chars, base.include_when_to_use,
        base.drop_least_invoked, base.note,
    )  # fmt: skip


def budget_chars(window_tokens: int | None, fraction: float = DEFAULT_FRACTION) -> int:
    """``window × 4 × fraction``; an unknown window counts as 200K (8,000 chars at 1%)."""
    window = window_tokens if window_tokens and window_tokens > 0 else DEFAULT_WINDOW_TOKENS
    return int(window * CHARS_PER_TOKEN * fraction)


@dataclass(frozen=True, slots=True)
class ListingInput:
    key: str
    name: str  # the listed name (plugin:name, path:name...)
    description: str
    when_to_use: str = ""
    bundled: bool = False
    invocations: int = 0


@dataclass(slots=True)
class ListedEntry:
    key: str
    name: str
    state: EntryState
    bundled: bool
    line: str
    full_chars: int  # length of the full line
    chars: int  # length of the emitted line (0 when dropped)


@dataclass(slots=True)
class Listing:
    profile: ListingProfile
    window_tokens: int
    budget: int
    text: str
    entries: list[ListedEntry]
    level: Level
    full_total: int  # characters if every line were full
    dropped: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def chars_used(self) -> int:
        return len(self.text)

    @property
    def over_budget(self) -> bool:
        return self.chars_used > self.budget

    @property
    def degraded(self) -> bool:
        return self.level is not Level.FULL or self.dropped > 0

    @property
    def truncation_mode(self) -> str:
        if self.dropped:
            return "drop-least-invoked"
        return {Level.FULL: "none", Level.TRUNCATED: "truncate", Level.NAMES_ONLY: "names-only"}[self.level]

    def event(self) -> dict[str, int | str]:
        """The record Claude Code's internal build logs when the listing degrades (DOMAIN §3)."""
        bundled = [e for e in self.entries if e.bundled]
        return {
            "skill_count": len(self.entries),
            "budget": self.budget,
            "full_total": self.full_total,
            "truncation_mode": self.truncation_mode,
            "bundled_count": len(bundled),
            "bundled_chars": sum(e.chars for e in bundled),
        }

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in EntryState}
        for e in self.entries:
            out[e.state.value] += 1
        return out


def _entry_text(item: ListingInput, profile: ListingProfile) -> str:
    text = " ".join(item.description.split())
    if profile.include_when_to_use and item.when_to_use.strip():
        text = f"{text} - {' '.join(item.when_to_use.split())}" if text else item.when_to_use.strip()
    if profile.max_desc_chars is not None and len(text) > profile.max_desc_chars:
        text = _cut(text, profile.max_desc_chars)
    return text


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)].rstrip() + ELLIPSIS


def _line(name: str, desc: str | None) -> str:
    return f"- {name}: {desc}" if desc else f"- {name}"


def _joined_len(lines: Sequence[str]) -> int:
    return sum(len(x) for x in lines) + max(len(lines) - 1, 0)


def build_listing(
    items: Sequence[ListingInput],
    *,
    window_tokens: int | None = DEFAULT_WINDOW_TOKENS,
    profile: ListingProfile | str = "classic",
) -> Listing:
    """The exact listing text an agent would build for ``items`` (already filtered: hidden and
    conditional skills excluded by the caller or by :func:`listing_inputs`)."""
    prof = profile if isinstance(profile, ListingProfile) else listing_profile(profile)
    window = window_tokens if window_tokens and window_tokens > 0 else DEFAULT_WINDOW_TOKENS
    budget = budget_chars(window, prof.fraction)
    descs = [_entry_text(i, prof) for i in items]
    full_lines = [_line(i.name, d) for i, d in zip(items, descs, strict=True)]
    full_total = _joined_len(full_lines)

    def result(lines: list[str | None], states: list[EntryState], level: Level, dropped: int = 0) -> Listing:
        entries = [
            ListedEntry(i.key, i.name, s, i.bundled, ln or "", len(fl), len(ln or ""))
            for i, ln, s, fl in zip(items, lines, states, full_lines, strict=True)
        ]
        text = "\n".join(ln for ln in lines if ln is not None)
        return Listing(prof, window, budget, text, entries, level, full_total, dropped)

    if full_total <= budget:
        return result(list(full_lines), [EntryState.FULL] * len(items), Level.FULL)

    if prof.drop_least_invoked:
        return _drop_least_invoked(items, full_lines, budget, result)

    bundled_idx = [n for n, i in enumerate(items) if i.bundled]
    rest_idx = [n for n, i in enumerate(items) if not i.bundled]
    lines: list[str | None] = list(full_lines)
    states = [EntryState.FULL] * len(items)
    bundled_chars = _joined_len([full_lines[n] for n in bundled_idx])
    separators = 1 if bundled_idx and rest_idx else 0
    remaining = budget - bundled_chars - separators
    if rest_idx:
        overhead = sum(len(f"- {items[n].name}: ") + 1 for n in rest_idx) - 1  # "- name: " + newline
        share = (remaining - overhead) // len(rest_idx)
        if share >= MIN_DESC_CHARS:
            for n in rest_idx:
                if len(descs[n]) > share:
                    lines[n] = _line(items[n].name, _cut(descs[n], share))
                    states[n] = EntryState.TRUNCATED
            return result(lines, states, Level.TRUNCATED)
        for n in rest_idx:
            lines[n] = _line(items[n].name, None)
            states[n] = EntryState.NAME_ONLY
    out = result(lines, states, Level.NAMES_ONLY)
    if out.over_budget:
        out.notes.append(
            "Even names only exceed the budget: every name is still emitted (degrading beats dropping)."
        )
    return out


def _drop_least_invoked(
    items: Sequence[ListingInput],
    full_lines: list[str],
    budget: int,
    result: Callable[[list[str | None], list[EntryState], Level, int], Listing],
) -> Listing:
    order = sorted(
        (n for n, i in enumerate(items) if not i.bundled),
        key=lambda n: (items[n].invocations, -len(full_lines[n]), items[n].name),
    )
    lines: list[str | None] = list(full_lines)
    states = [EntryState.FULL] * len(items)
    total = _joined_len(full_lines)
    kept = len(full_lines)
    dropped = 0
    for n in order:
        if total <= budget:
            break
        lines[n] = None
        states[n] = EntryState.DROPPED
        kept -= 1
        total -= len(full_lines[n]) + (1 if kept > 0 else 0)
        dropped += 1
    return result(lines, states, Level.FULL, dropped)


# --------------------------------------------------------------------------------------------
# Compaction survival
# --------------------------------------------------------------------------------------------

PER_SKILL_TOKENS = COMPACTION_KEEP_TOKENS
TOTAL_TOKENS = 25_000


def _char_index(body: str, byte_offset: int) -> int:
    """The character offset of ``body`` where its first ``byte_offset`` UTF-8 bytes end."""
    if body.isascii():
        return min(byte_offset, len(body))
    head = body.encode("utf-8", "surrogatepass")[:byte_offset]
    return len(head.decode("utf-8", "ignore"))


@dataclass(slots=True)
class Survival:
    key: str
    name: str
    tokens: int
    kept_tokens: int  # tokens re-injected after compaction (0 when dropped)
    cut_at_char: int | None  # character offset where the re-injected text stops (None: kept whole)
    headings_lost: list[Heading]
    dropped: bool  # the 25,000-token total ran out before this skill
    position: int  # 1 = most recently invoked

    @property
    def survives_whole(self) -> bool:
        return not self.dropped and self.cut_at_char is None


def compaction_survival(
    bodies: Sequence[tuple[str, str, str]],
    *,
    per_skill_tokens: int = PER_SKILL_TOKENS,
    total_tokens: int = TOTAL_TOKENS,
) -> list[Survival]:
    """What Claude Code re-attaches after compaction for invoked skills.

    ``bodies`` is ``(key, name, body)`` ordered most recently invoked first. Each body is cut at
    ``per_skill_tokens``; skills are kept in order while the total fits; a skill whose (cut)
    body no longer fits in what remains of ``total_tokens`` is dropped whole, and so is every
    older one after the total is exhausted.
    """
    out: list[Survival] = []
    remaining = total_tokens
    for position, (key, name, body) in enumerate(bodies, start=1):
        # Token counts and lost headings come from tokens.py, as the linter's own finding does
        # (body-over-compaction-limit): one estimate (UTF-8 bytes / 4), one heading reader.
        tokens = body_token_estimate(body)
        kept = min(tokens, per_skill_tokens)
        if kept > remaining:
            out.append(Survival(key, name, tokens, 0, 0, headings_with_token_offsets(body), True, position))
            remaining = 0
            continue
        remaining -= kept
        if tokens <= per_skill_tokens:
            out.append(Survival(key, name, tokens, kept, None, [], False, position))
            continue
        cut = _char_index(body, per_skill_tokens * BYTES_PER_TOKEN)
        lost = headings_with_token_offsets(body, from_tokens=per_skill_tokens)
        out.append(Survival(key, name, tokens, kept, cut, lost, False, position))
    return out


def single_skill_survival(key: str, name: str, body: str) -> Survival:
    """A skill invoked alone: only the per-skill cap applies."""
    return compaction_survival([(key, name, body)])[0]
