"""Canonical source identity: every spelling of one repository is one source."""

from __future__ import annotations

import pytest

from governance.engine.identity import (
    IdentityError,
    canonical_identity,
    github_identity,
    parse_location,
    same_source,
)

GITHUB_SPELLINGS = [
    "git@github.com:o/r.git",
    "git@github.com:o/r",
    "https://github.com/o/r",
    "https://github.com/o/r/",
    "https://GitHub.com/O/R.git",
    "https://github.com/o/r.git/",
    "ssh://git@github.com/o/r.git",
    "ssh://git@github.com:22/o/r",
    "git://github.com/o/r.git",
    "http://www.github.com/o/r",
    "https://user:secret@github.com/o/r",
    "github:o/r",
    "  https://github.com/o/r  ",
]


@pytest.mark.parametrize("spelling", GITHUB_SPELLINGS)
def test_every_github_spelling_is_one_identity(spelling: str) -> None:
    location = parse_location(spelling)
    assert location.identity == "github.com/o/r"
    assert location.kind == "github" and location.github_repo == "o/r" and location.is_remote


def test_github_shorthand_as_marketplaces_write_it() -> None:
    assert github_identity("Anthropics/Skills").identity == "github.com/anthropics/skills"
    with pytest.raises(IdentityError, match="owner/repo"):
        github_identity("not a repo")


def test_other_hosts_keep_path_case_and_lower_the_host() -> None:
    assert (
        canonical_identity("https://GitLab.Example.com/Group/Sub/Repo.git")
        == "gitlab.example.com/Group/Sub/Repo"
    )
    assert canonical_identity("git@gitlab.example.com:Group/Repo.git") == "gitlab.example.com/Group/Repo"
    assert canonical_identity("https://git.example.com:8443/r") == "git.example.com:8443/r"
    assert canonical_identity("https://git.example.com:443/r") == "git.example.com/r"
    loc = parse_location("https://plugins.example.com/market.json")
    assert loc.kind == "git" and loc.host == "plugins.example.com"


def test_different_repositories_stay_different() -> None:
    assert not same_source("https://github.com/o/r", "https://github.com/o/r2")
    assert not same_source("https://github.com/o/r", "https://gitlab.com/o/r")
    assert same_source("git@github.com:O/R.git", "https://github.com/o/r/")


def test_local_paths_are_normalised_and_absolute() -> None:
    assert canonical_identity("/srv/skills/../skills/./managed/") == "local:/srv/skills/managed"
    assert canonical_identity("skills", base="/srv") == "local:/srv/skills"
    assert canonical_identity("file:///srv/skills") == "local:/srv/skills"
    assert parse_location("/srv/skills").kind == "local"
    # a relative folder shaped like owner/repo is written ./owner/repo (bare o/r is GitHub)
    assert canonical_identity("./o/r", base="/w") == "local:/w/o/r"
    assert canonical_identity("o/r/sub", base="/w") == "local:/w/o/r/sub"


def test_bare_owner_repo_is_github_as_in_policy_patterns() -> None:
    from governance.engine.sources import SourceRule, SourceRuleKind, admit_source

    assert parse_location("Evil/Skills").identity == "github.com/evil/skills"
    assert parse_location("evil/skills").github_repo == "evil/skills"
    assert same_source("evil/skills", "git@github.com:evil/skills.git")
    assert parse_location("o/..", base="/w").kind == "local"
    rule = SourceRule(effect="deny", kind=SourceRuleKind.REPOSITORY, pattern="evil/skills")
    assert not admit_source((rule,), kind="project", location="evil/skills").allowed
    assert admit_source((rule,), kind="project", location="./evil/skills").allowed


def test_mcp_servers() -> None:
    assert canonical_identity("mcp:Docs-Server") == "mcp:docs-server"


@pytest.mark.parametrize(
    ("location", "message"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("https://github.com/o/r\n", "control characters"),
        ("ext::sh -c touch% /tmp/pwned", "ext::"),
        ("ext://x", "ext::"),
        ("https://github.com/onlyowner", "owner/repository"),
        ("https://:8080/x", "no host"),
        ("https://example.com:99999/x", "invalid port"),
        ("mcp:", "server"),
    ],
)
def test_hostile_or_broken_locations_are_refused(location: str, message: str) -> None:
    with pytest.raises(IdentityError, match=message):
        parse_location(location)
