"""Body lint and the token estimate helpers the catalogue reuses."""

from __future__ import annotations

from governance.engine.tokens import body_token_estimate, headings_with_token_offsets, token_estimate
from governance.engine.types import Severity

from .helpers import GOOD, codes, only, parse


def test_token_estimate_is_utf8_bytes_over_four() -> None:
    assert token_estimate("") == 0
    assert token_estimate("abcd") == 1
    assert token_estimate("abcde") == 2
    assert body_token_estimate("技能技能") == 3  # 12 bytes


def test_headings_with_offsets_skip_code_fences() -> None:
    body = (
        "# Title\n" + "x" * 396 + "\n```\n# not a heading\n```\n## Second ##\n~~~~\n# no\n~~~~\n### Third\n"
    )
    headings = headings_with_token_offsets(body)
    assert [(h.level, h.title, h.line) for h in headings] == [
        (1, "Title", 1),
        (2, "Second", 6),
        (3, "Third", 10),
    ]
    assert headings[0].token_offset == 0
    assert headings[1].token_offset == token_estimate(body[: body.index("## Second")])


def test_body_past_the_compaction_point_lists_the_headings_lost() -> None:
    section = "x" * 12000 + "\n"
    body = "# Intro\n" + section + "## Setup\n" + section + "## Steps\n" + section + "## Gotchas\n" + "y\n"
    skill = parse(GOOD, body)
    finding = only(skill, "body-over-compaction-limit")
    assert finding.severity is Severity.WARNING
    assert finding.message.startswith(
        f"Body is about {skill.body_tokens:,} tokens: Claude Code re-attaches only"
    )
    assert "'## Steps' (line 9)" in finding.message and "'## Gotchas' (line 11)" in finding.message
    assert "'## Setup'" not in finding.message
    assert finding.line == 5  # where the body starts
    assert skill.body_tokens == body_token_estimate(body)


def test_body_line_count() -> None:
    skill = parse(GOOD, "line\n" * 501)
    assert only(skill, "body-too-many-lines").message.startswith("Body has 501 lines (guideline: under 500)")
    assert "body-too-many-lines" not in codes(parse(GOOD, "line\n" * 500))


def test_empty_body() -> None:
    assert only(parse(GOOD, "\n  \n"), "body-empty").severity is Severity.WARNING


def test_heading_offsets_count_utf8_bytes() -> None:
    body = "# Начало\n" + "я" * 100 + "\n## Конец\n"
    headings = headings_with_token_offsets(body)
    assert [h.title for h in headings] == ["Начало", "Конец"]
    assert headings[1].token_offset == token_estimate("# Начало\n" + "я" * 100 + "\n")
    assert headings[1].line == 3


def test_crlf_headings_and_unclosed_fence() -> None:
    body = "# A\r\n```\r\n# inside\r\n"
    assert [h.title for h in headings_with_token_offsets(body)] == ["A"]


def test_a_million_headings_cost_little() -> None:
    import time

    body = "# h\n" * 250_000
    started = time.perf_counter()
    skill = parse(GOOD, body)
    assert time.perf_counter() - started < 0.5
    finding = only(skill, "body-over-compaction-limit")
    assert finding.message.count("'# h' (line") == 8 and "and more." in finding.message


def test_headings_from_a_token_offset_with_a_limit() -> None:
    body = "# a\n" + "x" * 30_000 + "\n## b\n## c\n"
    assert [(h.title, h.token_offset) for h in headings_with_token_offsets(body, from_tokens=5_000)] == [
        ("b", 7_502),
        ("c", 7_503),
    ]
    assert [h.title for h in headings_with_token_offsets(body, limit=1)] == ["a"]


def test_a_body_of_code_fences_is_scanned_within_a_bound() -> None:
    import time

    body = "```\n" * 250_000 + "# late\n"
    started = time.perf_counter()
    skill = parse(GOOD, body)
    assert time.perf_counter() - started < 0.5
    assert "body-over-compaction-limit" in codes(skill)
    assert [h.title for h in headings_with_token_offsets(body)] == ["late"]  # the unbounded scan finds it
    assert len(headings_with_token_offsets("# a\n# b\n# c\n", max_scan=2)) == 2
