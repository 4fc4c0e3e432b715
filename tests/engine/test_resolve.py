"""Per-agent resolution, shadow chains, security findings and look-alike names (no database)."""

from __future__ import annotations

import pytest

from governance.engine.resolve import (
    AGENTS,
    Candidate,
    Status,
    activate,
    check_statuses,
    conditional_matches,
    resolve,
    skeleton,
)
from governance.engine.types import Finding, ParsedSkill, Severity, SourceKind

M, U, P, B, PL = (
    SourceKind.MANAGED,
    SourceKind.USER,
    SourceKind.PROJECT,
    SourceKind.BUNDLED,
    SourceKind.PLUGIN,
)


def cand(key: str, name: str, source: SourceKind, **kw: object) -> Candidate:
    return Candidate(key=key, name=name, source=source, description=f"{name} from {source}", **kw)  # type: ignore[arg-type]


def statuses(agent: str, *cands: Candidate) -> dict[str, tuple[str, str | None]]:
    result = resolve(cands, agent)
    return {r.candidate.key: (r.status.value, r.shadowed_by) for r in result.skills}


def test_claude_code_managed_beats_user_beats_project_and_all_beat_bundled() -> None:
    got = statuses(
        "claude-code",
        cand("m", "deploy", M),
        cand("u", "deploy", U),
        cand("p", "deploy", P),
        cand("b", "deploy", B),
    )
    assert got == {
        "m": ("active", None),
        "u": ("shadowed", "deploy@managed"),
        "p": ("shadowed", "deploy@managed"),
        "b": ("shadowed", "deploy@managed"),
    }
    got = statuses("claude-code", cand("u", "deploy", U), cand("p", "deploy", P), cand("b", "deploy", B))
    assert got["u"] == ("active", None)
    assert got["p"] == ("shadowed", "deploy@user")
    assert got["b"] == ("shadowed", "deploy@user")


def test_sid_code_nearest_wins_with_managed_on_top() -> None:
    got = statuses(
        "sid-code", cand("u", "lint", U), cand("p", "lint", P), cand("b", "lint", SourceKind.BUILTIN)
    )
    assert got["p"] == ("active", None)
    assert got["u"] == ("shadowed", "lint@project")
    assert statuses("sid-code", cand("m", "lint", M), cand("p", "lint", P))["m"] == ("active", None)


def test_codex_lists_every_copy() -> None:
    result = resolve([cand("u", "lint", U), cand("p", "lint", P)], "codex")
    assert {r.status for r in result.skills} == {Status.ACTIVE}
    assert result.groups and result.groups[0].winner is None
    assert {f.code for fs in result.findings.values() for f in fs} == {"duplicate-listed"}


def test_opencode_project_copy_wins() -> None:
    got = statuses("opencode", cand("u", "lint", U), cand("p", "lint", P))
    assert got["p"] == ("active", None)
    assert AGENTS["opencode"].assumption


def test_plugin_skills_never_collide_and_nested_copies_are_kept_as_path_name() -> None:
    result = resolve(
        [
            cand("root", "deploy", P, location=".claude/skills/deploy"),
            cand("web", "deploy", P, location="apps/web/.claude/skills/deploy"),
            cand("plug", "deploy", PL, plugin="ops"),
        ],
        "claude-code",
    )
    names = {r.candidate.key: (r.listed_name, r.status.value) for r in result.skills}
    assert names == {
        "root": ("deploy", "active"),
        "web": ("apps/web:deploy", "active"),
        "plug": ("ops:deploy", "active"),
    }
    assert result.groups == []


def test_a_skill_beats_a_same_named_legacy_command_even_from_a_weaker_source() -> None:
    got = statuses(
        "claude-code",
        cand("cmd", "review", U, is_command=True, location=".claude/commands/review"),
        cand("skill", "review", P, location=".claude/skills/review"),
    )
    assert got["skill"] == ("active", None)
    assert got["cmd"] == ("shadowed", "review@project")
    reason = next(
        r.reason
        for r in resolve(
            [cand("cmd", "review", U, is_command=True), cand("skill", "review", P)], "claude-code"
        ).skills
        if r.candidate.key == "cmd"
    )
    assert "legacy command" in reason


def test_project_copy_shadowing_managed_security_review_is_a_security_finding_under_nearest_wins() -> None:
    cands = [cand("m", "security-review", M), cand("p", "security-review", P)]
    nearest = resolve(cands, "opencode")
    assert nearest.by_key()["p"].status is Status.ACTIVE
    codes = [f for f in nearest.findings["p"] if f.code == "shadows-higher-trust"]
    assert codes and codes[0].severity is Severity.ERROR
    assert nearest.groups[0].security is True

    trust_first = resolve(cands, "trust-first")
    assert trust_first.by_key()["m"].status is Status.ACTIVE
    assert trust_first.by_key()["p"].shadowed_by == "security-review@managed"
    attempt = trust_first.findings["p"]
    assert [f.code for f in attempt] == ["shadow-attempt"]
    assert trust_first.security_findings


def test_managed_overriding_bundled_is_governance_not_an_attack() -> None:
    result = resolve([cand("m", "commit", M), cand("b", "commit", B)], "claude-code")
    assert result.by_key()["m"].status is Status.ACTIVE
    assert not result.security_findings
    assert result.groups[0].security is False


def test_hidden_conditional_and_rejected_statuses() -> None:
    result = resolve(
        [
            cand("h", "release", P, disable_model_invocation=True),
            cand("c", "react-style", P, paths=("src/**/*.tsx",)),
            cand("r", "broken", P, valid=False),
            cand("d", "denied", P, rejected_reason="denied by policy: hooks"),
        ],
        "trust-first",
    )
    got = {r.candidate.key: r.status for r in result.skills}
    assert got == {"h": Status.HIDDEN, "c": Status.CONDITIONAL, "r": Status.REJECTED, "d": Status.REJECTED}
    assert result.by_key()["d"].reason == "denied by policy: hooks"


def test_rejected_copy_does_not_shadow() -> None:
    got = statuses("claude-code", cand("m", "deploy", M, valid=False), cand("p", "deploy", P))
    assert got == {"m": ("rejected", None), "p": ("active", None)}


def test_resolution_is_independent_of_input_order() -> None:
    cands = [cand("a", "x", U), cand("b", "x", P), cand("c", "x", M)]
    assert statuses("sid-code", *cands) == statuses("sid-code", *reversed(cands))


@pytest.mark.parametrize(
    ("impostor", "kind"),
    [
        ("security-reviеw", "Cyrillic е"),
        ("ｓｅｃｕｒｉｔｙ-ｒｅｖｉｅｗ", "fullwidth"),
        ("security–review", "en dash"),
        ("security‐review", "Unicode hyphen"),
        ("security-rev\u200biew", "zero-width space"),
        ("SECURITY-REVIEW", "case"),
    ],
)
def test_look_alike_names_share_a_skeleton_and_are_flagged(impostor: str, kind: str) -> None:
    assert skeleton(impostor) == skeleton("security-review"), kind
    result = resolve([cand("m", "security-review", M), cand("p", impostor, P)], "claude-code")
    # different strings: no shadowing, both active ...
    assert {r.status for r in result.skills} == {Status.ACTIVE}
    # ... but grouped as one look-alike name, flagged on both copies
    assert len(result.look_alikes) == 1
    assert {f.code for f in result.findings["p"]} == {"look-alike-name"}
    assert {f.code for f in result.findings["m"]} == {"look-alike-name"}


def test_distinct_names_are_not_look_alikes() -> None:
    assert skeleton("deploy") != skeleton("deploy-web")
    assert resolve([cand("a", "deploy", P), cand("b", "review", P)]).look_alikes == []


def test_conditional_activation_uses_gitignore_style_globs() -> None:
    assert conditional_matches(["src/**/*.tsx"], ["src/app/page.tsx", "README.md"]) == ["src/app/page.tsx"]
    assert conditional_matches(["*.sql"], ["db/migrations/001.sql"]) == ["db/migrations/001.sql"]
    result = resolve([cand("c", "sql-style", P, paths=("*.sql",)), cand("a", "always", P)])
    assert activate(result, ["db/x.sql"]) == {"c": ["db/x.sql"]}
    assert activate(result, ["docs/readme.md"]) == {}


def _parsed(name: str, source: SourceKind, path: str, *, valid: bool = True) -> ParsedSkill:
    findings = [] if valid else [Finding("bad", Severity.ERROR, "bad")]
    return ParsedSkill(
        name=name,
        folder=name,
        path=path,
        source=source,
        frontmatter={"name": name, "description": "d"},
        frontmatter_text="",
        body="",
        skill_md_sha256="0" * 64,
        findings=findings,
    )


def test_check_statuses_for_the_cli() -> None:
    parsed = [
        _parsed("deploy", SourceKind.MANAGED, "deploy"),
        _parsed("deploy", SourceKind.PROJECT, ".claude/skills/deploy"),
        _parsed("broken", SourceKind.PROJECT, ".claude/skills/broken", valid=False),
    ]
    got = check_statuses(parsed, "claude-code")
    assert (got[0].status, got[0].shadowed_by) == ("active", None)
    assert (got[1].status, got[1].shadowed_by) == ("shadowed", "deploy@managed")
    assert got[2].status == "rejected"


def test_unknown_agent_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown agent 'cursor'"):
        resolve([], "cursor")
