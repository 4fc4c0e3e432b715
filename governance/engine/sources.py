"""Source control (DOMAIN §6): allow and deny lists of repositories, marketplaces and hosts.

Plain Python. Rules compare *canonical* identities, so every spelling of one repository
(``git@github.com:o/r.git``, ``https://GitHub.com/O/R/``...) matches the same rule; deny wins.
"""

from __future__ import annotations

import enum
import fnmatch
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath
from urllib.parse import urlsplit

from governance.engine.identity import IdentityError, SourceLocation, parse_location

# ``owner/repo`` written in a *policy rule* means GitHub (a location spelled so is a local path).
_SHORTHAND_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$")


def pattern_spec(pattern: str) -> str:
    """A rule pattern as a location: ``acme/skills`` is read as ``github:acme/skills``."""
    text = pattern.strip()
    return f"github:{text}" if _SHORTHAND_RE.match(text) else text


@lru_cache(maxsize=65536)
def _location(spec: str) -> SourceLocation | None:
    try:
        return parse_location(spec)
    except IdentityError:
        return None


@lru_cache(maxsize=65536)
def canonical_identity(spec: str) -> str:
    """One identity for every spelling of one source (``governance.engine.identity``).

    Cached: decisions compare every rule's pattern with every skill's source, and a catalog
    has few distinct sources.
    """
    found = _location(spec) if spec else None
    return found.identity if found is not None else spec.strip()


def source_host(spec: str) -> str:
    """The host of a remote spec (``github.com`` for ``git@github.com:o/r``), "" for a local path."""
    found = _location(spec)
    return found.host if found is not None and found.is_remote else ""


def is_remote(spec: str) -> bool:
    return bool(source_host(spec))


def is_mcp(spec: str) -> bool:
    found = _location(spec)
    return found is not None and found.kind == "mcp"


def github_repo(spec: str) -> str | None:
    """``owner/repo`` with the spelling the admin wrote (Claude Code compares it case-sensitively)."""
    text = pattern_spec(spec)
    found = _location(text)
    if found is None or found.kind != "github":
        return None
    if text.startswith("github:"):
        path = text[len("github:") :]
    elif "://" in text:
        path = urlsplit(text).path
    else:
        path = text.split(":", 1)[1]
    parts = [p for p in PurePosixPath(path.strip("/")).parts if p]
    if len(parts) < 2:
        return None
    owner, repo = parts[0], parts[1]
    if repo.lower().endswith(".git"):
        repo = repo[:-4]
    return f"{owner}/{repo}"


class SourceRuleKind(enum.StrEnum):
    REPOSITORY = "repository"
    MARKETPLACE = "marketplace"
    HOST = "host"


@dataclass(frozen=True, slots=True)
class SourceRule:
    effect: str  # "allow" | "deny"
    kind: SourceRuleKind
    pattern: str
    note: str = ""

    @property
    def label(self) -> str:
        return f"{self.effect} {self.kind.value} {self.pattern}"

    def matches(self, *, location: str, marketplace: str = "") -> bool:
        if self.kind is SourceRuleKind.HOST:
            host = source_host(location)
            return bool(host) and re.fullmatch(self.pattern, host, flags=re.IGNORECASE) is not None
        if self.kind is SourceRuleKind.MARKETPLACE:
            if marketplace and (marketplace == self.pattern or _identity_matches(self.pattern, marketplace)):
                return True
            return bool(marketplace) and _identity_matches(self.pattern, location)
        return _identity_matches(self.pattern, location)


def _identity_matches(pattern: str, spec: str) -> bool:
    if not pattern or not spec:
        return False
    if any(ch in pattern for ch in "*?["):
        return fnmatch.fnmatch(canonical_identity(spec).lower(), pattern.strip().lower())
    return canonical_identity(pattern_spec(pattern)) == canonical_identity(spec)


def validate_source_pattern(kind: SourceRuleKind, pattern: str) -> str | None:
    """An error message for a bad pattern, or None."""
    text = pattern.strip()
    if not text:
        return "a pattern is required"
    if kind is SourceRuleKind.HOST:
        try:
            re.compile(text)
        except re.error as exc:
            return f"not a valid regular expression: {exc}"
        return None
    if (
        kind is SourceRuleKind.REPOSITORY
        and not (is_remote(pattern_spec(text)) or is_mcp(text))
        and "*" not in text
    ):
        return (
            "give a repository URL (https://host/owner/repo, git@host:owner/repo), owner/repo or mcp:server"
        )
    return None


@dataclass(frozen=True, slots=True)
class AdmissionResult:
    allowed: bool
    reason: str
    rule: str = ""


def admit_source(
    rules: tuple[SourceRule, ...] | list[SourceRule], *, kind: str, location: str, marketplace: str = ""
) -> AdmissionResult:
    """Decide before anything is fetched: deny wins; a non-empty allowlist admits only its entries.

    ``kind`` is the kind of source being ingested; marketplace rules also apply when the
    location is itself a marketplace (kind ``marketplace`` or ``plugin``).
    """
    if kind in {"marketplace", "plugin"} and not marketplace:
        marketplace = location
    for rule in rules:
        if rule.effect == "deny" and rule.matches(location=location, marketplace=marketplace):
            suffix = f" ({rule.note})" if rule.note else ""
            return AdmissionResult(False, f"denied by source rule '{rule.label}'{suffix}", rule.label)
    allows = [r for r in rules if r.effect == "allow"]
    for rule in allows:
        if rule.matches(location=location, marketplace=marketplace):
            return AdmissionResult(True, f"allowed by source rule '{rule.label}'", rule.label)
    if not (is_remote(location) or is_mcp(location)):
        return AdmissionResult(True, "a local path is not a remote source; no deny rule matches it")
    if allows:
        return AdmissionResult(False, "not on the source allowlist of the published policy")
    return AdmissionResult(True, "no source rule restricts it")
