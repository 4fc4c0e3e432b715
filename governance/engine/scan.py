"""One source on disk → parsed skills: the pipeline shared by ``skills check``, ingest and the API.

``scan_source`` looks at what the path is and reads it accordingly:

- a marketplace (``.claude-plugin/marketplace.json``): every local plugin's skills, named
  ``plugin:name`` (source ``plugin``); remote plugins are returned for the caller to record;
- a single plugin (``.claude-plugin/plugin.json``): its skills, named ``plugin:name``;
- anything else (a skill, a skills folder, a repository, a monorepo): ``discover_skills``, with
  the walk up to the git root for project sources.

Each skill folder is read by ``skillfile.load_skill_folder``; the scan adds what only a scan can
see (nested skills, links that leave the source, bounds reached). Nothing here raises on bad
content; only an unusable root becomes a ``ScanError`` entry.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from governance.engine.discover import DiscoverError, DiscoverLimits, SkillDir, discover_skills
from governance.engine.marketplace import (
    Marketplace,
    MarketplaceError,
    PluginEntry,
    is_marketplace,
    is_plugin,
    load_marketplace,
    plugin_skill_roots,
    read_plugin_manifest,
)
from governance.engine.skillfile import load_skill_folder
from governance.engine.types import (
    DEFAULT_LIMITS,
    Finding,
    Limits,
    PackageFile,
    ParsedSkill,
    Severity,
    SourceKind,
)

Progress = Callable[[int, int], None]
# Reported by the package reader already (as package-symlink-escapes): not repeated per skill.
_SCAN_ONLY_LINK = "link-outside-root"


@dataclass(frozen=True, slots=True)
class ScanError:
    path: str
    code: str
    message: str
    severity: str = "error"

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "code": self.code, "message": self.message, "severity": self.severity}


@dataclass(slots=True)
class ScanResult:
    root: Path
    kind: SourceKind
    skills: list[ParsedSkill] = field(default_factory=list)
    errors: list[ScanError] = field(default_factory=list)
    marketplace: Marketplace | None = None
    remote_plugins: list[PluginEntry] = field(default_factory=list)
    unreadable: bool = False  # the root itself could not be scanned
    # Without ``keep_content``: where each skill's files are, to read them again when stored
    # (keyed by id() of the ParsedSkill), so a big source never sits in memory whole.
    folders: dict[int, Path] = field(default_factory=dict)

    @property
    def has_errors(self) -> bool:
        return any(e.severity == Severity.ERROR.value for e in self.errors) or any(
            not s.valid for s in self.skills
        )


def _scan_error(label: str, finding: Finding) -> ScanError:
    where = label if not finding.file or finding.file == "." else f"{label.rstrip('/')}/{finding.file}"
    return ScanError(where, finding.code, finding.message, finding.severity.value)


def _read_dirs(
    dirs: list[tuple[SkillDir, Path]],
    *,
    kind: SourceKind,
    strict: bool,
    limits: Limits,
    identity: str,
    plugin: str | None,
    progress: Progress | None,
    done_before: int,
    total: int,
    folders: dict[int, Path] | None = None,
) -> list[ParsedSkill]:
    parsed: list[ParsedSkill] = []
    for index, (skill_dir, boundary) in enumerate(dirs, start=1):
        skill = load_skill_folder(skill_dir.path, root=boundary, source=kind, strict=strict, limits=limits)
        if folders is not None:
            folders[id(skill)] = skill_dir.path
            skill.files = [PackageFile(f.path, f.sha256, f.size, b"") for f in skill.files]
        skill.path = skill_dir.rel
        skill.findings.extend(f for f in skill_dir.findings if f.code != _SCAN_ONLY_LINK)
        skill.source_identity = identity
        skill.plugin = plugin
        parsed.append(skill)
        if progress is not None:
            progress(done_before + index, total)
    return parsed


def _boundary(skill_dir: SkillDir, root: Path, git_root: Path | None) -> Path:
    return git_root if git_root is not None and skill_dir.rel.startswith("../") else root


def _scan_plugin(
    result: ScanResult,
    entry: PluginEntry,
    market_root: Path,
    label: str,
    *,
    strict: bool,
    limits: Limits,
    discover_limits: DiscoverLimits,
    identity: str,
) -> list[tuple[SkillDir, Path, str | None]]:
    roots, findings = plugin_skill_roots(entry)
    result.errors += [_scan_error(label, f) for f in (*entry.findings, *findings)]
    blocked = any(f.severity is Severity.ERROR and f.code.startswith("plugin-name") for f in entry.findings)
    plugin = None if blocked else entry.name
    found: list[tuple[SkillDir, Path, str | None]] = []
    for skills_root in roots:
        discovery = discover_skills(skills_root, limits=discover_limits)
        result.errors += [_scan_error(label, f) for f in discovery.findings]
        for skill_dir in discovery.skills:
            rel = Path(os.path.relpath(skill_dir.path, market_root)).as_posix()
            skill_dir.rel = rel
            found.append((skill_dir, market_root, plugin))
    return found


def scan_source(
    path: Path | str,
    *,
    kind: SourceKind,
    strict: bool = False,
    limits: Limits = DEFAULT_LIMITS,
    discover_limits: DiscoverLimits | None = None,
    walk_up: bool | None = None,
    identity: str = "",
    label: str | None = None,
    progress: Progress | None = None,
    keep_content: bool = True,
) -> ScanResult:
    """Read every skill of one source on disk (see the module docstring).

    With ``keep_content=False`` the files' bytes are dropped after hashing and their folders kept
    in ``result.folders``: the caller reads them again when it stores them.
    """
    label = label if label is not None else str(path)
    discover_limits = discover_limits or DiscoverLimits()
    given = Path(path)
    result = ScanResult(root=given, kind=kind)
    if not given.is_dir():
        result.unreadable = True
        what = "no such file or folder" if not given.exists() else "not a folder"
        result.errors.append(ScanError(label, "path-unreadable", f"{label}: {what}"))
        return result
    root = Path(os.path.realpath(given))
    result.root = root
    try:
        if is_marketplace(root) or is_plugin(root):
            _scan_plugins(
                result,
                root,
                label,
                strict=strict,
                limits=limits,
                dl=discover_limits,
                identity=identity,
                progress=progress,
                keep_content=keep_content,
            )
            return result
        discovery = discover_skills(
            root, limits=discover_limits, walk_up=(kind is SourceKind.PROJECT) if walk_up is None else walk_up
        )
    except (DiscoverError, MarketplaceError) as exc:
        result.unreadable = True
        result.errors.append(ScanError(label, "path-unreadable", str(exc)))
        return result
    result.errors += [_scan_error(label, f) for f in discovery.findings]
    dirs = [(d, _boundary(d, root, discovery.git_root)) for d in discovery.skills]
    result.skills = _read_dirs(
        dirs,
        kind=kind,
        strict=strict,
        limits=limits,
        identity=identity,
        plugin=None,
        progress=progress,
        done_before=0,
        total=len(dirs),
        folders=None if keep_content else result.folders,
    )
    return result


def _scan_plugins(
    result: ScanResult,
    root: Path,
    label: str,
    *,
    strict: bool,
    limits: Limits,
    dl: DiscoverLimits,
    identity: str,
    progress: Progress | None,
    keep_content: bool = True,
) -> None:
    result.kind = SourceKind.PLUGIN
    if is_marketplace(root):
        market = load_marketplace(root)
        result.marketplace = market
        result.errors += [_scan_error(label, f) for f in market.findings]
        entries = market.plugins
    else:
        entry = PluginEntry(name="", source_kind="path", root=root, rel=".")
        read_plugin_manifest(root, entry, ".")
        entries = [entry]
    found: list[tuple[SkillDir, Path, str | None]] = []
    for entry in entries:
        if entry.is_remote:
            result.remote_plugins.append(entry)
            result.errors += [_scan_error(label, f) for f in entry.findings]
            continue
        if entry.root is None:
            result.errors += [_scan_error(label, f) for f in entry.findings]
            continue
        found += _scan_plugin(
            result, entry, root, label, strict=strict, limits=limits, discover_limits=dl, identity=identity
        )
    _read_plugin_skills(
        result,
        found,
        strict=strict,
        limits=limits,
        identity=identity,
        progress=progress,
        folders=None if keep_content else result.folders,
    )


def _read_plugin_skills(
    result: ScanResult,
    found: list[tuple[SkillDir, Path, str | None]],
    *,
    strict: bool,
    limits: Limits,
    identity: str,
    progress: Progress | None = None,
    folders: dict[int, Path] | None = None,
) -> None:
    """Read each plugin skill folder found, within its own boundary and under its plugin's name."""
    total = len(found)
    for index, (skill_dir, boundary, plugin) in enumerate(found):
        result.skills += _read_dirs(
            [(skill_dir, boundary)],
            kind=SourceKind.PLUGIN,
            strict=strict,
            limits=limits,
            identity=identity,
            plugin=plugin,
            progress=progress,
            done_before=index,
            total=total,
            folders=folders,
        )


def scan_remote_plugin(
    checkout: Path,
    entry: PluginEntry,
    *,
    strict: bool = False,
    limits: Limits = DEFAULT_LIMITS,
    identity: str = "",
) -> ScanResult:
    """Skills of a remote plugin fetched into ``checkout`` (``git-subdir`` sources: its folder).

    Paths are reported as ``<plugin>@remote/<path in the plugin>``; the subfolder must stay
    inside the checkout.
    """
    checkout = Path(os.path.realpath(checkout))
    result = ScanResult(root=checkout, kind=SourceKind.PLUGIN)
    root = Path(os.path.realpath(checkout / entry.subdir)) if entry.subdir else checkout
    if not (root == checkout or checkout in root.parents) or not root.is_dir():
        result.unreadable = True
        result.errors.append(
            ScanError(
                entry.name,
                "plugin-source-outside-root",
                f"plugin {entry.name}: path {entry.subdir!r} not usable",
            )
        )
        return result
    local = PluginEntry(
        name=entry.name, source_kind="path", root=root, rel=".", skill_paths=list(entry.skill_paths)
    )
    read_plugin_manifest(root, local, ".")
    local.name = entry.name  # the marketplace's name is the namespace
    found = _scan_plugin(
        result,
        local,
        root,
        entry.name,
        strict=strict,
        limits=limits,
        discover_limits=DiscoverLimits(),
        identity=identity,
    )
    for skill_dir, _boundary, _plugin in found:
        skill_dir.rel = f"{entry.name}@remote/{skill_dir.rel}"
    _read_plugin_skills(result, found, strict=strict, limits=limits, identity=identity)
    return result
