"""Source control on canonical identities: every spelling matches, deny wins, allowlist admits only."""

from __future__ import annotations

import pytest

from governance.engine.sources import (
    SourceRule,
    SourceRuleKind,
    admit_source,
    canonical_identity,
    github_repo,
    source_host,
    validate_source_pattern,
)

SPELLINGS = [
    "git@github.com:evil/skills.git",
    "https://github.com/evil/skills",
    "https://github.com/evil/skills/",
    "https://GitHub.com/Evil/Skills.git",
    "ssh://git@github.com/evil/skills.git",
    "github:evil/skills",
]

DENY = SourceRule("deny", SourceRuleKind.REPOSITORY, "https://github.com/evil/skills")


def test_spellings_share_one_identity() -> None:
    assert len({canonical_identity(s) for s in SPELLINGS}) == 1


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_spelling_of_a_denied_repository_is_refused(spelling: str) -> None:
    result = admit_source([DENY], kind="git", location=spelling)
    assert not result.allowed
    assert "deny repository" in result.reason


@pytest.mark.parametrize("rule_spelling", [*SPELLINGS, "evil/skills", "Evil/Skills"])
def test_rule_written_in_any_spelling_denies(rule_spelling: str) -> None:
    rule = SourceRule("deny", SourceRuleKind.REPOSITORY, rule_spelling)
    assert not admit_source([rule], kind="git", location="https://github.com/evil/skills").allowed


def test_deny_wins_over_allow() -> None:
    allow = SourceRule("allow", SourceRuleKind.HOST, r"github\.com")
    assert not admit_source([allow, DENY], kind="git", location="github:evil/skills").allowed
    assert admit_source([allow, DENY], kind="git", location="github:good/skills").allowed


def test_allowlist_admits_only_its_entries() -> None:
    allow = SourceRule("allow", SourceRuleKind.REPOSITORY, "github.com/acme/*")
    assert admit_source([allow], kind="git", location="git@github.com:Acme/tools.git").allowed
    refused = admit_source([allow], kind="git", location="https://gitlab.com/acme/tools")
    assert not refused.allowed and "allowlist" in refused.reason


def test_local_paths_are_not_remote_sources() -> None:
    allow = SourceRule("allow", SourceRuleKind.REPOSITORY, "acme/tools")
    assert admit_source([allow], kind="folder", location="/srv/checkouts/app").allowed


def test_host_pattern_and_marketplace_rules() -> None:
    host = SourceRule("deny", SourceRuleKind.HOST, r".*\.evil\.example")
    assert not admit_source([host], kind="git", location="https://git.evil.example/a/b").allowed
    market = SourceRule("deny", SourceRuleKind.MARKETPLACE, "shady-market")
    assert not admit_source(
        [market], kind="marketplace", location="github:x/y", marketplace="shady-market"
    ).allowed
    assert admit_source([market], kind="git", location="github:x/y").allowed
    by_repo = SourceRule("deny", SourceRuleKind.MARKETPLACE, "https://github.com/x/y")
    assert not admit_source([by_repo], kind="marketplace", location="git@github.com:X/Y.git").allowed


def test_host_and_github_repo_keep_the_admins_spelling() -> None:
    assert source_host("git@GitHub.com:o/r.git") == "github.com"
    assert source_host("./local/path") == ""
    assert github_repo("https://github.com/Acme/Tools.git") == "Acme/Tools"
    assert github_repo("git@github.com:Acme/Tools.git") == "Acme/Tools"
    assert github_repo("https://gitlab.com/a/b") is None


def test_mcp_servers_are_remote_sources() -> None:
    deny = SourceRule("deny", SourceRuleKind.REPOSITORY, "mcp:Shady-Server")
    assert not admit_source([deny], kind="mcp", location="mcp:shady-server").allowed
    allow = SourceRule("allow", SourceRuleKind.REPOSITORY, "github.com/acme/*")
    assert not admit_source([allow], kind="mcp", location="mcp:other").allowed
    assert validate_source_pattern(SourceRuleKind.REPOSITORY, "mcp:server") is None
    assert validate_source_pattern(SourceRuleKind.REPOSITORY, "./local") is not None
