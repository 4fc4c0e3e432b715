"""Reading SKILL.md: delimiters, encodings, sizes and the parsed result."""

from __future__ import annotations

import hashlib

from governance.engine.skillfile import parse_skill_md, split_frontmatter
from governance.engine.types import Limits, Severity, SourceKind

from .helpers import GOOD, codes, only, parse, skill_md


def test_valid_skill_is_parsed_with_exact_frontmatter_text_and_body() -> None:
    data = skill_md(GOOD, "# Steps\n\nRun it.\n")
    skill = parse_skill_md(data, folder="my-skill", path="skills/my-skill", source=SourceKind.MANAGED)
    assert skill.valid and skill.findings == []
    assert skill.name == "my-skill"
    assert skill.path == "skills/my-skill"
    assert skill.source is SourceKind.MANAGED
    assert skill.frontmatter_text == GOOD + "\n"
    assert skill.body == "# Steps\n\nRun it.\n"
    assert skill.body_line == 5
    assert skill.skill_md_sha256 == hashlib.sha256(data).hexdigest()
    assert skill.description.startswith("Formats release notes")


def test_frontmatter_closes_only_at_a_line_that_is_exactly_three_dashes() -> None:
    text = "---\nname: a\ndescription: a --- b\n---\nbody --- here\n---\nmore\n"
    fm, body, findings = split_frontmatter(text)
    assert fm == "name: a\ndescription: a --- b\n"
    assert body == "body --- here\n---\nmore\n"
    assert findings == []


def test_missing_frontmatter_says_what_line_one_is() -> None:
    skill = parse_skill_md(b"# Just a title\n", folder="x")
    finding = only(skill, "frontmatter-missing")
    assert finding.severity is Severity.ERROR
    assert finding.message.startswith(
        "SKILL.md must start with YAML frontmatter (---): line 1 is '# Just a title'"
    )
    assert finding.line == 1


def test_leading_blank_line_is_not_frontmatter() -> None:
    skill = parse_skill_md(b"\n---\nname: x\ndescription: y\n---\n", folder="x")
    assert "line 1 is blank" in only(skill, "frontmatter-missing").message


def test_empty_file() -> None:
    skill = parse_skill_md(b"", folder="x")
    assert "the file is empty" in only(skill, "frontmatter-missing").message


def test_unclosed_frontmatter() -> None:
    skill = parse_skill_md(b"---\nname: x\ndescription: y\n\nbody\n", folder="x")
    finding = only(skill, "frontmatter-unclosed")
    assert finding.message == (
        "SKILL.md frontmatter not properly closed with ---: add a line that is exactly '---' after the last field."
    )
    assert skill.frontmatter == {} and not skill.valid


def test_delimiter_with_trailing_spaces_is_accepted_with_info() -> None:
    skill = parse_skill_md(skill_md(GOOD).replace(b"---\n# Steps", b"---  \n# Steps"), folder="my-skill")
    assert skill.valid and skill.body.startswith("# Steps")
    finding = only(skill, "frontmatter-delimiter-spaces")
    assert finding.severity is Severity.INFO and finding.line == 4


def test_opening_line_must_be_three_dashes() -> None:
    skill = parse_skill_md(b"---yaml\nname: x\n---\n", folder="x")
    assert (
        "line 1 is '---yaml'; the opening line must be exactly '---'"
        in only(skill, "frontmatter-missing").message
    )


def test_bom_and_crlf_are_accepted_and_reported_as_info() -> None:
    data = (
        "\ufeff---\r\nname: my-skill\r\ndescription: Formats release notes for the team.\r\n---\r\nBody\r\n"
    )
    skill = parse_skill_md(data.encode(), folder="my-skill")
    assert skill.valid
    assert skill.name == "my-skill"
    assert {f.code: f.severity for f in skill.findings} == {
        "encoding-bom": Severity.INFO,
        "line-endings-crlf": Severity.INFO,
    }
    assert skill.frontmatter_text == "name: my-skill\r\ndescription: Formats release notes for the team.\r\n"
    assert skill.body == "Body\r\n"


def test_bom_is_an_error_in_strict_mode() -> None:
    data = b"\xef\xbb\xbf" + skill_md(GOOD)
    skill = parse_skill_md(data, folder="my-skill", strict=True)
    finding = only(skill, "encoding-bom")
    assert finding.severity is Severity.ERROR
    assert finding.message.startswith("SKILL.md must start with YAML frontmatter (---)")


def test_non_utf8_is_a_clear_error_with_offset_and_line() -> None:
    data = b"---\nname: my-skill\ndescription: caf\xe9 au lait\n---\n"
    skill = parse_skill_md(data, folder="my-skill")
    finding = only(skill, "encoding-not-utf8")
    assert finding.message == (
        "SKILL.md is not valid UTF-8: byte 0xe9 at offset 35 (line 3) cannot be decoded. Save the file as UTF-8."
    )
    assert finding.line == 3
    assert not skill.valid and skill.frontmatter == {}


def test_huge_skill_md_is_refused_unread() -> None:
    data = skill_md(GOOD, "x" * 2_000_000)
    skill = parse_skill_md(data, folder="my-skill")
    assert codes(skill) == ["skill-md-too-large"]
    assert (
        "SKILL.md is 2,000,105 bytes" in skill.findings[0].message
        and "1,048,576-byte limit" in skill.findings[0].message
    )
    assert skill.body == ""


def test_huge_frontmatter_is_refused_unread() -> None:
    data = skill_md(GOOD + "\nhooks: '" + "x" * 70_000 + "'")
    skill = parse_skill_md(data, folder="my-skill")
    assert codes(skill) == ["frontmatter-too-large"]
    assert "65,536-byte limit" in skill.findings[0].message


def test_limits_are_configurable() -> None:
    skill = parse_skill_md(skill_md(GOOD), folder="my-skill", limits=Limits(max_skill_md_bytes=50))
    assert codes(skill) == ["skill-md-too-large"]


def test_empty_frontmatter_reports_missing_fields() -> None:
    skill = parse_skill_md(b"---\n---\nbody\n", folder="x")
    assert codes(skill) == ["name-missing", "description-missing"]
    assert skill.frontmatter_text == ""


def test_invalid_yaml_has_file_line() -> None:
    skill = parse("name: [invalid\ndescription: broken")
    finding = only(skill, "yaml-invalid")
    assert finding.message.startswith("Invalid YAML in frontmatter: ")
    assert finding.line == 3


def test_non_mapping_frontmatter() -> None:
    skill = parse("- just\n- a\n- list")
    assert only(skill, "frontmatter-not-mapping").message.startswith(
        "SKILL.md frontmatter must be a YAML mapping"
    )


def test_parse_never_raises_on_garbage() -> None:
    for data in (b"\x00\x01\x02", b"---\n\x00\n---\n", b"---\n:\n---\n", b"---\n? [a]\n: b\n---\n", b"---"):
        skill = parse_skill_md(data, folder="x")
        assert not skill.valid
