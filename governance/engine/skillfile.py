"""SKILL.md folder → :class:`ParsedSkill` (frontmatter, body, every package file, findings).

Reading never raises on bad content: every problem becomes a :class:`Finding` with a stable code
(see ``FINDINGS.md``). Choices where readers disagree (DOMAIN §1.1):

- the frontmatter opens with a first line ``---`` and closes at the next line that is ``---``
  (trailing spaces or tabs tolerated and reported: every agent accepts them); the reference
  checkers close it at the first ``---`` anywhere, so ``description: a --- b`` is ``a --- b``
  here (and reported, as it reads differently there); a leading blank line means no frontmatter;
- a UTF-8 byte order mark and CRLF line ends are accepted and reported as info (``--strict``
  rejects the BOM, as skills-ref does); bytes that are not UTF-8 are an error;
- ``SKILL.md`` is preferred, ``skill.md`` is accepted (as skills-ref does) with an info finding;
- a package's files are read with links resolved only to check they stay inside the scanned root
  (those that leave it are refused with a finding), ``.git`` and ``node_modules`` skipped, and the
  count, depth and sizes bounded by :class:`Limits`.
"""

from __future__ import annotations

import hashlib
import operator
import os
import stat
import time
from dataclasses import replace
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


def _closing(text: str, start: int) -> tuple[int, int] | None:
    """``(start, end)`` of the first line at or after ``start`` that is ``---`` (trailing spaces
    allowed), searching with ``str.find`` rather than a multiline regex (much faster)."""
    at = start - 1  # the newline that ends the opening line
    length = len(text)
    while True:
        at = text.find("\n---", at)
        if at < 0:
            return None
        end = at + 4
        while end < length and text[end] in " \t":
            end += 1
        if end < length and text[end] == "\r":
            end += 1
        if end == length or text[end] == "\n":
            return at + 1, end
        at += 1


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
    crlf_at = text.find("\r\n", start, start + 4096)  # the frontmatter's part: enough to say
    if crlf_at >= 0:
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
    closing = _closing(text, fm_start) if first_end >= 0 else None
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
    close_start, close_end = closing
    for line, where in ((first_line, 0), (text[close_start:close_end], close_start)):
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
    body_start = close_end
    if body_start < len(text) and text[body_start] == "\n":
        body_start += 1
    return text[fm_start:close_start], text[body_start:], findings


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
    sha256: str | None = None,
) -> ParsedSkill:
    """Parse and validate the bytes of one SKILL.md. ``folder`` is the folder name on disk (the
    name must equal it; empty to skip that check), ``path`` the folder relative to the scanned
    root. ``sha256`` may pass the digest of ``data`` when the caller has it. Never raises on bad content."""
    skill = ParsedSkill(
        name=folder,
        folder=folder,
        path=path,
        source=source,
        frontmatter={},
        frontmatter_text="",
        body="",
        skill_md_sha256=sha256 or hashlib.sha256(data).hexdigest(),
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
    _sanitise(findings)
    return skill


def printable_text(text: str) -> str:
    """Control, format (bidi overrides, zero-width) and separator characters as ``\\uXXXX``:
    findings echo names, keys and paths, and a terminal or a page must show them, not obey them."""
    if text.isprintable():
        return text
    return "".join(
        ch if ch.isprintable() else (f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
        for ch in text
    )


def _sanitise(findings: list[Finding]) -> None:
    for index, finding in enumerate(findings):
        if not finding.message.isprintable() or (finding.file is not None and not finding.file.isprintable()):
            findings[index] = replace(
                finding,
                message=printable_text(finding.message),
                file=None if finding.file is None else printable_text(finding.file),
            )


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


_REAL_ROOTS: dict[str, tuple[float, str]] = {}
_REAL_ROOT_TTL_S = 2.0


def _real_root(root: str) -> str:
    """Real path of a scan root, cached for two seconds: one ingest reads thousands of skills under
    the same root, and a root whose link is switched (a deploy) is seen again almost at once."""
    now = time.monotonic()
    cached = _REAL_ROOTS.get(root)
    if cached is not None and now - cached[0] < _REAL_ROOT_TTL_S:
        return cached[1]
    if len(_REAL_ROOTS) > 256:
        _REAL_ROOTS.clear()
    real = os.path.realpath(root)
    _REAL_ROOTS[root] = (now, real)
    return real


_OPEN_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)


_entry_name = operator.attrgetter("name")


class _PackageReader:
    """Reads every file of one skill folder within the limits, refusing links that leave the root.

    Fast path: directory entries are classified from ``readdir`` (no stat per entry) and files
    are opened without following links and checked with ``fstat`` (a pipe or device swapped in
    is never read). Real paths are resolved only for links.
    """

    def __init__(self, root_real: str, limits: Limits) -> None:
        self.root_real = root_real
        self.limits = limits
        self.files: list[PackageFile] = []
        self.findings: list[Finding] = []
        self.total = 0
        self.stopped = False
        self.visited: set[str] = set()
        self.nested: list[str] = []
        self.root_error: OSError | None = None

    def refuse(self, code: str, severity: Severity, message: str, rel: str | None) -> None:
        self.findings.append(Finding(code, severity, message, rel))

    def walk(self, directory: str, real_dir: str, rel_dir: str, depth: int) -> None:
        if real_dir in self.visited:
            return
        self.visited.add(real_dir)
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=_entry_name)
        except OSError as error:
            if not rel_dir:
                self.root_error = error
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
            name = entry.name
            rel = f"{rel_dir}/{name}" if rel_dir else name
            try:
                if entry.is_symlink():
                    self.link(entry, rel, depth)
                elif entry.is_dir(follow_symlinks=False):
                    self.directory(entry.path, f"{real_dir}/{name}", rel, depth)
                elif entry.is_file(follow_symlinks=False):
                    self.read(entry.path, rel)
                else:
                    self.special(rel)
            except OSError:
                self.refuse(
                    "package-unreadable", Severity.WARNING, f"'{rel}' cannot be read: not stored.", rel
                )

    def directory(self, path: str, real: str, rel: str, depth: int) -> None:
        if os.path.basename(path) in SKIPPED_DIRS:
            return
        if depth + 1 > self.limits.max_depth:
            self.refuse(
                "package-too-deep",
                Severity.WARNING,
                f"'{rel}' is nested deeper than {self.limits.max_depth} folders: not read.",
                rel,
            )
            return
        self.walk(path, real, rel, depth + 1)

    def link(self, entry: os.DirEntry[str], rel: str, depth: int) -> None:
        real = os.path.realpath(entry.path)
        if not _inside(real, self.root_real):
            self.refuse(
                "package-symlink-escapes",
                Severity.WARNING,
                f"'{rel}' is a link that leaves the scanned root (to {real}): refused, not "
                "stored. Copy the file into the skill instead of linking to it.",
                rel,
            )
            return
        try:
            mode = os.stat(real).st_mode
        except OSError:
            self.refuse(
                "package-symlink-broken",
                Severity.WARNING,
                f"'{rel}' is a link to nothing (or cannot be read): not stored.",
                rel,
            )
            return
        if stat.S_ISDIR(mode):
            self.directory(real, real, rel, depth)
        elif stat.S_ISREG(mode):
            self.read(real, rel)
        else:
            self.special(rel)

    def special(self, rel: str) -> None:
        self.refuse(
            "package-special-file",
            Severity.WARNING,
            f"'{rel}' is not a regular file (device, pipe or socket): not read.",
            rel,
        )

    def read(self, full: str, rel: str) -> None:
        limits = self.limits
        if not rel.isascii() and not _utf8_safe(rel):
            shown = _printable(rel)
            self.refuse(
                "package-file-name-invalid",
                Severity.WARNING,
                f"'{shown}' has a name that is not valid UTF-8: not stored. Rename the file.",
                shown,
            )
            return
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
        try:
            fd = os.open(full, _OPEN_FLAGS)
        except OSError as error:
            self.refuse(
                "package-unreadable",
                Severity.WARNING,
                f"'{rel}' cannot be read ({error.strerror}): not stored.",
                rel,
            )
            return
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                self.special(rel)
                return
            size = info.st_size
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
                    f"The skill folder is over {limits.max_package_bytes:,} bytes: reading stopped at "
                    f"'{rel}'.",
                    rel,
                )
                self.stopped = True
                return
            content = _read_capped(fd, size, limits.max_file_bytes + 1)
        finally:
            os.close(fd)
        if len(content) > limits.max_file_bytes:  # grew while we read it
            self.refuse(
                "package-file-too-large",
                Severity.ERROR,
                f"'{rel}' is over the {limits.max_file_bytes:,}-byte limit per file: not stored.",
                rel,
            )
            return
        self.total += len(content)
        self.files.append(PackageFile(rel, hashlib.sha256(content).hexdigest(), len(content), content))
        if "/" in rel:
            parent, _, base = rel.rpartition("/")
            if base in SKILL_MD_NAMES:
                self.nested.append(parent)


def _utf8_safe(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes of a file name (surrogate escapes)
        return False
    return True


def _printable(text: str) -> str:
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _read_capped(fd: int, expected: int, cap: int) -> bytes:
    """Read a regular file to its end, or ``cap`` bytes when it grew past that meanwhile."""
    want = min(expected + 1, cap)
    first = os.read(fd, want)
    if len(first) < want:  # a short read of a regular file is its end
        return first
    chunks = [first]
    got = len(first)
    while got < cap:
        chunk = os.read(fd, min(1 << 20, cap - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _locate(folder: str, root: str, root_real: str) -> tuple[str, str]:
    """``(path relative to root, real path)`` of ``folder``, resolving links only where there are some."""
    root = root.rstrip(os.sep) or os.sep
    if folder.rstrip(os.sep) == root:
        return ".", root_real
    prefix = root if root.endswith(os.sep) else root + os.sep
    if folder.startswith(prefix):
        rel = folder[len(prefix) :].strip(os.sep)
        parts = rel.split(os.sep)
        if "" not in parts and "." not in parts and ".." not in parts:
            current = root
            for part in parts:
                current = f"{current}{os.sep}{part}" if current != os.sep else os.sep + part
                if os.path.islink(current):
                    return "/".join(parts), os.path.realpath(folder)
            return "/".join(parts), f"{root_real.rstrip(os.sep)}{os.sep}{rel}"
    try:
        rel = Path(os.path.relpath(folder, root)).as_posix()
    except ValueError:
        rel = Path(folder).as_posix()
    return rel, os.path.realpath(folder)


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
    folder_str = os.fspath(folder)
    root_str = os.fspath(root)
    if not os.path.isabs(folder_str) or not os.path.isabs(root_str):
        folder_str, root_str = os.path.abspath(folder_str), os.path.abspath(root_str)
    name = os.path.basename(folder_str.rstrip(os.sep))
    root_real = _real_root(root_str)
    rel_path, real = _locate(folder_str, root_str, root_real)
    if not folder_str.isascii() and not _utf8_safe(folder_str):
        return _unreadable(
            _printable(name),
            _printable(rel_path),
            source,
            "skill-folder-name-invalid",
            f"Skill folder {_printable(folder_str)} has a name that is not valid UTF-8: refused. Rename it.",
        )
    if not _inside(real, root_real):
        return _unreadable(
            name,
            rel_path,
            source,
            "package-symlink-escapes",
            f"Skill folder {folder} resolves outside the scanned root {root}: refused.",
        )
    reader = _PackageReader(root_real, limits)
    reader.walk(folder_str, real, "", 0)
    if isinstance(reader.root_error, FileNotFoundError | NotADirectoryError):
        what = "Path does not exist" if not os.path.lexists(folder_str) else "Not a directory"
        return _unreadable(name, rel_path, source, "skill-folder-missing", f"{what}: {folder}")
    skill_md = None
    for file in reader.files:
        if file.path in SKILL_MD_NAMES and (skill_md is None or file.path == SKILL_MD):
            skill_md = file
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
        sha256=skill_md.sha256,
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
    if skill.frontmatter.get("license"):
        skill.findings.extend(rules.check_package(skill))
    if reader.findings:
        _sanitise(skill.findings)
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
