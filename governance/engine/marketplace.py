"""Claude Code plugin marketplaces: ``.claude-plugin/marketplace.json`` and each plugin's manifest.

Reads the fields the schemas (SchemaStore ``claude-code-marketplace.json`` and
``claude-code-plugin-manifest.json``) define, checks their types by hand so the engine needs no
JSON Schema library at run time, and reports problems as findings.

- A plugin whose source is a relative path (``./plugins/x``, also under ``metadata.pluginRoot``)
  is resolved inside the marketplace root only: a path that climbs out (``..``, an absolute
  path, a link) is refused with ``plugin-source-outside-root``.
- Remote plugin sources (``github``, ``url``, ``git-subdir``, ``npm``) are recorded with their
  canonical identity; they are fetched only by the caller, only when git and allowed.
- Plugin names become namespaces (``plugin:skill``); a name that cannot be one (``:``, ``/``,
  whitespace) is refused, since a sanitiser would otherwise silently destroy the namespace.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from governance.engine import jsonsafe
from governance.engine.identity import IdentityError, github_identity, parse_location
from governance.engine.types import Finding, Severity

MARKETPLACE_FILE = ".claude-plugin/marketplace.json"
PLUGIN_FILE = ".claude-plugin/plugin.json"
MAX_MANIFEST_BYTES = 1024 * 1024
_KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_BAD_NAMESPACE = re.compile(r"[:/\\\s]")
REMOTE_KINDS = ("github", "url", "git-subdir", "npm")


class MarketplaceError(ValueError):
    """The marketplace manifest itself cannot be used (missing, not JSON, wrong shape)."""


@dataclass(slots=True)
class PluginEntry:
    name: str
    source_kind: str  # "path" or one of REMOTE_KINDS
    root: Path | None = None  # resolved plugin folder for "path" sources
    rel: str = ""  # plugin folder relative to the marketplace root
    identity: str = ""  # canonical identity of a remote source
    url: str = ""
    ref: str = ""
    sha: str = ""
    subdir: str = ""
    version: str = ""
    description: str = ""
    skill_paths: list[str] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    @property
    def is_remote(self) -> bool:
        return self.source_kind in REMOTE_KINDS

    @property
    def fetchable_git(self) -> bool:
        return self.source_kind in {"github", "url", "git-subdir"} and bool(self.url)


@dataclass(slots=True)
class Marketplace:
    name: str
    owner: str
    root: Path
    plugins: list[PluginEntry] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def is_marketplace(root: Path) -> bool:
    return (root / MARKETPLACE_FILE).is_file()


def is_plugin(root: Path) -> bool:
    return (root / PLUGIN_FILE).is_file()


def _read_json(path: Path, label: str) -> Any:
    try:
        if path.stat().st_size > MAX_MANIFEST_BYTES:
            raise MarketplaceError(f"{label} is larger than {MAX_MANIFEST_BYTES} bytes")
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise MarketplaceError(f"{label}: no such file") from None
    except UnicodeDecodeError:
        raise MarketplaceError(f"{label} is not UTF-8") from None
    except OSError as exc:
        raise MarketplaceError(f"{label} cannot be read: {exc.strerror}") from None
    try:
        return jsonsafe.loads(text)
    except json.JSONDecodeError as exc:
        raise MarketplaceError(
            f"{label}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except ValueError as exc:
        raise MarketplaceError(f"{label}: invalid JSON: {exc}") from None


def _err(code: str, message: str, file: str) -> Finding:
    return Finding(code, Severity.ERROR, message, file=file)


def _warn(code: str, message: str, file: str) -> Finding:
    return Finding(code, Severity.WARNING, message, file=file)


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _skill_paths(value: Any, where: str, findings: list[Finding]) -> list[str]:
    if value is None:
        return []
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        findings.append(_err("plugin-skills-type", "'skills' must be a path or a list of paths", where))
        return []
    return list(items)


def plugin_name_findings(name: Any, where: str) -> list[Finding]:
    if not isinstance(name, str) or not name.strip():
        return [_err("plugin-name-missing", "plugin has no name", where)]
    if _BAD_NAMESPACE.search(name):
        return [
            _err(
                "plugin-name-namespace",
                f"plugin name {name!r} cannot be a namespace (':', '/', '\\' or whitespace): "
                "its skills would lose their 'plugin:' prefix",
                where,
            )
        ]
    if not _KEBAB.match(name):
        return [_warn("plugin-name-style", f"plugin name {name!r} is not kebab-case", where)]
    return []


def _resolve_relative(root: Path, base: str, value: str) -> Path | None:
    if os.path.isabs(value) or os.path.isabs(base):
        return None
    candidate = Path(os.path.realpath(root / base / value))
    return candidate if _within(candidate, Path(os.path.realpath(root))) else None


def _remote(entry: PluginEntry, source: dict[str, Any], where: str) -> None:
    kind = source.get("source")
    entry.source_kind = str(kind)
    entry.ref = str(source.get("ref") or "")
    entry.sha = str(source.get("sha") or "")
    try:
        if kind == "github":
            repo = source.get("repo")
            if not isinstance(repo, str):
                raise IdentityError("a github source needs 'repo': \"owner/repo\"")
            location = github_identity(repo)
            entry.url, entry.identity = f"https://github.com/{location.path}.git", location.identity
        elif kind in {"url", "git-subdir"}:
            url = source.get("url")
            if not isinstance(url, str):
                raise IdentityError(f"a {kind} source needs 'url'")
            if kind == "git-subdir" and re.match(r"^[\w.-]+/[\w.-]+$", url):
                url = f"https://github.com/{url}.git"
            entry.url, entry.identity = url, parse_location(url).identity
            entry.subdir = str(source.get("path") or "")
        elif kind == "npm":
            package = source.get("package")
            if not isinstance(package, str) or not package:
                raise IdentityError("an npm source needs 'package'")
            entry.identity = f"npm:{package}"
        else:
            raise IdentityError(f"unknown plugin source kind {kind!r}")
    except IdentityError as exc:
        entry.findings.append(_err("plugin-source-invalid", f"plugin {entry.name}: {exc}", where))


def _entry(raw: Any, index: int, root: Path, plugin_root: str) -> PluginEntry | None:
    where = f"{MARKETPLACE_FILE}#plugins[{index}]"
    if not isinstance(raw, dict):
        return None
    name = raw.get("name")
    entry = PluginEntry(name=name if isinstance(name, str) else "", source_kind="path")
    entry.findings += plugin_name_findings(name, where)
    entry.version = str(raw.get("version") or "")
    entry.description = str(raw.get("description") or "")
    entry.skill_paths = _skill_paths(raw.get("skills"), where, entry.findings)
    source = raw.get("source")
    if isinstance(source, str):
        resolved = _resolve_relative(root, plugin_root, source)
        if resolved is None:
            entry.findings.append(
                _err(
                    "plugin-source-outside-root",
                    f"plugin {entry.name}: source {source!r} leaves the marketplace folder; refused",
                    where,
                )
            )
        elif not resolved.is_dir():
            entry.findings.append(
                _err(
                    "plugin-source-missing", f"plugin {entry.name}: source folder {source!r} not found", where
                )
            )
        else:
            entry.root = resolved
            entry.rel = Path(os.path.relpath(resolved, os.path.realpath(root))).as_posix()
    elif isinstance(source, dict):
        _remote(entry, source, where)
    else:
        entry.findings.append(
            _err("plugin-source-invalid", f"plugin {entry.name}: 'source' is missing", where)
        )
    return entry


def read_plugin_manifest(plugin_root: Path, entry: PluginEntry, rel_root: str) -> None:
    """Merge ``.claude-plugin/plugin.json`` (if any) into ``entry``."""
    manifest_path = plugin_root / PLUGIN_FILE
    where = f"{rel_root}/{PLUGIN_FILE}" if rel_root not in ("", ".") else PLUGIN_FILE
    if not manifest_path.is_file():
        return
    try:
        data = _read_json(manifest_path, where)
    except MarketplaceError as exc:
        entry.findings.append(_err("plugin-manifest-invalid", str(exc), where))
        return
    if not isinstance(data, dict):
        entry.findings.append(_err("plugin-manifest-invalid", f"{where} must be a JSON object", where))
        return
    entry.manifest = data
    declared = data.get("name")
    if not entry.name:
        entry.name = declared if isinstance(declared, str) else ""
        entry.findings += plugin_name_findings(declared, where)
    elif isinstance(declared, str) and declared != entry.name:
        entry.findings.append(
            _warn(
                "plugin-name-mismatch",
                f"plugin.json names the plugin {declared!r}, the marketplace {entry.name!r}; "
                "the marketplace name is used",
                where,
            )
        )
    if not entry.version and isinstance(data.get("version"), str):
        entry.version = data["version"]
    entry.skill_paths += _skill_paths(data.get("skills"), where, entry.findings)


def load_marketplace(root: Path | str) -> Marketplace:
    """Read a marketplace folder; raises ``MarketplaceError`` when its manifest is unusable."""
    root = Path(root)
    data = _read_json(root / MARKETPLACE_FILE, MARKETPLACE_FILE)
    if not isinstance(data, dict):
        raise MarketplaceError(f"{MARKETPLACE_FILE} must be a JSON object")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise MarketplaceError(f"{MARKETPLACE_FILE}: 'name' is required")
    plugins = data.get("plugins")
    if not isinstance(plugins, list):
        raise MarketplaceError(f"{MARKETPLACE_FILE}: 'plugins' must be a list")
    owner = data.get("owner")
    market = Marketplace(
        name=name, owner=str(owner.get("name", "")) if isinstance(owner, dict) else "", root=root
    )
    if not isinstance(owner, dict):
        market.findings.append(
            _warn("marketplace-owner", "'owner' with a 'name' is required", MARKETPLACE_FILE)
        )
    metadata = data.get("metadata")
    plugin_root = ""
    if isinstance(metadata, dict) and isinstance(metadata.get("pluginRoot"), str):
        plugin_root = metadata["pluginRoot"]
    seen: set[str] = set()
    for index, raw in enumerate(plugins):
        entry = _entry(raw, index, root, plugin_root)
        if entry is None:
            market.findings.append(
                _err("plugin-entry-invalid", f"plugins[{index}] is not an object", MARKETPLACE_FILE)
            )
            continue
        if entry.root is not None:
            read_plugin_manifest(entry.root, entry, entry.rel)
        if entry.name in seen:
            entry.findings.append(
                _err("plugin-duplicate", f"plugin {entry.name!r} is listed twice", MARKETPLACE_FILE)
            )
        seen.add(entry.name)
        market.plugins.append(entry)
    return market


def plugin_skill_roots(entry: PluginEntry) -> tuple[list[Path], list[Finding]]:
    """Folders to scan for a local plugin's skills: ``skills/`` plus declared extra paths.

    Each declared path must stay inside the plugin folder.
    """
    if entry.root is None:
        return [], []
    roots: list[Path] = []
    findings: list[Finding] = []
    default = entry.root / "skills"
    if default.is_dir():
        roots.append(default)
    for declared in entry.skill_paths:
        resolved = _resolve_relative(entry.root, "", declared)
        if resolved is None:
            findings.append(
                _err(
                    "plugin-skills-outside-plugin",
                    f"plugin {entry.name}: skills path {declared!r} leaves the plugin folder; refused",
                    entry.rel,
                )
            )
        elif resolved.is_dir() and resolved not in roots:
            roots.append(resolved)
    return roots, findings
