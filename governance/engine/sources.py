"""Source control (DOMAIN §6): allow and deny lists of repositories, marketplaces and hosts.

Plain Python. Rules compare *canonical* identities, so every spelling of one repository
(``git@github.com:o/r.git``, ``https://GitHub.com/O/R/``...) matches the same rule; deny wins.
"""

from __future__ import annotations

import enum
import fnmatch
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import urlsplit

try:  # the ingest concern owns canonical identities; this module follows it once it lands
    from governance.engine.identity import (  # type: ignore[import-not-found,unused-ignore]
        canonical_source_identity as _canonical_from_ingest,
    )
except ImportError:  # pragma: no cover - exercised only before identity.py exists
    _canonical_from_ingest = None

_SCP_RE = re.compile(r"^(?:(?P<user>[\w.\-]+)@)?(?P<host>[\w.\-]+):(?P<path>(?!//)[^\\]+)$")
_SHORTHAND_RE = re.compile(r"^[A-Za-z0-9][\w.\-]*/[\w.\-]+$")


def _fallback_canonical(spec: str) -> str:
    text = spec.strip()
    if _SHORTHAND_RE.match(text) and not text.startswith((".", "/")):
        host, path = "github.com", text
    elif "://" in text:
        parts = urlsplit(text)
        host, path = (parts.hostname or "").lower(), parts.path
    else:
        match = _SCP_RE.match(text)
        if match is None:
            return text.rstrip("/") or text  # a local path: kept as given
        host, path = match.group("host").lower(), match.group("path")
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    return f"{host}/{path.strip('/').lower()}".rstrip("/")


def canonical_identity(spec: str) -> str:
    """One identity for every spelling of one source."""
    if not spec:
        return ""
    if _canonical_from_ingest is not None:
        return str(_canonical_from_ingest(spec))
    return _fallback_canonical(spec)


def source_host(spec: str) -> str:
    """The host of a remote spec (``github.com`` for ``git@github.com:o/r``), "" for a local path."""
    text = spec.strip()
    if "://" in text:
        return (urlsplit(text).hostname or "").lower()
    match = _SCP_RE.match(text)
    if match is not None:
        return match.group("host").lower()
    if _SHORTHAND_RE.match(text) and not text.startswith((".", "/")):
        return "github.com"
    return ""


def is_remote(spec: str) -> bool:
    return bool(source_host(spec))


def github_repo(spec: str) -> str | None:
    """``owner/repo`` with the spelling the admin wrote (Claude Code compares it case-sensitively)."""
    text = spec.strip()
    if _SHORTHAND_RE.match(text) and not text.startswith((".", "/")):
        path = text
    elif source_host(text) == "github.com":
        path = urlsplit(text).path if "://" in text else text.split(":", 1)[1]
    else:
        return None
    parts = [p for p in PurePosixPath(path.strip("/")).parts if p]
    if len(parts) != 2:
        return None
    owner, repo = parts
    if repo.endswith(".git"):
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
        return fnmatch.fnmatchcase(canonical_identity(spec), pattern.strip().lower())
    return canonical_identity(pattern) == canonical_identity(spec)


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
    if kind is SourceRuleKind.REPOSITORY and not is_remote(text) and "*" not in text:
        return "give a repository URL (https://host/owner/repo, git@host:owner/repo) or owner/repo"
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
    if not is_remote(location):
        return AdmissionResult(True, "a local path is not a remote source; no deny rule matches it")
    if allows:
        return AdmissionResult(False, "not on the source allowlist of the published policy")
    return AdmissionResult(True, "no source rule restricts it")
