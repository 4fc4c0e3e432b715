"""Archives are checked entry by entry before anything is written; refused ones leave no trace."""

from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
import tempfile
from pathlib import Path

import pytest

from governance.engine.archives import ArchiveLimits, ArchiveRefused, extract_archive
from tests.engine.archive_builders import SKILL_MD, make_targz, make_zip


@pytest.fixture
def tmp_parent(tmp_path: Path) -> Path:
    parent = tmp_path / "unpack"
    parent.mkdir()
    return parent


def test_honest_zip_unpacks_into_a_fresh_folder(tmp_parent: Path) -> None:
    data = make_zip({"deploy/SKILL.md": SKILL_MD, "deploy/scripts/run.sh": b"echo ok\n"})
    dest, plan = extract_archive(data, filename="skills.zip", parent=tmp_parent)
    assert plan.format == "zip" and plan.file_count == 2
    assert (dest / "deploy/SKILL.md").read_bytes() == SKILL_MD
    assert (dest / "deploy/scripts/run.sh").read_bytes() == b"echo ok\n"


def test_honest_targz_unpacks(tmp_parent: Path) -> None:
    data = make_targz([("./deploy", "dir"), ("./deploy/SKILL.md", SKILL_MD), ("deploy/é-notes.md", b"x")])
    dest, plan = extract_archive(data, filename="skills.tar.gz", parent=tmp_parent)
    assert plan.format == "tar.gz"
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()) == [
        "deploy/SKILL.md",
        "deploy/é-notes.md",
    ]


def _refused(
    data: bytes, code: str, message: str, tmp_parent: Path, limits: ArchiveLimits | None = None
) -> None:
    with pytest.raises(ArchiveRefused) as caught:
        extract_archive(data, filename="upload", parent=tmp_parent, limits=limits)
    assert caught.value.code == code, caught.value.message
    assert message in caught.value.message
    assert list(tmp_parent.iterdir()) == [], "a refused archive must leave nothing on disk"


ZIP_CASES = [
    (
        {"../evil/SKILL.md": SKILL_MD},
        None,
        False,
        "archive-path-traversal",
        "escapes the archive with '..': ../evil/SKILL.md",
    ),
    ({"ok/../../x": b"x"}, None, False, "archive-path-traversal", "'..'"),
    ({"/etc/cron.d/x": b"x"}, None, False, "archive-absolute-path", "absolute path: /etc/cron.d/x"),
    ({"C:/Windows/x": b"x"}, None, False, "archive-absolute-path", "absolute path"),
    ({"deploy\\..\\..\\x": b"x"}, None, False, "archive-name-backslash", "backslash"),
    (
        {"deploy/link": b"/etc/passwd"},
        {"deploy/link": stat.S_IFLNK | 0o777},
        False,
        "archive-link",
        "deploy/link is a symbolic link",
    ),
    (
        {"deploy/dev": b""},
        {"deploy/dev": stat.S_IFCHR | 0o600},
        False,
        "archive-special-file",
        "deploy/dev is a device",
    ),
    ({"deploy/fifo": b""}, {"deploy/fifo": stat.S_IFIFO | 0o600}, False, "archive-special-file", "pipe"),
    ({"caf\u00e9/SKILL.md": SKILL_MD}, None, True, "archive-name-encoding", "not valid UTF-8"),
    ({"deploy/a\x07b": b"x"}, None, False, "archive-name-control", "control characters"),
    ({"deploy/\u202etxt.sh": b"x"}, None, False, "archive-name-deceptive", "direction-override"),
    (
        {"a/SKILL.md": SKILL_MD, "A/skill.md": SKILL_MD},
        None,
        False,
        "archive-duplicate-entry",
        "appears twice",
    ),
    ({"a": b"file", "a/b": b"x"}, None, False, "archive-file-as-folder", "lies under a file"),
    ({"x" * 300: b"x"}, None, False, "archive-name-too-long", "too long"),
]


@pytest.mark.parametrize(("entries", "special", "raw", "code", "message"), ZIP_CASES)
def test_hostile_zip_entries_are_refused(
    entries: dict[str, bytes],
    special: dict[str, int] | None,
    raw: bool,
    code: str,
    message: str,
    tmp_parent: Path,
) -> None:
    _refused(make_zip(entries, special=special, raw_names=raw), code, message, tmp_parent)


TAR_CASES = [
    ([("../../etc/x", b"x")], "archive-path-traversal", "'..'"),
    ([("/abs/x", b"x")], "archive-absolute-path", "absolute path"),
    ([("deploy/link", ("symlink", "/etc/passwd"))], "archive-link", "deploy/link is a link"),
    (
        [("deploy/SKILL.md", SKILL_MD), ("deploy/hard", ("hardlink", "deploy/SKILL.md"))],
        "archive-link",
        "is a link",
    ),
    ([("deploy/tty", "chr")], "archive-special-file", "device or pipe"),
    ([("deploy/fifo", "fifo")], "archive-special-file", "device or pipe"),
]


@pytest.mark.parametrize(("entries", "code", "message"), TAR_CASES)
def test_hostile_tar_entries_are_refused(entries: list, code: str, message: str, tmp_parent: Path) -> None:
    _refused(make_targz(entries), code, message, tmp_parent)


def test_non_utf8_tar_name_is_refused(tmp_parent: Path) -> None:
    data = make_targz([("caf\u00e9/SKILL.md", SKILL_MD)], encoding="latin-1")
    _refused(data, "archive-name-encoding", "not valid UTF-8: caf\\udce9/SKILL.md", tmp_parent)


def test_too_many_entries(tmp_parent: Path) -> None:
    data = make_zip({f"s/{i}.md": b"x" for i in range(30)})
    _refused(
        data, "archive-too-many-entries", "more than 20 entries", tmp_parent, ArchiveLimits(max_entries=20)
    )
    tar = make_targz([(f"s/{i}.md", b"x") for i in range(30)])
    _refused(
        tar, "archive-too-many-entries", "more than 20 entries", tmp_parent, ArchiveLimits(max_entries=20)
    )


def test_too_large(tmp_parent: Path) -> None:
    limits = ArchiveLimits(max_total_bytes=10_000, max_entry_bytes=8_000)
    data = make_zip({"a": os.urandom(6_000), "b": os.urandom(6_000)})
    _refused(data, "archive-too-large", "more than 10000 bytes", tmp_parent, limits)
    one = make_zip({"a": os.urandom(9_000)})
    _refused(one, "archive-entry-too-large", "entry a is 9000 bytes (limit 8000)", tmp_parent, limits)
    upload = ArchiveLimits(max_archive_bytes=100)
    _refused(make_zip({"a": os.urandom(500)}), "archive-too-large", "limit 100", tmp_parent, upload)


def test_zip_bomb_is_refused_by_ratio(tmp_parent: Path) -> None:
    data = make_zip({"bomb/zeros.bin": b"\0" * (6 * 1024 * 1024)})
    assert len(data) < 20_000
    _refused(data, "archive-bomb", "compression bomb", tmp_parent)


def test_targz_bomb_is_refused_by_ratio(tmp_parent: Path) -> None:
    data = make_targz([("bomb/zeros.bin", b"\0" * (6 * 1024 * 1024))])
    _refused(data, "archive-bomb", "refused as a bomb", tmp_parent)


def test_gzip_stream_bomb_is_cut_while_reading(tmp_parent: Path) -> None:
    # Sizes in headers are small, but a 20 MB extended header hides in the stream:
    # decompression stops at the limit instead of running on.
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("a/SKILL.md")
        info.pax_headers = {"comment": "a" * 20_000_000}
        info.size = len(SKILL_MD)
        tar.addfile(info, io.BytesIO(SKILL_MD))
    limits = ArchiveLimits(max_total_bytes=100_000, max_entries=10)
    _refused(buffer.getvalue(), "archive-bomb", "decompresses to more than", tmp_parent, limits)


def test_empty_archive_is_refused(tmp_parent: Path) -> None:
    _refused(gzip.compress(b"\0" * (64 * 1024 * 1024)), "archive-empty", "no files", tmp_parent)
    _refused(make_zip({}), "archive-empty", "no files", tmp_parent)


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"just some text", "archive-format"),
        (b"PK\x03\x04garbage", "archive-corrupt"),
        (b"\x1f\x8bgarbage", "archive-corrupt"),
    ],
)
def test_garbage_is_refused(data: bytes, code: str, tmp_parent: Path) -> None:
    _refused(data, code, "", tmp_parent)


def test_refusal_removes_partial_extraction(tmp_parent: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A header that lies about its size is only caught while writing: the folder must go too.
    from governance.engine import archives

    real_inspect = archives._inspect_zip

    def lying(data: bytes, limits: ArchiveLimits):
        plan, members = real_inspect(data, limits)
        members[-1][0].file_size = 3  # the second entry claims 3 bytes but holds more
        return plan, members

    monkeypatch.setattr(archives, "_inspect_zip", lying)
    data = make_zip({"a/SKILL.md": SKILL_MD, "a/b.md": b"much more than three bytes"})
    with pytest.raises(ArchiveRefused):
        extract_archive(data, parent=tmp_parent)
    assert list(tmp_parent.iterdir()) == []
    assert not any(Path(tempfile.gettempdir()).glob("skill-archive-*/a/b.md"))
