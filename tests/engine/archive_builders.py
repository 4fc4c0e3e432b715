"""Build hostile and honest archives in memory for the tests."""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from typing import Any

SKILL_MD = b"---\nname: deploy\ndescription: Deploys the service. Use when asked to ship.\n---\n# Deploy\n"


class _RawNameZipInfo(zipfile.ZipInfo):
    """Writes its name as raw cp437 bytes without the UTF-8 flag (as old zip tools do)."""

    def _encodeFilenameFlags(self) -> tuple[bytes, int]:
        return self.filename.encode("cp437"), self.flag_bits


def make_zip(
    entries: dict[str, bytes], *, special: dict[str, int] | None = None, raw_names: bool = False
) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in entries.items():
            info: zipfile.ZipInfo = _RawNameZipInfo(name) if raw_names else zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = ((special or {}).get(name, stat.S_IFREG | 0o644)) << 16
            archive.writestr(info, content)
    return buffer.getvalue()


def make_targz(entries: list[tuple[str, Any]], *, encoding: str = "utf-8") -> bytes:
    """Entries: (name, bytes) for files, (name, "dir"), (name, ("symlink", target)),
    (name, ("hardlink", target)), (name, "chr"), (name, "fifo")."""
    buffer = io.BytesIO()
    with tarfile.open(
        fileobj=buffer,
        mode="w:gz",
        encoding=encoding,
        format=tarfile.PAX_FORMAT if encoding == "utf-8" else tarfile.GNU_FORMAT,
    ) as tar:
        for name, value in entries:
            info = tarfile.TarInfo(name)
            if isinstance(value, bytes):
                info.size = len(value)
                tar.addfile(info, io.BytesIO(value))
                continue
            if value == "dir":
                info.type = tarfile.DIRTYPE
            elif value == "chr":
                info.type = tarfile.CHRTYPE
            elif value == "fifo":
                info.type = tarfile.FIFOTYPE
            elif value[0] == "symlink":
                info.type, info.linkname = tarfile.SYMTYPE, value[1]
            elif value[0] == "hardlink":
                info.type, info.linkname = tarfile.LNKTYPE, value[1]
            tar.addfile(info)
    return buffer.getvalue()
