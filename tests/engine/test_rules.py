"""Every rule: the specification's limits, Claude Code's extension fields, and the lint rules."""

from __future__ import annotations

import pytest

from governance.engine.rules import normalise_paths, normalise_tools, split_tool_rules
from governance.engine.types import Severity, SourceKind

from .helpers import GOOD, codes, only, parse

DESC = "description: Formats release notes; use when the user says 'write the changelog'."


def test_good_skill_has_no_findings() -> None:
    assert codes(parse(GOOD)) == []


# --- name ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "code", "message"),
    [
        ("a" * 65, "name-too-long", f"Skill name '{'a' * 65}' exceeds 64 character limit (65 chars)"),
        ("My-Skill", "name-not-lowercase", "Skill name 'My-Skill' must be lowercase"),
        ("-my-skill", "name-hyphen-edge", "Skill name cannot start or end with a hyphen"),
        ("my-skill-", "name-hyphen-edge", "Skill name cannot start or end with a hyphen"),
        ("my--skill", "name-double-hyphen", "Skill name cannot contain consecutive hyphens"),
        (
            "my_skill",
            "name-invalid-chars",
            "Skill name 'my_skill' contains invalid characters. Only letters, digits, and hyphens are allowed. Found: '_'.",
        ),
    ],
)
def test_name_rules(name: str, code: str, message: str) -> None:
    skill = parse(f"name: {name}\n{DESC}", folder=name)
    finding = only(skill, code)
    assert finding.message == message
    assert finding.severity is Severity.ERROR and finding.line == 2 and finding.file == "SKILL.md"
    assert not skill.valid


def test_name_of_64_characters_is_fine() -> None:
    name = "a" * 64
    assert parse(f"name: {name}\n{DESC}", folder=name).valid


def test_name_must_match_folder() -> None:
    skill = parse(f"name: my-skill\n{DESC}", folder="other")
    assert (
        only(skill, "name-folder-mismatch").message
        == "Directory name 'other' must match skill name 'my-skill'"
    )


def test_name_compared_after_nfkc() -> None:
    skill = parse(f"name: cafe\u0301\n{DESC}", folder="café")
    assert "name-folder-mismatch" not in codes(skill)
    assert skill.valid


def test_missing_empty_and_non_string_name() -> None:
    assert only(parse(DESC), "name-missing").message == "Missing required field in frontmatter: name"
    assert only(parse(f'name: ""\n{DESC}'), "name-empty").message == "Field 'name' must be a non-empty string"
    assert only(parse(f"name:\n{DESC}"), "name-empty").severity is Severity.ERROR
    finding = only(parse(f"name: [a, b]\n{DESC}"), "field-type")
    assert (
        finding.message == "Field 'name' must be a string, not a list." and finding.severity is Severity.ERROR
    )


def test_numeric_name_is_text_with_a_warning() -> None:
    skill = parse(f"name: 2024\n{DESC}", folder="2024")
    assert skill.name == "2024" and skill.valid
    assert only(skill, "value-not-string").severity is Severity.WARNING


def test_look_alike_name_is_flagged() -> None:
    name = "security-revi\u0435w"  # Cyrillic е
    skill = parse(f"name: {name}\n{DESC}", folder=name)
    finding = only(skill, "name-non-ascii")
    assert finding.severity is Severity.WARNING
    assert "It mixes scripts (CYRILLIC, LATIN)." in finding.message
    assert skill.valid


def test_reserved_words_in_name() -> None:
    skill = parse(f"name: claude-helper\n{DESC}", folder="claude-helper")
    assert only(skill, "name-reserved-word").message.startswith(
        "Skill name 'claude-helper' contains the reserved word 'claude'"
    )
    assert "name-reserved-word" not in codes(
        parse("name: my-skill\ndescription: Helps Claude Code write release notes.")
    )


# --- description ------------------------------------------------------------------------


def test_description_limits() -> None:
    assert parse("name: my-skill\ndescription: " + "x" * 1024).valid
    skill = parse("name: my-skill\ndescription: " + "x" * 1025)
    assert (
        only(skill, "description-too-long").message == "Description exceeds 1024 character limit (1025 chars)"
    )
    assert only(parse("name: my-skill"), "description-missing").message == (
        "Missing required field in frontmatter: description"
    )
    assert only(parse("name: my-skill\ndescription: '  '"), "description-empty").message == (
        "Field 'description' must be a non-empty string"
    )


def test_description_lint() -> None:
    assert (
        only(parse("name: my-skill\ndescription: Does things"), "description-short").severity is Severity.INFO
    )
    over = only(parse("name: my-skill\ndescription: " + "y" * 300), "description-over-250")
    assert over.message.startswith("Description is 300 characters: older Claude Code versions cut it at 250")
    angle = only(
        parse("name: my-skill\ndescription: Renders <div> blocks into release notes"),
        "description-angle-brackets",
    )
    assert angle.severity is Severity.WARNING


def test_listing_cap_counts_description_and_when_to_use() -> None:
    skill = parse("name: my-skill\ndescription: " + "d" * 1000 + "\nwhen_to_use: " + "w" * 600)
    finding = only(skill, "listing-over-cap")
    assert finding.message.startswith(
        "The description + when_to_use is 1600 characters: Claude Code's listing keeps 1536"
    )
    assert "the last 64 never reach the model" in finding.message


# --- other specification fields -----------------------------------------------------------


def test_compatibility() -> None:
    assert parse(GOOD + "\ncompatibility: Requires Python 3.11+").valid
    assert only(parse(GOOD + "\ncompatibility: " + "c" * 501), "compatibility-too-long").message == (
        "Compatibility exceeds 500 character limit (501 chars)"
    )
    assert only(parse(GOOD + "\ncompatibility: ''"), "compatibility-empty").severity is Severity.ERROR


def test_metadata_string_to_string() -> None:
    skill = parse(GOOD + "\nmetadata:\n  author: Me\n  version: 1.0\n  beta: yes")
    assert skill.frontmatter["metadata"] == {"author": "Me", "version": "1.0", "beta": "yes"}
    assert codes(skill).count("value-not-string") == 2 and skill.valid
    assert only(parse(GOOD + "\nmetadata: text"), "metadata-not-mapping").severity is Severity.ERROR
    nested = only(parse(GOOD + "\nmetadata:\n  a: [1]"), "metadata-value-not-string")
    assert nested.message.startswith("metadata.a must be a string, not a list")


def test_license() -> None:
    assert codes(parse(GOOD + "\nlicense: MIT")) == []
    for text in ("Proprietary", "Copyright Acme. All rights reserved."):
        assert only(parse(GOOD + f"\nlicense: {text}"), "license-proprietary").severity is Severity.INFO


# --- typed values and unknown fields ---------------------------------------------------------


def test_version_number_is_stored_as_written_text() -> None:
    skill = parse(GOOD + "\nversion: 1.10")
    assert skill.frontmatter["version"] == "1.10"
    finding = only(skill, "value-not-string")
    assert finding.message == (
        "'version' is written as 1.10, which YAML reads as a number: quote it (version: \"1.10\") so every "
        "reader sees the same text. Stored as the text '1.10'."
    )
    assert finding.line == 4


def test_dates_stay_text() -> None:
    skill = parse(GOOD + "\nversion: 2024-05-01")
    assert skill.frontmatter["version"] == "2024-05-01"
    assert "which YAML reads as a date" in only(skill, "value-not-string").message


def test_unknown_field_is_a_warning_with_a_suggestion_and_an_error_in_strict() -> None:
    skill = parse(GOOD + "\nallowed_tools: Read")
    finding = only(skill, "field-unknown")
    assert finding.severity is Severity.WARNING and finding.line == 4
    assert finding.message.endswith("Did you mean 'allowed-tools'?")
    assert skill.valid
    assert only(parse(GOOD + "\nfoo: bar", strict=True), "field-unknown").severity is Severity.ERROR


def test_legacy_fields_are_info() -> None:
    skill = parse(GOOD + "\nwhenToUse: on release\nmode: delegate")
    assert [f.message for f in skill.findings if f.code == "field-legacy"] == [
        "'whenToUse' is an older spelling; current agents read when_to_use.",
        "'mode' is an older spelling; current agents read context.",
    ]


# --- allowed-tools ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected", "form"),
    [
        ("Bash(git:*) Read", ["Bash(git:*)", "Read"], "space"),
        ("Read, Write, Bash(git add:*)", ["Read", "Write", "Bash(git add:*)"], "comma"),
        ("Bash(git status, git diff) Grep", ["Bash(git status, git diff)", "Grep"], "space"),
    ],
)
def test_allowed_tools_spellings_normalise_to_one_list(value: str, expected: list[str], form: str) -> None:
    assert normalise_tools(value) == (expected, form)
    assert parse(GOOD + f"\nallowed-tools: {value}").allowed_tools == expected


def test_allowed_tools_yaml_list() -> None:
    skill = parse(GOOD + "\nallowed-tools:\n  - Read\n  - Bash(gh pr view:*)")
    assert skill.allowed_tools == ["Read", "Bash(gh pr view:*)"]
    assert only(skill, "allowed-tools-format").severity is Severity.INFO


def test_split_tool_rules_keeps_parentheses_together() -> None:
    assert split_tool_rules("A(x y, z),B  C") == (["A(x y, z)", "B", "C"], True)


def test_unscoped_bash() -> None:
    skill = parse(GOOD + "\nallowed-tools: Bash Read", source=SourceKind.PROJECT)
    finding = only(skill, "allowed-tools-unscoped-bash")
    assert finding.message.startswith("'allowed-tools' grants 'Bash' without a command pattern")
    assert "does not gate a repository skill's allowed-tools on workspace trust" in finding.message
    managed = only(
        parse(GOOD + "\nallowed-tools: Bash(*)", source=SourceKind.MANAGED), "allowed-tools-unscoped-bash"
    )
    assert "workspace trust" not in managed.message
    assert "allowed-tools-unscoped-bash" not in codes(parse(GOOD + "\nallowed-tools: Bash(git diff:*)"))


def test_allowed_tools_syntax_and_type() -> None:
    assert (
        only(parse(GOOD + "\nallowed-tools: Bash(git"), "allowed-tools-syntax").severity is Severity.WARNING
    )
    wrong = only(parse(GOOD + "\nallowed-tools: {a: b}"), "field-type")
    assert wrong.severity is Severity.ERROR and "not a mapping" in wrong.message


def test_disallowed_tools_normalised() -> None:
    skill = parse(GOOD + "\ndisallowed-tools: [Write, Edit]")
    assert skill.disallowed_tools == ["Write", "Edit"]


# --- Claude Code extensions -------------------------------------------------------------------


def test_known_extension_fields_are_accepted() -> None:
    skill = parse(
        GOOD + '\nwhen_to_use: when releasing\nargument-hint: "[version]"\narguments: [version]\n'
        "disable-model-invocation: true\nuser-invocable: true\nmodel: sonnet\neffort: high\ncontext: fork\n"
        "agent: general-purpose\nbackground: false\npaths: ['src/**/*.py', 'docs/*.md']\nshell: bash\n"
        "version: '2.0'\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n"
        "          command: ./check.sh\n          timeout: 30"
    )
    assert codes(skill) == [] and skill.valid


def test_booleans() -> None:
    quoted = only(parse(GOOD + "\ndisable-model-invocation: 'true'"), "field-type")
    assert quoted.message == (
        "'disable-model-invocation' must be true or false, not the text 'true': agents ignore it (remove the quotes)."
    )
    yes = only(parse(GOOD + "\nuser-invocable: yes"), "value-ambiguous-bool")
    assert "write user-invocable: true" in yes.message


def test_enumerations() -> None:
    assert only(parse(GOOD + "\neffort: extreme"), "field-value-invalid").message == (
        "'effort: extreme' is not a value agents know (low, medium, high, xhigh, max): it is ignored."
    )
    assert (
        "leave context out for inline"
        in only(parse(GOOD + "\ncontext: inline"), "field-value-invalid").message
    )
    assert only(parse(GOOD + "\nshell: zsh"), "field-value-invalid").severity is Severity.WARNING


def test_argument_hint_as_list_is_stored_as_text() -> None:
    skill = parse(GOOD + "\nargument-hint: [issue-number]")
    finding = only(skill, "argument-hint-list")
    assert (
        finding.severity is Severity.INFO and 'Quote it (argument-hint: "[issue-number]")' in finding.message
    )
    assert skill.frontmatter["argument-hint"] == "[issue-number]"
    assert only(parse(GOOD + "\nargument-hint: {a: b}"), "field-type").severity is Severity.WARNING


def test_paths() -> None:
    assert normalise_paths("src/**, docs/*.md") == ["src/**", "docs/*.md"]
    assert only(parse(GOOD + "\npaths: ['/etc/*']"), "paths-invalid").message.startswith(
        "'paths' glob '/etc/*' is absolute"
    )
    assert only(parse(GOOD + "\npaths: ['../x/*']"), "paths-invalid").severity is Severity.WARNING
    assert "'paths' must be a glob" in only(parse(GOOD + "\npaths: {a: b}"), "paths-invalid").message
    assert "'paths' is empty" in only(parse(GOOD + "\npaths: []"), "paths-invalid").message


def test_hooks_shape() -> None:
    assert "must be a mapping" in only(parse(GOOD + "\nhooks: [a]"), "hooks-shape").message
    missing = only(parse(GOOD + "\nhooks:\n  Stop:\n    - matcher: x"), "hooks-shape")
    assert "needs a 'hooks' list" in missing.message
    no_cmd = only(parse(GOOD + "\nhooks:\n  Stop:\n    - hooks:\n        - type: command"), "hooks-shape")
    assert "needs a 'command' string" in no_cmd.message
    event = only(parse(GOOD + "\nhooks:\n  PreToolUser:\n    - hooks: []"), "hooks-unknown-event")
    assert event.message.endswith("Did you mean 'PreToolUse'?")


def test_unreachable_skill() -> None:
    skill = parse(GOOD + "\ndisable-model-invocation: true\nuser-invocable: false")
    assert only(skill, "skill-unreachable").severity is Severity.WARNING


def test_disable_model_invocation_hint_is_info_only() -> None:
    skill = parse(
        "name: deploy-prod\ndescription: Deploys the service to production with checks.", folder="deploy-prod"
    )
    finding = only(skill, "hint-disable-model-invocation")
    assert finding.severity is Severity.INFO and "A hint, not a rule." in finding.message
    assert "('deploy')" in finding.message
    assert skill.valid
    quiet = parse(
        "name: deploy-prod\ndescription: Deploys the service to production.\ndisable-model-invocation: true",
        folder="deploy-prod",
    )
    assert "hint-disable-model-invocation" not in codes(quiet)


@pytest.mark.parametrize(
    ("name", "hinted"),
    [
        ("send-message", True),
        ("run-full-release", True),
        ("pre-ship-review", False),
        ("release-notes", False),
        ("email-triage", False),
        ("pdf", False),
    ],
)
def test_disable_model_invocation_hint_words(name: str, hinted: bool) -> None:
    skill = parse(
        f"name: {name}\ndescription: Does the thing the name says, carefully and well.", folder=name
    )
    assert ("hint-disable-model-invocation" in codes(skill)) is hinted


def test_no_rule_guesses_fork_constraints() -> None:
    body = "# Rules\n\nAlways use tabs. Never commit to main.\n"
    skill = parse(GOOD + "\ncontext: fork", body)
    assert codes(skill) == []


@pytest.mark.parametrize(
    ("name", "code", "fragment"),
    [
        ("../../etc", "name-invalid-chars", "Found: '.', '/'."),
        ("deploy\u202eyolped", "name-invalid-chars", "'\\u202e'"),
        ("de\u200dploy", "name-invalid-chars", "'\\u200d'"),
        ("deploy prod", "name-invalid-chars", "Found: ' '."),
        ("<script>", "name-invalid-chars", "Found: '<', '>'."),
    ],
)
def test_hostile_names_are_refused_with_the_characters_named(name: str, code: str, fragment: str) -> None:
    skill = parse(f'name: "{name}"\n{DESC}', folder="deploy")
    finding = only(skill, code)
    assert fragment in finding.message, finding.message
    assert not skill.valid


def test_fullwidth_name_equals_folder_after_nfkc_but_is_flagged() -> None:
    skill = parse(f"name: ｄｅｐｌｏｙ\n{DESC}", folder="deploy")
    assert "name-folder-mismatch" not in codes(skill)
    finding = only(skill, "name-non-ascii")
    assert (
        "It is not in NFKC form: checkers that normalise read 'deploy', agents read it as written."
        in finding.message
    )
    assert "ｄ U+FF44" in finding.message
    assert skill.name == "ｄｅｐｌｏｙ"  # stored as declared: that is what agents match


def test_control_characters_in_yaml_are_refused() -> None:
    skill = parse(f'name: "a\x00b"\n{DESC}')
    assert only(skill, "yaml-invalid").message.startswith("Invalid YAML in frontmatter:")


def test_terminal_escapes_in_names_and_keys_are_shown_not_obeyed() -> None:
    skill = parse(
        'name: "\\e[31mred"\ndescription: Formats release notes for the whole team.\n"\\e[2J": x',
        folder="red",
    )
    messages = " ".join(f.message for f in skill.findings)
    assert "\x1b" not in messages
    assert "Skill name '\\u001b[31mred' contains invalid characters." in messages
    assert "Unknown field '\\u001b[2J' in frontmatter" in messages
    assert skill.name == "\x1b[31mred"  # the data stays as declared; only messages are escaped


def test_boolean_advice_fits_the_value() -> None:
    maybe = only(parse(GOOD + "\nbackground: maybe"), "field-type")
    assert (
        maybe.message
        == "'background' must be true or false, not the text 'maybe': agents ignore it; write background: true or background: false."
    )
    empty = only(parse(GOOD + "\nuser-invocable:"), "field-type")
    assert "not an empty value" in empty.message
