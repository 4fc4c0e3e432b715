"""SKILL.md folder → :class:`ParsedSkill` (frontmatter, body, every package file, findings).

Reading never raises on bad content: every problem becomes a :class:`Finding` with a stable code
(see ``FINDINGS.md``). Choices where readers disagree (DOMAIN §1.1):

- the frontmatter opens with a first line that is exactly ``---`` and closes at the next line
  that is exactly ``---``; the reference checkers close it at the first ``---`` anywhere, so
  ``description: a --- b`` is ``a --- b`` here (and reported, as it reads differently there);
- a UTF-8 byte order mark and CRLF line ends are accepted and reported as info (``--strict``
  rejects the BOM, as skills-ref does); bytes that are not UTF-8 are an error;
- ``SKILL.md`` is preferred, ``skill.md`` is accepted (as skills-ref does) with an info finding.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

from governance.engine import rules
from governance.engine.types import (
    DEFAULT_LIMITS,
    Finding,
    Limits,
    PackageFile,
    ParsedSkill,
    Severity,
    SourceKind,
)
from governance.engine.yamlsafe import YamlRefused, load_mapping

__all__ = [
    "SKILL_MD_NAMES",
    "find_skill_md",
    "load_skill_folder",
    "parse_skill_md",
    "split_frontmatter",
]

SKILL_MD_NAMES = ("SKILL.md", "skill.md")
SKIPPED_DIRS = frozenset({".git", "node_modules"})
SKILL_MD = "SKILL.md"

_CLOSING = re.compile(r"^---[ \t]*\r?$", re.MULTILINE)


def split_frontmatter(text: str, *, file: str = SKILL_MD) -> tuple[str, str, list[Finding]]:
    """Split SKILL.md text into ``(frontmatter_text, body, findings)``.

    ``frontmatter_text`` is the exact text between the opening and the closing ``---`` lines
    (line ends included, unchanged), ``body`` the exact text after the closing line. When there
    is no frontmatter, ``frontmatter_text`` is empty, ``body`` is the whole text and the
    findings say why. A leading BOM is skipped (and reported).
    """
    findings: list[Finding] = []
    start = 0
    if text.startswith("\ufeff"):
        start = 1
        findings.append(
            Finding(
                "encoding-bom",
                Severity.INFO,
                "SKILL.md starts with a UTF-8 byte order mark: accepted here, but skills-ref rejects "
                "it ('must start with YAML frontmatter'); save the file without BOM.",
                file,
                1,
            )
        )
    if "\r\n" in text:
        findings.append(
            Finding(
                "line-endings-crlf",
                Severity.INFO,
                "SKILL.md uses Windows line ends (CRLF): accepted; LF keeps diffs and reviews clean.",
                file,
            )
        )
    first_end = text.find("\n", start)
    first_line = text[start:] if first_end < 0 else text[start:first_end]
    if first_line.rstrip(" \t\r") != "---":
        findings.append(_missing_frontmatter(text, start, first_line, file))
        return "", text[start:], findings
    fm_start = first_end + 1
    closing = _CLOSING.search(text, fm_start) if first_end >= 0 else None
    if closing is None:
        findings.append(
            Finding(
                "frontmatter-unclosed",
                Severity.ERROR,
                "SKILL.md frontmatter not properly closed with ---: add a line that is exactly "
                "'---' after the last field.",
                file,
                1,
            )
        )
        return "", text[start:], findings
    for line, where in ((first_line, 0), (closing.group(), closing.start())):
        if line.rstrip("\r") != "---":
            line_no = text.count("\n", 0, where) + 1
            findings.append(
                Finding(
                    "frontmatter-delimiter-spaces",
                    Severity.INFO,
                    f"Line {line_no} is '---' followed by spaces: accepted as the delimiter; remove the spaces.",
                    file,
                    line_no,
                )
            )
    body_start = closing.end()
    if body_start < len(text) and text[body_start] == "\n":
        body_start += 1
    return text[fm_start : closing.start()], text[body_start:], findings


def _missing_frontmatter(text: str, start: int, first_line: str, file: str) -> Finding:
    shown = first_line.strip()
    if not text[start:].strip():
        why = "the file is empty"
    elif not shown:
        why = "line 1 is blank; the '---' line must be the very first line"
    elif shown.startswith("---"):
        why = f"line 1 is '{shown[:40]}'; the opening line must be exactly '---'"
    else:
        why = f"line 1 is '{shown[:40]}'"
    return Finding(
        "frontmatter-missing",
        Severity.ERROR,
        f"SKILL.md must start with YAML frontmatter (---): {why}. "
        "Start the file with '---', then name: and description:, then '---'.",
        file,
        1,
    )


def _body_line(text: str, body: str) -> int:
    return text.count("\n", 0, len(text) - len(body)) + 1 if body else text.count("\n") + 1


def parse_skill_md(
    data: bytes,
    *,
    folder: str,
    path: str = ".",
    source: SourceKind = SourceKind.PROJECT,
    strict: bool = False,
    limits: Limits = DEFAULT_LIMITS,
    file: str = SKILL_MD,
) -> ParsedSkill:
    """Parse and validate the bytes of one SKILL.md. ``folder`` is the folder name on disk (the
    name must equal it; empty to skip that check), ``path`` the folder relative to the scanned
    root. Never raises on bad content."""
    skill = ParsedSkill(
        name=folder,
        folder=folder,
        path=path,
        source=source,
        frontmatter={},
        frontmatter_text="",
        body="",
        skill_md_sha256=hashlib.sha256(data).hexdigest(),
        skill_md_name=file,
    )
    findings = skill.findings
    if len(data) > limits.max_skill_md_bytes:
        findings.append(
            Finding(
                "skill-md-too-large",
                Severity.ERROR,
                f"SKILL.md is {len(data):,} bytes, over the {limits.max_skill_md_bytes:,}-byte limit: "
                "refused unread. Move long material into references/ files.",
                file,
            )
        )
        return skill
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        findings.append(
            Finding(
                "encoding-not-utf8",
                Severity.ERROR,
                f"SKILL.md is not valid UTF-8: byte 0x{data[error.start]:02x} at offset {error.start} "
                f"(line {line}) cannot be decoded. Save the file as UTF-8.",
                file,
                line,
            )
        )
        return skill
    fm_text, body, split_findings = split_frontmatter(text, file=file)
    findings.extend(split_findings)
    if strict:
        findings[:] = [_strict_bom(f) if f.code == "encoding-bom" else f for f in findings]
    skill.body = body
    skill.body_line = _body_line(text, body)
    if not split_findings or all(f.severity is not Severity.ERROR for f in split_findings):
        skill.frontmatter_text = fm_text
        _read_frontmatter(skill, fm_text, strict=strict, limits=limits, file=file)
    skill.body_tokens, body_findings = rules.check_body(
        body, frontmatter=skill.frontmatter, body_line=skill.body_line, file=file
    )
    findings.extend(body_findings)
    return skill


def _strict_bom(finding: Finding) -> Finding:
    return Finding(
        "encoding-bom",
        Severity.ERROR,
        "SKILL.md must start with YAML frontmatter (---): it starts with a UTF-8 byte order mark, "
        "which the reference checker rejects. Save the file without BOM.",
        finding.file,
        1,
    )


def _read_frontmatter(skill: ParsedSkill, fm_text: str, *, strict: bool, limits: Limits, file: str) -> None:
    findings = skill.findings
    size = len(fm_text.encode("utf-8"))
    if size > limits.max_frontmatter_bytes:
        findings.append(
            Finding(
                "frontmatter-too-large",
                Severity.ERROR,
                f"Frontmatter is {size:,} bytes, over the {limits.max_frontmatter_bytes:,}-byte limit: "
                "refused unread. Keep the frontmatter to fields; put prose in the body.",
                file,
                2,
            )
        )
        return
    line_offset = 1  # YAML line 1 is line 2 of SKILL.md
    try:
        doc = load_mapping(fm_text, max_nodes=limits.max_yaml_nodes, max_depth=limits.max_yaml_depth)
    except YamlRefused as refused:
        findings.append(
            Finding(
                refused.code,
                Severity.ERROR,
                refused.message + (f" (line {refused.line + line_offset})" if refused.line else ""),
                file,
                refused.line + line_offset if refused.line else None,
            )
        )
        return
    checked = rules.check_frontmatter(
        doc,
        fm_text=fm_text,
        folder=skill.folder,
        source=skill.source,
        strict=strict,
        line_offset=line_offset,
        file=file,
    )
    skill.frontmatter = checked.frontmatter
    if checked.name:
        skill.name = checked.name
    skill.allowed_tools = checked.allowed_tools
    skill.disallowed_tools = checked.disallowed_tools
    findings.extend(checked.findings)


def find_skill_md(folder: Path) -> Path | None:
    """``SKILL.md`` in ``folder``, else ``skill.md``, else None."""
    for name in SKILL_MD_NAMES:
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None


def _inside(real: str, root_real: str) -> bool:
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


class _PackageReader:
    """Reads every file of one skill folder within the limits, refusing links that leave the root."""

    def __init__(self, folder: Path, root_real: str, limits: Limits) -> None:
        self.folder = folder
        self.root_real = root_real
        self.limits = limits
        self.files: list[PackageFile] = []
        self.findings: list[Finding] = []
        self.total = 0
        self.stopped = False
        self.visited: set[str] = set()
        self.nested: list[str] = []

    def refuse(self, code: str, severity: Severity, message: str, rel: str | None) -> None:
        self.findings.append(Finding(code, severity, message, rel))

    def walk(self, directory: str, rel_dir: str, depth: int) -> None:
        real_dir = os.path.realpath(directory)
        if real_dir in self.visited:
            return
        self.visited.add(real_dir)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as error:
            self.refuse(
                "package-unreadable",
                Severity.WARNING,
                f"Folder '{rel_dir or '.'}' cannot be read ({error.strerror}): its files are not stored.",
                rel_dir or ".",
            )
            return
        for entry in entries:
            if self.stopped:
                return
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                is_link = entry.is_symlink()
                target_stat = os.stat(entry.path) if is_link else entry.stat(follow_symlinks=False)
            except OSError:
                self.refuse(
                    "package-symlink-broken",
                    Severity.WARNING,
                    f"'{rel}' is a link to nothing (or cannot be read): not stored.",
                    rel,
                )
                continue
            if is_link:
                real = os.path.realpath(entry.path)
                if not _inside(real, self.root_real):
                    self.refuse(
                        "package-symlink-escapes",
                        Severity.WARNING,
                        f"'{rel}' is a link that leaves the scanned root (to {real}): refused, not "
                        "stored. Copy the file into the skill instead of linking to it.",
                        rel,
                    )
                    continue
            mode = target_stat.st_mode
            if stat.S_ISDIR(mode):
                if entry.name in SKIPPED_DIRS:
                    continue
                if depth + 1 > self.limits.max_depth:
                    self.refuse(
                        "package-too-deep",
                        Severity.WARNING,
                        f"'{rel}' is nested deeper than {self.limits.max_depth} folders: not read.",
                        rel,
                    )
                    continue
                self.walk(entry.path, rel, depth + 1)
            elif stat.S_ISREG(mode):
                self.read(entry.path, rel, target_stat.st_size)
            else:
                self.refuse(
                    "package-special-file",
                    Severity.WARNING,
                    f"'{rel}' is not a regular file (device, pipe or socket): not read.",
                    rel,
                )

    def read(self, full: str, rel: str, size: int) -> None:
        limits = self.limits
        if len(self.files) >= limits.max_files:
            self.refuse(
                "package-too-many-files",
                Severity.ERROR,
                f"The skill folder has more than {limits.max_files:,} files: reading stopped at "
                f"'{rel}'. Remove generated or vendored files from the skill.",
                rel,
            )
            self.stopped = True
            return
        if size > limits.max_file_bytes:
            self.refuse(
                "package-file-too-large",
                Severity.ERROR,
                f"'{rel}' is {size:,} bytes, over the {limits.max_file_bytes:,}-byte limit per file: "
                "not stored.",
                rel,
            )
            return
        if self.total + size > limits.max_package_bytes:
            self.refuse(
                "package-too-large",
                Severity.ERROR,
                f"The skill folder is over {limits.max_package_bytes:,} bytes: reading stopped at '{rel}'.",
                rel,
            )
            self.stopped = True
            return
        try:
            with open(full, "rb") as handle:
                content = handle.read(limits.max_file_bytes + 1)
        except OSError as error:
            self.refuse(
                "package-unreadable",
                Severity.WARNING,
                f"'{rel}' cannot be read ({error.strerror}): not stored.",
                rel,
            )
            return
        if len(content) > limits.max_file_bytes:  # grew while we looked
            self.refuse(
                "package-file-too-large",
                Severity.ERROR,
                f"'{rel}' is over the {limits.max_file_bytes:,}-byte limit per file: not stored.",
                rel,
            )
            return
        self.total += len(content)
        self.files.append(PackageFile(rel, hashlib.sha256(content).hexdigest(), len(content), content))
        if "/" in rel and rel.rsplit("/", 1)[1] in SKILL_MD_NAMES:
            self.nested.append(rel.rsplit("/", 1)[0])


def _relative(folder: Path, root: Path) -> str:
    try:
        rel = os.path.relpath(folder, root)
    except ValueError:
        return folder.as_posix()
    return "." if rel == "." else Path(rel).as_posix()


def load_skill_folder(
    folder: Path,
    *,
    root: Path,
    source: SourceKind,
    strict: bool = False,
    limits: Limits = DEFAULT_LIMITS,
) -> ParsedSkill:
    """Read one skill folder: SKILL.md parsed and checked, plus every package file (bounded,
    sha256, keyed by POSIX path relative to the folder). Links that leave ``root`` are refused
    with a finding. Never raises on bad content."""
    folder = Path(folder)
    rel_path = _relative(folder, root)
    name = folder.name
    if not folder.exists() or not folder.is_dir():
        what = "Path does not exist" if not folder.exists() else "Not a directory"
        return _unreadable(name, rel_path, source, "skill-folder-missing", f"{what}: {folder}")
    root_real = os.path.realpath(root)
    if not _inside(os.path.realpath(folder), root_real):
        return _unreadable(
            name,
            rel_path,
            source,
            "package-symlink-escapes",
            f"Skill folder {folder} resolves outside the scanned root {root}: refused.",
        )
    reader = _PackageReader(folder, root_real, limits)
    reader.walk(str(folder), "", 0)
    by_path = {f.path: f for f in reader.files}
    skill_md = next((by_path[n] for n in SKILL_MD_NAMES if n in by_path), None)
    if skill_md is None:
        refused = next((f for f in reader.findings if f.file in SKILL_MD_NAMES), None)
        message = refused.message if refused else "Missing required file: SKILL.md"
        skill = _unreadable(name, rel_path, source, "skill-md-missing", message)
        skill.findings.extend(f for f in reader.findings if f is not refused)
        skill.files = reader.files
        return skill
    skill = parse_skill_md(
        skill_md.content,
        folder=name,
        path=rel_path,
        source=source,
        strict=strict,
        limits=limits,
        file=skill_md.path,
    )
    if skill_md.path != SKILL_MD:
        skill.findings.append(
            Finding(
                "skill-md-lowercase",
                Severity.INFO,
                "The file is named skill.md: accepted (skills-ref does), but Claude Code looks for "
                "SKILL.md on case-sensitive systems. Rename it to SKILL.md.",
                skill_md.path,
            )
        )
    skill.files = reader.files
    skill.findings.extend(reader.findings)
    for nested in reader.nested:
        skill.findings.append(rules.nested_skill_finding(nested, f"{nested}/{SKILL_MD}"))
    skill.findings.extend(rules.check_package(skill))
    return skill


def _unreadable(name: str, rel_path: str, source: SourceKind, code: str, message: str) -> ParsedSkill:
    return ParsedSkill(
        name=name,
        folder=name,
        path=rel_path,
        source=source,
        frontmatter={},
        frontmatter_text="",
        body="",
        skill_md_sha256="",
        findings=[Finding(code, Severity.ERROR, message, SKILL_MD if code == "skill-md-missing" else None)],
    )
