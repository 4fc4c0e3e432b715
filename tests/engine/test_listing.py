"""Listing budget, three-level degradation, Claude Code's current profile, compaction survival."""

from __future__ import annotations

import pytest

from governance.engine.listing import (
    EntryState,
    Level,
    ListingInput,
    budget_chars,
    build_listing,
    compaction_survival,
    listing_profile,
    single_skill_survival,
)
from governance.engine.tokens import headings_with_token_offsets

from .helpers import GOOD, only, parse


def item(n: int, desc_len: int = 100, *, bundled: bool = False, invocations: int = 0) -> ListingInput:
    desc = ("x" * (desc_len - 1)) + "." if desc_len else ""
    return ListingInput(f"k{n}", f"skill-{n:02d}", desc, bundled=bundled, invocations=invocations)


def test_budget_is_window_times_four_times_fraction() -> None:
    assert budget_chars(200_000) == 8_000
    assert budget_chars(1_000_000) == 40_000
    assert budget_chars(None) == 8_000
    assert budget_chars(200_000, 0.02) == 16_000


def test_level_one_everything_fits_exactly() -> None:
    items = [item(1, 20), item(2, 30)]
    listing = build_listing(items, window_tokens=200_000)
    assert listing.level is Level.FULL
    assert listing.text == f"- skill-01: {'x' * 19}.\n- skill-02: {'x' * 29}."
    assert listing.chars_used == len(listing.text) == listing.full_total
    assert all(e.state is EntryState.FULL for e in listing.entries)
    assert not listing.degraded


def test_level_two_truncates_non_bundled_to_an_equal_share_and_bundled_keep_full_lines() -> None:
    items = [item(0, 240, bundled=True)] + [item(n, 240) for n in range(1, 41)]
    listing = build_listing(items, window_tokens=200_000)
    assert listing.level is Level.TRUNCATED
    assert listing.entries[0].state is EntryState.FULL
    assert all(e.state is EntryState.TRUNCATED for e in listing.entries[1:])
    assert listing.chars_used <= listing.budget
    assert "- skill-00: " + "x" * 239 + "." in listing.text
    share = len(listing.entries[1].line) - len("- skill-01: ")
    assert share >= 30 and listing.entries[1].line.endswith("…")
    event = listing.event()
    assert event == {
        "skill_count": 41,
        "budget": 8000,
        "full_total": listing.full_total,
        "truncation_mode": "truncate",
        "bundled_count": 1,
        "bundled_chars": len(listing.entries[0].line),
    }


def test_short_descriptions_are_not_padded_or_cut_at_level_two() -> None:
    items = [item(n, 240) for n in range(40)] + [item(99, 10)]
    listing = build_listing(items, window_tokens=200_000)
    assert listing.level is Level.TRUNCATED
    assert listing.entries[-1].state is EntryState.FULL


def test_level_three_names_only_when_the_share_is_under_thirty_chars() -> None:
    items = [item(n, 200) for n in range(300)]
    listing = build_listing(items, window_tokens=200_000)
    assert listing.level is Level.NAMES_ONLY
    assert all(e.state is EntryState.NAME_ONLY for e in listing.entries)
    assert listing.text.splitlines()[0] == "- skill-00"
    assert listing.chars_used <= listing.budget


def test_one_million_window_keeps_what_200k_degrades() -> None:
    items = [item(n, 150) for n in range(100)]
    assert build_listing(items, window_tokens=200_000).degraded
    assert build_listing(items, window_tokens=1_000_000).level is Level.FULL


def test_classic_profile_caps_descriptions_at_250() -> None:
    listing = build_listing([item(1, 600)], window_tokens=1_000_000)
    assert len(listing.entries[0].line) == len("- skill-01: ") + 250


def test_claude_code_current_caps_description_plus_when_to_use_and_drops_least_invoked() -> None:
    long = ListingInput("a", "alpha", "d" * 1000, when_to_use="w" * 1000, invocations=9)
    listing = build_listing([long], window_tokens=1_000_000, profile="claude-code-current")
    assert len(listing.entries[0].line) == len("- alpha: ") + 1536

    items = [item(n, 300, invocations=n) for n in range(40)] + [item(99, 300, bundled=True)]
    listing = build_listing(items, window_tokens=200_000, profile="claude-code-current")
    assert listing.dropped > 0 and listing.chars_used <= listing.budget
    dropped = [e.key for e in listing.entries if e.state is EntryState.DROPPED]
    assert dropped == [f"k{n}" for n in range(len(dropped))]  # least invoked first
    assert listing.entries[-1].state is EntryState.FULL  # bundled never dropped
    assert listing.event()["truncation_mode"] == "drop-least-invoked"


def test_fraction_setting_changes_the_budget() -> None:
    profile = listing_profile("claude-code-current", fraction=0.02)
    assert build_listing([], window_tokens=200_000, profile=profile).budget == 16_000
    with pytest.raises(ValueError, match="fraction"):
        listing_profile("classic", fraction=2)


BODY = (
    "# Deploy\n\nGotchas first.\n\n```\n# not a heading\n```\n## Steps\n"
    + ("word " * 5000)
    + "\n## Rollback\nundo\n"
)


def test_headings_skip_code_fences_and_carry_offsets() -> None:
    heads = headings_with_token_offsets(BODY)
    assert [(h.level, h.title) for h in heads] == [(1, "Deploy"), (2, "Steps"), (2, "Rollback")]
    assert BODY.splitlines()[heads[2].line - 1] == "## Rollback"
    assert heads[2].token_offset == -(-BODY.index("## Rollback") // 4)


def test_single_skill_past_five_thousand_tokens_loses_its_tail_headings() -> None:
    s = single_skill_survival("k", "deploy", BODY)
    assert s.tokens > 5_000 and s.kept_tokens == 5_000
    assert s.cut_at_char == 20_000
    assert [h.title for h in s.headings_lost] == ["Rollback"]
    short = single_skill_survival("k", "short", "# A\nshort")
    assert short.survives_whole and short.headings_lost == []


def test_total_budget_drops_older_skills_whole() -> None:
    big = "y" * 24_000  # 6,000 tokens → 5,000 kept each
    bodies = [(f"k{n}", f"s{n}", big) for n in range(7)]
    result = compaction_survival(bodies)
    assert [s.dropped for s in result] == [False] * 5 + [True] * 2
    assert sum(s.kept_tokens for s in result) == 25_000
    assert result[5].position == 6


def test_cyrillic_body_lint_and_compaction_agree() -> None:
    """A Cyrillic letter is 2 UTF-8 bytes: under 5,000 tokens by characters / 4, over it by bytes / 4.
    The linter's finding and the catalog's compaction survival read the same estimate and headings."""
    section = "слово " * 1000  # 6,000 characters, 11,000 bytes
    body = "# Развёртывание\n" + section + "\n## Проверка\n" + section + "\n## Откат\nотменить\n"
    assert len(body) / 4 < 5_000 < len(body.encode()) / 4

    skill = parse(GOOD, body)
    lint = only(skill, "body-over-compaction-limit")
    survival = single_skill_survival("k", "deploy", body)

    assert survival.tokens == skill.body_tokens == -(-len(body.encode()) // 4)
    assert f"Body is about {survival.tokens:,} tokens" in lint.message
    assert [h.title for h in survival.headings_lost] == ["Откат"]
    for h in survival.headings_lost:
        assert f"'{'#' * h.level} {h.title}'" in lint.message
    assert "Проверка" not in lint.message and "Развёртывание" not in lint.message
    assert survival.kept_tokens == 5_000 and survival.cut_at_char is not None
    assert (
        len(body[: survival.cut_at_char].encode()) <= 20_000 < len(body[: survival.cut_at_char + 1].encode())
    )
