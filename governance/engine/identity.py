"""Canonical source identity: one repository, one identity, whatever the spelling.

``git@github.com:o/r.git``, ``https://github.com/o/r``, ``https://github.com/o/r/`` and
``https://GitHub.com/O/R.git`` are the same repository (DOMAIN §6). Policy rules and stored
sources compare these identities, never the spellings.

Identities:

- GitHub: ``github.com/owner/repo``, all lower case (GitHub names are case-insensitive).
- Other git hosts and URLs: ``host[:port]/path``; the host is lower-cased, the scheme, user
  info, a trailing ``.git`` and slashes are dropped; the path keeps its case (hosts differ).
- A bare ``owner/repo`` (exactly two segments, GitHub's name syntax, no ``./`` or ``/``) is
  GitHub, as ``github:owner/repo`` is: the same reading as policy rule patterns
  (``governance.engine.sources.pattern_spec``), Claude Code's ``/plugin marketplace add
  owner/repo`` and ``{source: github, repo}``. So a policy denying ``evil/skills`` refuses a
  source registered as ``evil/skills``. A relative local folder of that shape is written
  ``./owner/repo`` (or absolute).
- Local paths: ``local:/absolute/normalised/path``.
- MCP servers: ``mcp:<server>``.

Refused outright: empty strings, control characters, and git's ``ext::``/``fd::`` transports.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

GITHUB_HOSTS = frozenset({"github.com", "www.github.com"})
# `github:owner/repo` shorthand; the prefix is optional (a bare ``o/r`` is GitHub too).
_SHORTHAND = re.compile(r"^(?:github:)?([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/([A-Za-z0-9._-]{1,100})$")
# scp-like ssh syntax: [user@]host:path (no scheme, no slash before the colon).
_SCP = re.compile(r"^(?:(?P<user>[^@/:\s]+)@)?(?P<host>[A-Za-z0-9.-]+):(?P<path>(?!//)[^\s]+)$")
_DEFAULT_PORTS = {"https": 443, "http": 80, "ssh": 22, "git": 9418}


class IdentityError(ValueError):
    """The location cannot name a source (empty, control characters, unknown form)."""


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """A parsed location. ``kind`` is ``github``, ``git`` (another host), ``local`` or ``mcp``."""

    kind: str
    identity: str
    host: str = ""
    path: str = ""  # repository path on the host (``owner/repo`` for GitHub) or the local path

    @property
    def is_remote(self) -> bool:
        return self.kind in {"github", "git"}

    @property
    def github_repo(self) -> str | None:
        """``owner/repo`` (lower case) for GitHub sources, the form ``{source: github, repo}`` uses."""
        return self.path if self.kind == "github" else None


def _strip_repo_path(path: str) -> str:
    path = unquote(path).strip("/")
    while path.endswith("/"):
        path = path[:-1]
    if path.lower().endswith(".git"):
        path = path[:-4]
    return path.strip("/")


def _remote(host: str, port: int | None, scheme: str, path: str) -> SourceLocation:
    host = host.lower().rstrip(".")
    if not host:
        raise IdentityError("the URL names no host")
    repo_path = _strip_repo_path(path)
    if host in GITHUB_HOSTS:
        parts = repo_path.split("/")
        if len(parts) < 2 or not parts[0] or not parts[1]:
            raise IdentityError(f"a GitHub location must name owner/repository, got {path!r}")
        owner_repo = f"{parts[0]}/{_strip_repo_path(parts[1])}".lower()
        return SourceLocation(
            kind="github", identity=f"github.com/{owner_repo}", host="github.com", path=owner_repo
        )
    netloc = host if port is None or _DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    identity = f"{netloc}/{repo_path}" if repo_path else netloc
    return SourceLocation(kind="git", identity=identity, host=host, path=repo_path)


def parse_location(location: str, *, base: str | None = None) -> SourceLocation:
    """Parse a URL, scp-like ssh address, ``owner/repo`` shorthand, ``mcp:`` name or local path.

    ``base`` anchors relative local paths (default: the current directory). No file system or
    network access happens here beyond ``os.getcwd`` for relative paths.
    """
    raw = location.strip(" ")
    if not raw:
        raise IdentityError("empty source location")
    if any(ord(c) < 32 or ord(c) == 127 for c in raw):
        raise IdentityError("source location contains control characters")
    if raw.lower().startswith("mcp:"):
        server = raw[4:].strip().lower()
        if not server:
            raise IdentityError("an mcp: location must name its server")
        return SourceLocation(kind="mcp", identity=f"mcp:{server}", path=server)
    if raw.startswith("local:"):
        raw = raw[len("local:") :]
    elif raw.startswith("file://"):
        raw = unquote(urlsplit(raw).path)
    elif "://" in raw:
        parts = urlsplit(raw)
        scheme = parts.scheme.lower()
        if scheme in {"ext", "fd"}:
            raise IdentityError(f"the {scheme}:: transport is not a source location")
        try:
            port = parts.port
        except ValueError as exc:
            raise IdentityError(f"invalid port in {raw!r}") from exc
        return _remote(parts.hostname or "", port, scheme, parts.path)
    elif raw.startswith("ext::"):
        raise IdentityError("the ext:: transport is not a source location")
    else:
        shorthand = _SHORTHAND.match(raw)
        if shorthand and shorthand.group(2) not in {".", ".."}:
            owner, repo = shorthand.groups()
            return _remote("github.com", None, "https", f"{owner}/{repo}")
        scp = _SCP.match(raw)
        if scp and not re.match(r"^[A-Za-z]:[\\/]", raw):  # not a Windows drive path
            return _remote(scp.group("host"), None, "ssh", scp.group("path"))
    path = raw if os.path.isabs(raw) else os.path.join(base or os.getcwd(), raw)
    normalised = posixpath.normpath(path.replace(os.sep, "/"))
    if normalised.startswith("//"):
        normalised = "/" + normalised.lstrip("/")
    return SourceLocation(kind="local", identity=f"local:{normalised}", path=normalised)


def github_identity(repo: str) -> SourceLocation:
    """The location of ``{source: github, repo: "owner/repo"}`` (marketplaces, managed settings)."""
    match = _SHORTHAND.match("github:" + repo.strip().removesuffix("/"))
    if match is None:
        raise IdentityError(f"a GitHub repository must be written owner/repo, got {repo!r}")
    owner, name = match.groups()
    return _remote("github.com", None, "https", f"{owner}/{name}")


def canonical_identity(location: str, *, base: str | None = None) -> str:
    """The canonical identity string of a location (see the module docstring)."""
    return parse_location(location, base=base).identity


def same_source(a: str, b: str) -> bool:
    """Whether two spellings name the same source."""
    try:
        return canonical_identity(a) == canonical_identity(b)
    except IdentityError:
        return False
