"""Uploaded skill archives (zip, tar.gz): every entry is checked before anything is written.

``inspect_archive`` reads the archive's headers only (from memory) and refuses, with a precise
``ArchiveRefused``, any entry whose name escapes (``..``, absolute, drive letters, backslashes),
any link, device or other special file, names that are not UTF-8 or carry control or
direction-override characters, duplicates, too many entries, too much content, or a compression
ratio that only a bomb has. ``extract_archive`` inspects first, then writes the files into a fresh
temporary folder, counting the bytes it really decompresses (headers can lie); if anything goes
wrong the folder is removed, so a refused archive leaves nothing behind.
"""

from __future__ import annotations

import gzip
import io
import os
import shutil
import stat
import tarfile
import tempfile
import unicodedata
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

CHUNK = 64 * 1024
# Characters that make a name lie about itself on screen (bidi overrides, zero-width joiners).
_DECEPTIVE = {
    chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200B, 0x200E, 0x200F, 0xFEFF)
}


@dataclass(frozen=True, slots=True)
class ArchiveLimits:
    max_archive_bytes: int = 20 * 1024 * 1024
    max_entries: int = 2_000
    max_total_bytes: int = 50 * 1024 * 1024
    max_entry_bytes: int = 10 * 1024 * 1024
    max_ratio: float = 100.0  # uncompressed / compressed, per entry and overall
    ratio_floor_bytes: int = 1024 * 1024  # below this size a high ratio is harmless (text compresses)
    max_path_bytes: int = 1024
    max_component_bytes: int = 255
    max_depth: int = 32


class ArchiveRefused(Exception):
    """An archive that will not be unpacked. ``code`` is stable; ``entry`` names the culprit."""

    def __init__(self, code: str, message: str, entry: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.entry = entry

    def as_dict(self) -> dict[str, str | None]:
        return {"code": self.code, "message": self.message, "entry": self.entry}


@dataclass(frozen=True, slots=True)
class ArchiveEntry:
    path: str  # normalised POSIX path, relative
    size: int
    is_dir: bool


@dataclass(slots=True)
class ArchivePlan:
    format: str  # "zip" or "tar.gz"
    entries: list[ArchiveEntry] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        return sum(e.size for e in self.entries)

    @property
    def file_count(self) -> int:
        return sum(1 for e in self.entries if not e.is_dir)


def archive_format(data: bytes, filename: str = "") -> str:
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    if data[:2] == b"\x1f\x8b":
        return "tar.gz"
    raise ArchiveRefused(
        "archive-format",
        f"{filename or 'upload'} is neither a zip nor a gzip-compressed tar archive",
    )


def _shown(name: str) -> str:
    return name.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")[:200]


def check_name(raw: str, limits: ArchiveLimits) -> str:
    """Validate one entry name and return it normalised (no leading ``./``, no trailing ``/``)."""
    shown = _shown(raw)
    if any(0xD800 <= ord(c) <= 0xDFFF for c in raw):
        raise ArchiveRefused("archive-name-encoding", f"entry name is not valid UTF-8: {shown}", shown)
    if any(ord(c) < 32 or ord(c) == 127 for c in raw):
        raise ArchiveRefused(
            "archive-name-control", f"entry name contains control characters: {shown}", shown
        )
    if any(c in _DECEPTIVE for c in raw):
        raise ArchiveRefused(
            "archive-name-deceptive",
            f"entry name contains invisible or direction-override characters: {shown}",
            shown,
        )
    if "\\" in raw:
        raise ArchiveRefused("archive-name-backslash", f"entry name contains a backslash: {shown}", shown)
    if raw.startswith("/") or (len(raw) > 1 and raw[1] == ":" and raw[0].isalpha()):
        raise ArchiveRefused("archive-absolute-path", f"entry has an absolute path: {shown}", shown)
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ArchiveRefused("archive-path-traversal", f"entry escapes the archive with '..': {shown}", shown)
    if not parts:
        raise ArchiveRefused("archive-name-empty", f"entry has an empty name: {shown!r}", shown)
    path = "/".join(parts)
    if len(path.encode()) > limits.max_path_bytes or any(
        len(p.encode()) > limits.max_component_bytes for p in parts
    ):
        raise ArchiveRefused("archive-name-too-long", f"entry name is too long: {shown[:80]}…", shown)
    if len(parts) > limits.max_depth:
        raise ArchiveRefused(
            "archive-too-deep", f"entry is nested more than {limits.max_depth} folders deep: {shown}", shown
        )
    return unicodedata.normalize("NFC", path)


def _add(
    plan: ArchivePlan, seen: dict[str, bool], path: str, size: int, is_dir: bool, limits: ArchiveLimits
) -> None:
    if len(plan.entries) >= limits.max_entries:
        raise ArchiveRefused(
            "archive-too-many-entries", f"archive has more than {limits.max_entries} entries"
        )
    key = path.casefold()
    if key in seen:
        if is_dir and seen[key]:
            return  # a folder listed twice is harmless
        raise ArchiveRefused(
            "archive-duplicate-entry", f"entry appears twice (or differs only by case): {path}", path
        )
    parts = path.split("/")
    for depth in range(1, len(parts)):
        parent = "/".join(parts[:depth]).casefold()
        if seen.get(parent) is False:
            raise ArchiveRefused(
                "archive-file-as-folder", f"entry {path} lies under a file of the same name", path
            )
    if size > limits.max_entry_bytes:
        raise ArchiveRefused(
            "archive-entry-too-large", f"entry {path} is {size} bytes (limit {limits.max_entry_bytes})", path
        )
    seen[key] = is_dir
    plan.entries.append(ArchiveEntry(path=path, size=size, is_dir=is_dir))
    if plan.total_bytes > limits.max_total_bytes:
        raise ArchiveRefused(
            "archive-too-large", f"archive unpacks to more than {limits.max_total_bytes} bytes", path
        )


def _zip_name(info: zipfile.ZipInfo) -> str:
    if info.flag_bits & 0x800:
        return info.orig_filename
    raw = info.orig_filename.encode("cp437")
    try:
        return raw.decode("utf-8")  # many tools write UTF-8 without setting the flag
    except UnicodeDecodeError:
        return raw.decode("utf-8", "surrogateescape")


def _inspect_zip(data: bytes, limits: ArchiveLimits) -> tuple[ArchivePlan, list[tuple[zipfile.ZipInfo, str]]]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise ArchiveRefused("archive-corrupt", f"not a readable zip archive: {exc}") from None
    infos = archive.infolist()
    if len(infos) > limits.max_entries:
        raise ArchiveRefused(
            "archive-too-many-entries", f"archive has more than {limits.max_entries} entries"
        )
    plan = ArchivePlan(format="zip")
    seen: dict[str, bool] = {}
    members: list[tuple[zipfile.ZipInfo, str]] = []
    compressed_total = 0
    for info in infos:
        path = check_name(_zip_name(info), limits)
        mode = info.external_attr >> 16
        kind = stat.S_IFMT(mode)
        if kind == stat.S_IFLNK:
            raise ArchiveRefused(
                "archive-link", f"entry {path} is a symbolic link; links are not accepted", path
            )
        if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise ArchiveRefused(
                "archive-special-file",
                f"entry {path} is a device, pipe or socket; only files are accepted",
                path,
            )
        if info.flag_bits & 0x1:
            raise ArchiveRefused("archive-encrypted", f"entry {path} is encrypted", path)
        is_dir = info.is_dir() or kind == stat.S_IFDIR
        if (
            not is_dir
            and info.file_size >= limits.ratio_floor_bytes
            and info.file_size > limits.max_ratio * max(info.compress_size, 1)
        ):
            raise ArchiveRefused(
                "archive-bomb",
                f"entry {path} expands {info.file_size // max(info.compress_size, 1)}× "
                f"(limit {limits.max_ratio:g}×): refused as a compression bomb",
                path,
            )
        compressed_total += info.compress_size
        _add(plan, seen, path, 0 if is_dir else info.file_size, is_dir, limits)
        if not is_dir:
            members.append((info, path))
    if compressed_total > len(data):
        raise ArchiveRefused(
            "archive-bomb", "zip entries overlap (declared sizes exceed the archive): refused"
        )
    return plan, members


class _CountingReader(io.RawIOBase):
    """Decompresses gzip lazily and refuses once more than ``limit`` bytes came out."""

    def __init__(self, data: bytes, limit: int) -> None:
        self._gz = gzip.GzipFile(fileobj=io.BytesIO(data))
        self._limit = limit
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        chunk = self._gz.read(len(buffer))
        self.count += len(chunk)
        if self.count > self._limit:
            raise ArchiveRefused(
                "archive-bomb", f"archive decompresses to more than {self._limit} bytes: refused as a bomb"
            )
        buffer[: len(chunk)] = chunk
        return len(chunk)


def _tar_stream_limit(limits: ArchiveLimits) -> int:
    # content + one 512-byte header per entry (long names take more) + end-of-archive padding
    return limits.max_total_bytes + 2048 * (limits.max_entries + 2) + 20 * 512 * 2


def _open_tar(data: bytes, limits: ArchiveLimits) -> tarfile.TarFile:
    reader = _CountingReader(data, _tar_stream_limit(limits))
    stream = io.BufferedReader(reader, CHUNK)
    try:
        return tarfile.open(fileobj=stream, mode="r|", encoding="utf-8", errors="surrogateescape")
    except (tarfile.TarError, OSError, EOFError, gzip.BadGzipFile) as exc:
        raise ArchiveRefused("archive-corrupt", f"not a readable tar.gz archive: {exc}") from None


def _tar_members(tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    try:
        yield from tar
    except ArchiveRefused:
        raise
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise ArchiveRefused("archive-corrupt", f"not a readable tar.gz archive: {exc}") from None


def _check_tar_member(member: tarfile.TarInfo, limits: ArchiveLimits) -> tuple[str, bool]:
    path = check_name(member.name, limits)
    if member.issym() or member.islnk():
        raise ArchiveRefused("archive-link", f"entry {path} is a link; links are not accepted", path)
    if member.ischr() or member.isblk() or member.isfifo():
        raise ArchiveRefused(
            "archive-special-file", f"entry {path} is a device or pipe; only files are accepted", path
        )
    if not (member.isreg() or member.isdir()):
        raise ArchiveRefused("archive-special-file", f"entry {path} has an unsupported type", path)
    return path, member.isdir()


def _inspect_tar(data: bytes, limits: ArchiveLimits) -> ArchivePlan:
    tar = _open_tar(data, limits)
    plan = ArchivePlan(format="tar.gz")
    seen: dict[str, bool] = {}
    with tar:
        for member in _tar_members(tar):
            path, is_dir = _check_tar_member(member, limits)
            _add(plan, seen, path, 0 if is_dir else member.size, is_dir, limits)
    total = plan.total_bytes
    if total >= limits.ratio_floor_bytes and total > limits.max_ratio * max(len(data), 1):
        raise ArchiveRefused(
            "archive-bomb",
            f"archive expands {total // max(len(data), 1)}× (limit {limits.max_ratio:g}×): refused as a bomb",
        )
    return plan


def inspect_archive(data: bytes, *, filename: str = "", limits: ArchiveLimits | None = None) -> ArchivePlan:
    """Check every entry of an archive held in memory; raise ``ArchiveRefused`` at the first problem."""
    limits = limits or ArchiveLimits()
    if len(data) > limits.max_archive_bytes:
        raise ArchiveRefused(
            "archive-too-large", f"archive is {len(data)} bytes (limit {limits.max_archive_bytes})"
        )
    fmt = archive_format(data, filename)
    plan = _inspect_zip(data, limits)[0] if fmt == "zip" else _inspect_tar(data, limits)
    if plan.file_count == 0:
        raise ArchiveRefused("archive-empty", f"{filename or 'archive'} holds no files")
    return plan


def _write(target: Path, source: IO[bytes], declared: int, path: str, limits: ArchiveLimits) -> int:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    written = 0
    with os.fdopen(fd, "wb") as out:
        while chunk := source.read(CHUNK):
            written += len(chunk)
            if written > declared or written > limits.max_entry_bytes:
                raise ArchiveRefused(
                    "archive-size-mismatch", f"entry {path} holds more bytes than its header declares", path
                )
            out.write(chunk)
    return written


def _extract_zip(data: bytes, dest: Path, limits: ArchiveLimits) -> None:
    _, members = _inspect_zip(data, limits)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info, path in members:
            try:
                with archive.open(info) as source:
                    _write(dest / path, source, info.file_size, path, limits)
            except (zipfile.BadZipFile, NotImplementedError, zlib.error, EOFError) as exc:
                raise ArchiveRefused("archive-corrupt", f"entry {path} cannot be read: {exc}", path) from None


def _extract_tar(data: bytes, dest: Path, limits: ArchiveLimits) -> None:
    tar = _open_tar(data, limits)
    with tar:
        for member in _tar_members(tar):
            path, is_dir = _check_tar_member(member, limits)
            if is_dir:
                (dest / path).mkdir(parents=True, exist_ok=True)
                continue
            source = tar.extractfile(member)
            if source is None:  # pragma: no cover - regular members always have a file object
                raise ArchiveRefused("archive-special-file", f"entry {path} has no content", path)
            _write(dest / path, source, member.size, path, limits)


def extract_archive(
    data: bytes, *, filename: str = "", limits: ArchiveLimits | None = None, parent: Path | None = None
) -> tuple[Path, ArchivePlan]:
    """Inspect, then unpack into a fresh temporary folder (removed again on any failure).

    The caller owns the returned folder and removes it when done.
    """
    limits = limits or ArchiveLimits()
    plan = inspect_archive(data, filename=filename, limits=limits)
    dest = Path(tempfile.mkdtemp(prefix="skill-archive-", dir=parent))
    try:
        if plan.format == "zip":
            _extract_zip(data, dest, limits)
        else:
            _extract_tar(data, dest, limits)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return dest, plan
