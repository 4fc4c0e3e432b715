"""Finding skill folders on disk, safely (DOMAIN §6 "loading hygiene").

A skill is a folder holding a ``SKILL.md``. ``discover_skills`` walks a root (a skills folder,
a single skill, a repository or a monorepo) and returns every skill folder with its path
relative to the root, so ``apps/web/.claude/skills/deploy`` keeps its place in a monorepo.

Rules:

- ``.git`` and ``node_modules`` are never entered; git-ignored folders are skipped with real
  gitignore semantics (every ``.gitignore`` from the git root down, nested ones included,
  negations and folder-only patterns as git reads them).
- Depth and folder count are bounded; hitting a bound is reported, never silent.
- Folders are deduplicated by real path (never by inode: inode numbers are 0 on some container
  and network file systems, which would collapse everything into one).
- A link whose target leaves the boundary (the root, or the git root when walking up) is not
  followed: it is reported with a ``link-outside-root`` error on the skill that holds it.
- A skill folder inside another skill folder is reported (``skill-nested``).
- In a repository (a ``.claude/skills`` or ``.agents/skills`` folder exists below the root) only
  the skills in those folders count; other SKILL.md files (fixtures, examples) are reported as
  info. A plain skills folder or a ``skills/<name>`` checkout counts every skill folder.
- With ``walk_up`` (project sources), ``.claude/skills`` and ``.agents/skills`` of the parent
  folders are scanned too, up to the git root and never past it: the repository is the trust
  boundary.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from pathspec import GitIgnoreSpec

from governance.engine.types import Finding, Severity

SKILL_FILES = frozenset({"SKILL.md", "skill.md"})  # skill.md is accepted, as skills-ref does
NEVER_ENTER = frozenset({".git", "node_modules"})
SKILL_CONTAINERS = (".claude/skills", ".agents/skills")


@dataclass(frozen=True, slots=True)
class DiscoverLimits:
    max_depth: int = 16
    max_folders: int = 20_000
    max_skills: int = 10_000
    max_gitignore_bytes: int = 256 * 1024


@dataclass(slots=True)
class SkillDir:
    """One skill folder found by a scan."""

    path: Path  # real path on disk
    rel: str  # POSIX path relative to the scanned root ("." for the root itself)
    nested_in: str | None = None  # rel of the enclosing skill folder, if any
    findings: list[Finding] = field(default_factory=list)
    refused_files: set[str] = field(default_factory=set)  # paths relative to the skill folder

    @property
    def folder(self) -> str:
        return self.path.name


@dataclass(slots=True)
class Discovery:
    root: Path
    git_root: Path | None
    skills: list[SkillDir] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # scan-level: limits, links outside skills
    folders_seen: int = 0


class DiscoverError(ValueError):
    """The root itself cannot be scanned (missing, not a folder, unreadable)."""


def find_git_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` that holds ``.git`` (folder or worktree file)."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


class _Ignores:
    """The stack of ``.gitignore`` files that apply at one folder; deepest decides first."""

    def __init__(self, specs: tuple[tuple[Path, GitIgnoreSpec], ...] = ()) -> None:
        self.specs = specs

    def with_file(
        self, folder: Path, limits: DiscoverLimits, findings: list[Finding], root: Path
    ) -> _Ignores:
        gitignore = folder / ".gitignore"
        try:
            if not gitignore.is_file() or gitignore.is_symlink():
                return self
            if gitignore.stat().st_size > limits.max_gitignore_bytes:
                findings.append(
                    Finding(
                        "gitignore-too-large",
                        Severity.WARNING,
                        f".gitignore over {limits.max_gitignore_bytes} bytes was not read",
                        file=_rel(gitignore, root),
                    )
                )
                return self
            lines = gitignore.read_text("utf-8", errors="replace").splitlines()
        except OSError:
            return self
        return _Ignores((*self.specs, (folder, GitIgnoreSpec.from_lines(lines))))

    def ignored(self, path: Path, is_dir: bool) -> bool:
        for base, spec in reversed(self.specs):
            try:
                rel = path.relative_to(base).as_posix()
            except ValueError:
                continue
            result = spec.check_file(rel + "/" if is_dir else rel)
            if result.include is not None:
                return bool(result.include)
        return False


def _rel(path: Path, root: Path) -> str:
    rel = os.path.relpath(path, root)
    return "." if rel == "." else Path(rel).as_posix()


def _within(path: Path, boundary: Path) -> bool:
    return path == boundary or boundary in path.parents


def _ancestor_ignores(
    root: Path, git_root: Path | None, limits: DiscoverLimits, findings: list[Finding]
) -> _Ignores:
    ignores = _Ignores()
    if git_root is None or git_root == root:
        return ignores
    chain = [p for p in reversed(root.parents) if _within(p, git_root)]
    for folder in chain:
        ignores = ignores.with_file(folder, limits, findings, root)
    return ignores


class _Walker:
    def __init__(self, discovery: Discovery, boundary: Path, limits: DiscoverLimits) -> None:
        self.d = discovery
        self.boundary = boundary
        self.limits = limits
        self.visited: set[str] = set()
        self.skill_paths: set[str] = set()
        self.stopped = False
        self.depth_reported = False

    def _finding(self, code: str, severity: Severity, message: str, file: str) -> Finding:
        return Finding(code, severity, message, file=file)

    def _report(self, code: str, severity: Severity, message: str, file: str) -> None:
        self.d.findings.append(self._finding(code, severity, message, file))

    def _owner(self, stack: list[SkillDir]) -> SkillDir | None:
        return stack[-1] if stack else None

    def walk(self, start: Path, ignores: _Ignores, depth: int = 0) -> None:
        self._walk(start, ignores, depth, [])

    def _walk(self, folder: Path, ignores: _Ignores, depth: int, stack: list[SkillDir]) -> None:
        if self.stopped:
            return
        real = os.path.realpath(folder)
        if real in self.visited:
            return
        self.visited.add(real)
        self.d.folders_seen += 1
        if self.d.folders_seen > self.limits.max_folders:
            self.stopped = True
            self._report(
                "scan-folder-limit",
                Severity.WARNING,
                f"stopped after {self.limits.max_folders} folders: skills beyond were not scanned",
                _rel(folder, self.d.root),
            )
            return
        ignores = ignores.with_file(folder, self.limits, self.d.findings, self.d.root)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            self._report(
                "scan-unreadable",
                Severity.WARNING,
                f"cannot read folder: {exc.strerror}",
                _rel(folder, self.d.root),
            )
            return
        if any(e.name in SKILL_FILES and e.is_file() for e in entries):
            stack = [*stack, self._add_skill(folder, stack)]
        for entry in entries:
            self._entry(folder, entry, ignores, depth, stack)

    def _add_skill(self, folder: Path, stack: list[SkillDir]) -> SkillDir:
        rel = _rel(folder, self.d.root)
        parent = self._owner(stack)
        skill = SkillDir(
            path=Path(os.path.realpath(folder)), rel=rel, nested_in=parent.rel if parent else None
        )
        if parent is not None:
            skill.findings.append(
                self._finding(
                    "skill-nested",
                    Severity.WARNING,
                    f"skill folder {rel} lies inside skill {parent.rel}: agents may load it twice or not at all",
                    rel,
                )
            )
        if len(self.d.skills) >= self.limits.max_skills:
            self.stopped = True
            self._report(
                "scan-skill-limit",
                Severity.WARNING,
                f"stopped after {self.limits.max_skills} skills",
                rel,
            )
        else:
            self.d.skills.append(skill)
        return skill

    def _entry(
        self, folder: Path, entry: os.DirEntry[str], ignores: _Ignores, depth: int, stack: list[SkillDir]
    ) -> None:
        path = folder / entry.name
        try:
            is_link = entry.is_symlink()
            is_dir = entry.is_dir()  # follows links
        except OSError:
            return
        if is_link:
            target = Path(os.path.realpath(path))
            if not _within(target, self.boundary):
                self._refuse_link(path, stack)
                return
        if not is_dir:
            return
        if entry.name in NEVER_ENTER or ignores.ignored(path, True):
            return
        if depth + 1 > self.limits.max_depth:
            if not self.depth_reported:
                self.depth_reported = True
                self._report(
                    "scan-depth-limit",
                    Severity.WARNING,
                    f"folders deeper than {self.limits.max_depth} levels were not scanned",
                    _rel(path, self.d.root),
                )
            return
        self._walk(path, ignores, depth + 1, stack)

    def _refuse_link(self, path: Path, stack: list[SkillDir]) -> None:
        rel = _rel(path, self.d.root)
        finding = self._finding(
            "link-outside-root",
            Severity.ERROR,
            f"link {rel} points outside the scanned source; it was not followed",
            rel,
        )
        owner = self._owner(stack)
        if owner is None:
            self.d.findings.append(finding)
            return
        owner.findings.append(finding)
        owner.refused_files.add(rel if owner.rel == "." else rel[len(owner.rel) + 1 :])


def in_container(rel: str) -> bool:
    """Whether a skill folder sits in ``.claude/skills/`` or ``.agents/skills/`` (where agents load from)."""
    parts = rel.split("/")
    return len(parts) >= 3 and parts[-2] == "skills" and parts[-3] in {".claude", ".agents"}


def _keep_container_skills(discovery: Discovery) -> None:
    """In a repository (any ``.claude/skills`` or ``.agents/skills`` found), only those folders count.

    Elsewhere (a managed skills folder, a checkout laid out as ``skills/<name>``) every skill
    folder counts. A SKILL.md outside the containers of a repository (test fixtures, examples,
    docs) is reported as info, not checked as a skill agents would load.
    """
    if not any(in_container(s.rel) for s in discovery.skills):
        return
    kept = []
    for skill in discovery.skills:
        if in_container(skill.rel) or skill.nested_in is not None:
            kept.append(skill)
            continue
        discovery.findings.append(
            Finding(
                "skill-outside-skills-folder",
                Severity.INFO,
                f"{skill.rel} holds a SKILL.md outside .claude/skills and .agents/skills: agents do not "
                "load it from this repository, so it was not checked",
                file=skill.rel,
            )
        )
    discovery.skills = kept


def discover_skills(
    root: Path | str, *, limits: DiscoverLimits | None = None, walk_up: bool = False
) -> Discovery:
    """Every skill folder under ``root`` (see the module docstring for the rules)."""
    limits = limits or DiscoverLimits()
    given = Path(root)
    if not given.exists():
        raise DiscoverError(f"{root}: no such file or folder")
    if not given.is_dir():
        raise DiscoverError(f"{root}: not a folder")
    real_root = Path(os.path.realpath(given))
    git_root = find_git_root(real_root)
    discovery = Discovery(root=real_root, git_root=git_root)
    ignores = _ancestor_ignores(real_root, git_root, limits, discovery.findings)
    walker = _Walker(discovery, real_root, limits)
    walker.walk(real_root, ignores)
    _keep_container_skills(discovery)
    if walk_up and git_root is not None and git_root != real_root:
        walker.boundary = git_root
        for folder in real_root.parents:
            if not _within(folder, git_root):
                break
            for container in SKILL_CONTAINERS:
                candidate = folder / container
                if candidate.is_dir() and _within(Path(os.path.realpath(candidate)), git_root):
                    walker.walk(candidate, _ancestor_ignores(candidate, git_root, limits, discovery.findings))
    return discovery
