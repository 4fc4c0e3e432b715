"""Self-evolution proposals as plain text operations (DOMAIN §9): no Django, no I/O.

The gates here are structure, not advice:
- ``frontmatter_region`` cuts the raw frontmatter *bytes* (opening delimiter to the end of the
  closing delimiter line) and ``frontmatter_difference`` compares them byte for byte: a proposal
  may change how a skill works, never what it is allowed to do;
- ``apply_unified_diff`` applies an agent's diff strictly (every context line must match);
- ``is_bloat`` and ``change_signature`` compare *normalised* text, so re-wording whitespace or
  bullets does not hide a change the skill already has or a proposal already made.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import unicodedata
from dataclasses import dataclass

DELIMITER = b"---"


class PatchError(ValueError):
    """A unified diff that does not apply to the text it claims to be made against."""


def _is_delimiter(line: bytes) -> bool:
    # Trailing spaces, tabs and a CR are tolerated, as agents' parsers tolerate them; anything
    # else on the line makes it content.
    return line.rstrip(b" \t\r") == DELIMITER


def frontmatter_region(data: bytes) -> bytes | None:
    """The raw frontmatter bytes: from the start of the file to the end of the closing ``---`` line.

    Everything before the body counts (a BOM, the delimiters and their line endings included),
    so nothing that could change what the skill is allowed to do escapes the comparison.
    The closing delimiter must be a line of its own (a ``---`` inside a value does not close).
    None when the file does not start with a frontmatter block, or the block is never closed.
    """
    start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    first_end = data.find(b"\n", start)
    if first_end < 0 or not _is_delimiter(data[start:first_end]):
        return None
    position = first_end + 1
    while position <= len(data):
        line_end = data.find(b"\n", position)
        line = data[position:] if line_end < 0 else data[position:line_end]
        if _is_delimiter(line):
            return data[: len(data) if line_end < 0 else line_end + 1]
        if line_end < 0:
            return None
        position = line_end + 1
    return None


@dataclass(frozen=True, slots=True)
class FrontmatterDifference:
    offset: int  # first differing byte
    line: int  # 1-based line of that byte in the proposal

    def describe(self) -> str:
        return (
            f"the frontmatter differs from the base at byte {self.offset} (line {self.line}); "
            "a proposal may change the body only, the frontmatter must stay byte-for-byte identical"
        )


class UndelimitedFrontmatter(ValueError):
    """The base has no frontmatter block the gate can delimit: it cannot prove a proposal keeps it."""


def frontmatter_difference(base: bytes, proposed: bytes) -> FrontmatterDifference | None:
    """None when the proposal keeps the base's frontmatter bytes exactly; else where they differ.

    Fail-safe: when the base's frontmatter cannot be delimited, no proposal can be proven to
    keep it, so UndelimitedFrontmatter is raised instead of comparing two absences.
    """
    old = frontmatter_region(base)
    if old is None:
        raise UndelimitedFrontmatter(
            "the base SKILL.md does not start with a closed --- frontmatter block, so no proposal can "
            "be shown to leave it unchanged: fix the skill in git first"
        )
    new = frontmatter_region(proposed)
    if old == new:
        return None
    old_bytes = old
    new_bytes = new if new is not None else proposed[: len(old_bytes) + 1]
    offset = next(
        (i for i, (a, b) in enumerate(zip(old_bytes, new_bytes, strict=False)) if a != b),
        min(len(old_bytes), len(new_bytes)),
    )
    return FrontmatterDifference(offset=offset, line=proposed[:offset].count(b"\n") + 1)


def with_line_endings_of(text: str, reference: bytes) -> str:
    """``text`` with the line endings of ``reference``: browsers send every textarea with CRLF,
    which would otherwise change every line (and the frontmatter bytes) of an LF file."""
    lf = text.replace("\r\n", "\n")
    return lf.replace("\n", "\r\n") if b"\r\n" in reference else lf


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _no_newline(out: list[str], marked: str) -> None:
    """``\\ No newline at end of file`` after a line of the new side: drop that line's newline."""
    if out and marked.startswith(("+", " ")):
        out[-1] = out[-1].rstrip("\r\n")


def apply_unified_diff(base: str, diff: str) -> str:
    """Apply a unified diff (one file) to ``base``; every context and removed line must match.

    Lines outside hunks (``diff``/``index``/``---``/``+++`` headers) are skipped; each hunk is
    read by the line counts of its header, hunks must come in order. Raises PatchError naming
    the hunk and the line that does not match.
    """
    old_lines = base.splitlines(keepends=True)
    out: list[str] = []
    cursor = 0  # index in old_lines of the next line not yet copied
    lines = diff.splitlines(keepends=True)
    i = 0
    hunks = 0
    while i < len(lines):
        match = _HUNK.match(lines[i])
        if not match:
            i += 1
            continue
        hunks += 1
        old_start = int(match.group(1))
        old_count = int(match.group(2)) if match.group(2) is not None else 1
        new_count = int(match.group(4)) if match.group(4) is not None else 1
        start_index = old_start if old_count == 0 else max(old_start - 1, 0)
        if start_index < cursor:
            raise PatchError(f"hunk {hunks} overlaps the previous hunk (starts at line {old_start})")
        if start_index > len(old_lines):
            raise PatchError(f"hunk {hunks} starts at line {old_start}, past the end of the base")
        out.extend(old_lines[cursor:start_index])
        cursor = start_index
        i += 1
        while old_count > 0 or new_count > 0:
            if i >= len(lines):
                raise PatchError(f"hunk {hunks} is truncated: its header announces more lines")
            line = lines[i]
            i += 1
            if line.startswith("\\"):
                _no_newline(out, lines[i - 2])
                continue
            tag, text = (line[0], line[1:]) if line not in ("\n", "\r\n") else (" ", line)
            if tag == "+":
                out.append(text)
                new_count -= 1
            elif tag in (" ", "-"):
                actual = old_lines[cursor] if cursor < len(old_lines) else None
                if actual is None or actual.rstrip("\r\n") != text.rstrip("\r\n"):
                    raise PatchError(
                        f"hunk {hunks} does not apply: line {cursor + 1} of the base is "
                        f"{(actual or '<end of file>').rstrip()!r}, the diff expects {text.rstrip()!r}"
                    )
                if tag == " ":
                    out.append(actual)
                    new_count -= 1
                old_count -= 1
                cursor += 1
            else:
                raise PatchError(f"hunk {hunks}: unexpected line {line.rstrip()!r}")
        if i < len(lines) and lines[i].startswith("\\"):
            _no_newline(out, lines[i - 1])
            i += 1
    if hunks == 0:
        raise PatchError("the diff has no hunk (expected lines starting with '@@ -a,b +c,d @@')")
    out.extend(old_lines[cursor:])
    return "".join(out)


_BULLET = re.compile(r"^(?:(?:[-*+>#]+|\d+[.)])\s*)+")
_SPACE = re.compile(r"\s+")
_EDGE_PUNCTUATION = ".,;:!?`*_\"'"


def normalise(line: str) -> str:
    """A line as compared for bloat and duplicates: NFKC, lowercase, no list/heading markers,
    single spaces, no trailing punctuation or emphasis."""
    text = unicodedata.normalize("NFKC", line).strip().lower()
    text = _BULLET.sub("", text)
    text = _SPACE.sub(" ", text)
    return text.strip(_EDGE_PUNCTUATION + " ")


def _changed_lines(base: str, proposed: str) -> tuple[list[str], list[str]]:
    removed: list[str] = []
    added: list[str] = []
    old, new = base.splitlines(), proposed.splitlines()
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            removed.extend(old[a0:a1])
        if tag in ("replace", "insert"):
            added.extend(new[b0:b1])
    return removed, added


def added_text(base: str, proposed: str) -> list[str]:
    """The normalised, non-empty lines the proposal adds."""
    return [n for n in (normalise(line) for line in _changed_lines(base, proposed)[1]) if n]


def is_bloat(base: str, proposed: str) -> bool:
    """True when everything the proposal adds is already in the skill (after normalisation).

    A proposal that only removes or reorders is not bloat; one that re-states a step the skill
    already has, with other bullets, case or spacing, is.
    """
    added = added_text(base, proposed)
    if not added:
        return False
    existing_lines = {normalise(line) for line in base.splitlines()}
    whole = " ".join(n for n in (normalise(line) for line in base.splitlines()) if n)
    return all(line in existing_lines or line in whole for line in added)


def change_signature(base: str, proposed: str) -> str:
    """sha256 of the normalised removed and added lines: two proposals making the same change
    (whatever their spacing or bullets) have the same signature."""
    removed, added = _changed_lines(base, proposed)
    digest = hashlib.sha256()
    for mark, lines in (("-", removed), ("+", added)):
        for line in lines:
            normalised = normalise(line)
            if normalised:
                digest.update(f"{mark}{normalised}\n".encode())
    return digest.hexdigest()


def unified_diff(before: str, after: str, *, before_label: str, after_label: str, context: int = 3) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=before_label,
        tofile=after_label,
        n=context,
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


@dataclass(frozen=True, slots=True)
class DiffRow:
    """One row of a side-by-side diff; ``kind`` is equal, replace, delete or insert."""

    kind: str
    left_number: int | None
    left: str
    right_number: int | None
    right: str


def side_by_side(before: str, after: str, *, context: int = 3) -> list[DiffRow | None]:
    """Rows for a two-column diff; ``None`` marks skipped unchanged lines between hunks."""
    a = before.splitlines()
    b = after.splitlines()
    rows: list[DiffRow | None] = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        if rows:
            rows.append(None)
        for tag, a0, a1, b0, b1 in group:
            if tag == "equal":
                rows.extend(
                    DiffRow("equal", a0 + k + 1, a[a0 + k], b0 + k + 1, b[b0 + k]) for k in range(a1 - a0)
                )
                continue
            span = max(a1 - a0, b1 - b0)
            for k in range(span):
                left_in = a0 + k < a1
                right_in = b0 + k < b1
                rows.append(
                    DiffRow(
                        tag if left_in and right_in else ("delete" if left_in else "insert"),
                        a0 + k + 1 if left_in else None,
                        a[a0 + k] if left_in else "",
                        b0 + k + 1 if right_in else None,
                        b[b0 + k] if right_in else "",
                    )
                )
    return rows
