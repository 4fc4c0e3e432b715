"""Plain-Python gates of self-evolution proposals (governance.engine.proposals)."""

from __future__ import annotations

import pytest

from governance.engine.proposals import (
    PatchError,
    UndelimitedFrontmatter,
    apply_unified_diff,
    change_signature,
    frontmatter_difference,
    frontmatter_region,
    is_bloat,
    side_by_side,
    unified_diff,
    with_line_endings_of,
)

BASE = "---\nname: deploy\ndescription: Deploy it.\n---\n# Deploy\n1. Run the tests.\n2. Ship it.\n"


def test_region_is_the_raw_bytes_up_to_the_closing_delimiter_line() -> None:
    assert frontmatter_region(BASE.encode()) == b"---\nname: deploy\ndescription: Deploy it.\n---\n"
    assert (
        frontmatter_region(b"\xef\xbb\xbf---\r\nname: x\r\n---\r\nbody")
        == b"\xef\xbb\xbf---\r\nname: x\r\n---\r\n"
    )
    assert frontmatter_region(b"---\ndescription: a --- b\n---") == b"---\ndescription: a --- b\n---"
    assert frontmatter_region(b"# no frontmatter\n") is None
    assert frontmatter_region(b"---\nname: never closed\n") is None


@pytest.mark.parametrize(
    "proposed",
    [
        BASE.replace("name: deploy", "name: deploy "),
        BASE.replace("name: deploy", 'name: "deploy"'),  # same YAML value, other bytes
        BASE.replace("---\nname", "---\r\nname"),
        "\ufeff" + BASE,
        BASE.replace("---\n#", "allowed-tools: Bash\n---\n#"),
        BASE.split("---\n", 2)[2],  # frontmatter removed
        "\n" + BASE,  # a leading blank line: the block no longer opens the file
    ],
)
def test_any_byte_change_in_the_frontmatter_is_a_difference(proposed: str) -> None:
    difference = frontmatter_difference(BASE.encode(), proposed.encode())
    assert difference is not None
    assert "byte-for-byte" in difference.describe()


def test_delimiters_with_trailing_spaces_still_delimit() -> None:
    base = b"--- \nname: x\n---\t\r\nbody\n"
    assert frontmatter_region(base) == b"--- \nname: x\n---\t\r\n"
    assert frontmatter_difference(base, base.replace(b"name: x", b"name: y")) is not None


def test_a_base_without_a_delimitable_frontmatter_fails_safe() -> None:
    for base in (b"# no frontmatter\n", b"\n---\nname: x\n---\n", b"---\nname: never closed\n"):
        with pytest.raises(UndelimitedFrontmatter):
            frontmatter_difference(base, base + b"more\n")


def test_body_changes_keep_the_frontmatter() -> None:
    assert frontmatter_difference(BASE.encode(), (BASE + "3. Check health.\n").encode()) is None


def test_first_differing_byte_and_line_are_reported() -> None:
    difference = frontmatter_difference(BASE.encode(), BASE.replace("deploy\n", "deplox\n", 1).encode())
    assert difference is not None and (difference.offset, difference.line) == (15, 2)


def test_unified_diff_round_trips() -> None:
    after = BASE.replace("2. Ship it.\n", "2. Tag it.\n3. Ship it.\n")
    diff = unified_diff(BASE, after, before_label="a/SKILL.md", after_label="b/SKILL.md")
    assert apply_unified_diff(BASE, diff) == after


def test_diff_without_final_newline() -> None:
    after = BASE + "3. Done."
    diff = unified_diff(BASE, after, before_label="a", after_label="b")
    assert "\\ No newline at end of file" in diff
    assert apply_unified_diff(BASE, diff) == after


def test_a_diff_that_does_not_match_the_base_is_refused() -> None:
    with pytest.raises(PatchError, match=r"line 6 of the base is '1\. Run the tests\.'"):
        apply_unified_diff(BASE, "@@ -6,1 +6,1 @@\n-1. Run all tests.\n+1. Run the suite.\n")
    with pytest.raises(PatchError, match="no hunk"):
        apply_unified_diff(BASE, "just text")
    with pytest.raises(PatchError, match="truncated"):
        apply_unified_diff(BASE, "@@ -6,2 +6,2 @@\n 1. Run the tests.\n")


def test_bloat_is_added_text_the_skill_already_has() -> None:
    assert is_bloat(BASE, BASE + "- run the TESTS\n")
    assert is_bloat(BASE, BASE + "\n\n") is False
    assert not is_bloat(BASE, BASE + "3. Check the health endpoint.\n")
    assert not is_bloat(BASE, BASE.replace("2. Ship it.\n", ""))  # a removal only


def test_signature_ignores_bullets_case_and_spacing() -> None:
    one = change_signature(BASE, BASE + "3. Check health.\n")
    assert one == change_signature(BASE, BASE + "-  3.  check health\n")
    assert one != change_signature(BASE, BASE + "3. Check logs.\n")


def test_side_by_side_pairs_changes_and_marks_gaps() -> None:
    long = "\n".join(f"line {i}" for i in range(30)) + "\n"
    rows = side_by_side(long, long.replace("line 2\n", "line two\n").replace("line 25\n", ""))
    kinds = [r.kind if r else None for r in rows]
    assert "replace" in kinds and "delete" in kinds and None in kinds


def test_line_endings_follow_the_base() -> None:
    assert with_line_endings_of("a\r\nb\r\n", b"x\ny\n") == "a\nb\n"
    assert with_line_endings_of("a\nb\r\n", b"x\r\ny\r\n") == "a\r\nb\r\n"
