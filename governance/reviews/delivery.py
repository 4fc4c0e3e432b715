"""Delivering an approved version to the project's git repository, with the git CLI.

Every git command runs with a timeout, without a terminal prompt (credentials come from the
operator's git configuration or an SSH agent, never from a question), with the dangerous
transports (``ext::``, ``fd::``) refused, and in a throw-away clone.

Delivery is idempotent: the commit carries a ``Portal-Delivery`` trailer, so a retry that finds
the branch already pushed by the same delivery reports that commit instead of pushing again.
Before writing, the skill folder in the repository must hold exactly the version the change
was made against; otherwise the delivery fails rather than overwrite someone's commit.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from datetime import datetime
from email.utils import format_datetime
from pathlib import Path, PurePosixPath

from governance.engine.proposals import unified_diff

ALLOWED_PROTOCOLS = "file:git:http:https:ssh"
_CREDENTIALS = re.compile(r"(\b[a-z][a-z0-9+.-]*://)[^/@\s]+@", re.IGNORECASE)


class DeliveryError(Exception):
    """A delivery that could not be made; the message is shown to reviewers (no credentials)."""


@dataclass(frozen=True, slots=True)
class Author:
    name: str
    email: str


@dataclass(frozen=True, slots=True)
class Commit:
    subject: str
    body: str
    author: Author
    date: datetime
    marker: str  # value of the Portal-Delivery trailer, unique per delivery

    @property
    def message(self) -> str:
        return f"{self.subject}\n\n{self.body.rstrip()}\n\nPortal-Delivery: {self.marker}\n"


def redact(text: str) -> str:
    """Remove user information (tokens, passwords) from URLs in git's output."""
    return _CREDENTIALS.sub(r"\1***@", text)


def _safe_folder(folder: str) -> str:
    path = PurePosixPath(folder)
    if path.is_absolute() or ".." in path.parts or not path.parts or folder.startswith("-"):
        raise DeliveryError(f"refusing to write outside the repository: skill folder {folder!r}")
    return path.as_posix()


class Git:
    """Runs git in one working directory, each command bounded by ``timeout`` seconds."""

    def __init__(self, cwd: Path, *, timeout: float) -> None:
        self.cwd = cwd
        self.timeout = timeout
        self.env = {
            **os.environ,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_ASKPASS": "/bin/false",
            "SSH_ASKPASS": "/bin/false",
            "GIT_SSH_COMMAND": os.environ.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes -o ConnectTimeout=20"),
            "GIT_ALLOW_PROTOCOL": ALLOWED_PROTOCOLS,
            "GIT_EDITOR": "/bin/false",
            "LC_ALL": "C",
        }

    def run(self, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> bytes:
        command = ["git", "-c", "core.hooksPath=/dev/null", "-c", "commit.gpgSign=false", *args]
        try:
            done = subprocess.run(
                command,
                cwd=self.cwd,
                input=stdin,
                capture_output=True,
                timeout=self.timeout,
                env={**self.env, **(env or {})},
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise DeliveryError(f"git {args[0]} timed out after {self.timeout:g} s") from None
        if done.returncode != 0:
            message = redact(done.stderr.decode("utf-8", "replace").strip() or f"exit {done.returncode}")
            raise DeliveryError(f"git {args[0]} failed: {message}")
        return done.stdout

    def text(self, *args: str) -> str:
        return self.run(*args).decode("utf-8", "replace").strip()


def _blob_id(content: bytes, object_format: str) -> str:
    digest = hashlib.new(object_format)
    digest.update(b"blob %d\0" % len(content))
    digest.update(content)
    return digest.hexdigest()


def _tree_files(git: Git, ref: str, folder: str) -> dict[str, tuple[str, str]]:
    """path (relative to folder) → (mode, object id) of every file under ``folder`` at ``ref``."""
    listing = git.run("ls-tree", "-r", "-z", "--full-tree", ref, "--", folder + "/")
    files: dict[str, tuple[str, str]] = {}
    prefix = folder + "/"
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, path = entry.partition(b"\t")
        mode, _kind, object_id = meta.decode().split(" ")
        name = path.decode("utf-8", "surrogateescape")
        files[name.removeprefix(prefix)] = (mode, object_id)
    return files


def push_version(
    *,
    remote: str,
    branch: str,
    folder: str,
    files: dict[str, bytes],
    expected: dict[str, bytes],
    start_branches: tuple[str, ...] = (),
    commit: Commit,
    timeout: float,
) -> str:
    """Commit ``files`` as the whole content of ``folder`` on ``branch`` and push it to ``remote``.

    The branch starts from the remote's default branch, or from the first of ``start_branches``
    (remote branch names) whose ``folder`` holds exactly ``expected``. Returns the commit id.
    """
    folder = _safe_folder(folder)
    with tempfile.TemporaryDirectory(prefix="portal-delivery-") as tmp:
        work = Path(tmp) / "repo"
        Git(Path(tmp), timeout=timeout).run("clone", "--quiet", "--no-tags", "--", remote, str(work))
        git = Git(work, timeout=timeout)

        existing = git.text("ls-remote", "--heads", "origin", f"refs/heads/{branch}")
        if existing:
            git.run("fetch", "--quiet", "origin", f"+refs/heads/{branch}:refs/remotes/origin/{branch}")
            message = git.text("log", "-1", "--format=%B", f"refs/remotes/origin/{branch}")
            if f"Portal-Delivery: {commit.marker}" in message:
                return git.text("rev-parse", f"refs/remotes/origin/{branch}")
            raise DeliveryError(
                f"branch {branch} already exists on the remote and was not made by this delivery"
            )

        try:
            git.run("rev-parse", "--verify", "--quiet", "HEAD")
        except DeliveryError:
            raise DeliveryError("the repository has no commit on its default branch") from None
        object_format = git.text("rev-parse", "--show-object-format") or "sha1"
        wanted = {path: _blob_id(content, object_format) for path, content in expected.items()}
        candidates = ["HEAD"]
        for name in start_branches:
            if git.text("ls-remote", "--heads", "origin", f"refs/heads/{name}"):
                git.run("fetch", "--quiet", "origin", f"+refs/heads/{name}:refs/remotes/origin/{name}")
                candidates.append(f"refs/remotes/origin/{name}")
        start = None
        modes: dict[str, str] = {}
        for ref in candidates:
            tree = _tree_files(git, ref, folder)
            if {path: object_id for path, (_, object_id) in tree.items()} == wanted:
                start = ref
                modes = {path: mode for path, (mode, _) in tree.items()}
                break
        if start is None:
            raise DeliveryError(
                f"{folder} in the repository no longer holds the version this change was made "
                "against (someone changed it in git): ingest the project again and review anew"
            )

        git.run("checkout", "--quiet", "-B", branch, start)
        git.run("rm", "-r", "--quiet", "--ignore-unmatch", "--", folder)
        for path, content in files.items():
            target = work / folder / PurePosixPath(_safe_folder(path))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        git.run("add", "--all", "--", folder)
        for path, mode in modes.items():
            if path in files and mode == "100755":
                git.run("update-index", "--chmod=+x", "--", f"{folder}/{path}")
        if not git.run("diff", "--cached", "--name-only"):
            raise DeliveryError("nothing to commit: the repository already holds this version")

        stamp = commit.date.isoformat()
        identity = {
            "GIT_AUTHOR_NAME": commit.author.name,
            "GIT_AUTHOR_EMAIL": commit.author.email,
            "GIT_AUTHOR_DATE": stamp,
            "GIT_COMMITTER_NAME": commit.author.name,
            "GIT_COMMITTER_EMAIL": commit.author.email,
            "GIT_COMMITTER_DATE": stamp,
        }
        git.run("commit", "--quiet", "--no-verify", "-F", "-", stdin=commit.message.encode(), env=identity)
        git.run("push", "--quiet", "--porcelain", "origin", f"HEAD:refs/heads/{branch}")
        return git.text("rev-parse", "HEAD")


def format_patch(*, folder: str, before: dict[str, bytes], after: dict[str, bytes], commit: Commit) -> str:
    """A patch in ``git format-patch`` form (``git am`` keeps its author and message)."""
    folder = _safe_folder(folder)
    parts: list[str] = []
    for path in sorted(set(before) | set(after)):
        old = before.get(path)
        new = after.get(path)
        if old == new:
            continue
        full = f"{folder}/{_safe_folder(path)}"
        try:
            old_text = old.decode("utf-8") if old is not None else ""
            new_text = new.decode("utf-8") if new is not None else ""
        except UnicodeDecodeError:
            raise DeliveryError(f"{full} is binary: a text patch cannot carry it") from None
        header = f"diff --git a/{full} b/{full}\n"
        if old is None:
            header += "new file mode 100644\n"
        elif new is None:
            header += "deleted file mode 100644\n"
        body = unified_diff(
            old_text,
            new_text,
            before_label=f"a/{full}" if old is not None else "/dev/null",
            after_label=f"b/{full}" if new is not None else "/dev/null",
        )
        parts.append(header + body)
    if not parts:
        raise DeliveryError("nothing to deliver: the two versions have the same files")
    return (
        "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
        f"From: {commit.author.name} <{commit.author.email}>\n"
        f"Date: {format_datetime(commit.date)}\n"
        f"Subject: [PATCH] {commit.subject}\n\n"
        f"{commit.message.split(chr(10), 2)[2]}---\n" + "".join(parts) + "-- \nskill governance portal\n"
    )
