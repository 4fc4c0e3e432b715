"""Fetching a git repository at a ref with the git command line, safely.

- Only ``https://`` and ``ssh`` (``ssh://``, ``git@host:path``) URLs by default; ``file://`` and
  local paths only when ``allow_local`` is set (tests, an admin's own mirrors). ``ext::``,
  ``fd::`` and URLs or refs that start with ``-`` (option injection) are refused before git runs.
- git is told the same through ``GIT_ALLOW_PROTOCOL`` and ``protocol.*.allow`` so that a
  redirect or a submodule cannot switch transport.
- No prompts (``GIT_TERMINAL_PROMPT=0``, ssh ``BatchMode``), no hooks (``core.hooksPath`` to an
  empty folder), no system or global configuration, no submodules, no LFS smudge.
- Shallow: ``git fetch --depth 1`` of the ref (a branch, a tag or a full commit id), then a
  detached checkout; every git call has a timeout.

The commit checked out is returned, so an ingest can skip a commit it already stored.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from governance.engine.identity import IdentityError, parse_location

_REF = re.compile(r"^(?!-)(?!.*\.\.)(?!.*//)[A-Za-z0-9._/@+-]{1,200}\Z")
_SHA = re.compile(r"^[0-9a-f]{40}$|^[0-9a-f]{64}$")


class GitSourceError(Exception):
    """A repository that could not be fetched; ``code`` is stable, the message says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class GitCheckout:
    path: Path
    commit: str
    url: str
    ref: str


@dataclass(frozen=True, slots=True)
class GitOptions:
    allow_local: bool = False
    timeout_s: float = 120.0
    git: str = "git"


def check_url(url: str, *, allow_local: bool = False) -> str:
    """Return the URL as git should receive it, or raise ``GitSourceError``."""
    text = url.strip()
    if not text:
        raise GitSourceError("git-url", "no repository URL given")
    if text.startswith("-"):
        raise GitSourceError("git-url", f"refusing a URL that starts with '-': {text[:80]}")
    lowered = text.lower()
    if lowered.startswith(("ext::", "fd::")) or "::" in lowered.split("/", 1)[0]:
        raise GitSourceError("git-transport", f"refusing git's remote-helper transport in {text[:80]}")
    if lowered.startswith("file:") or not ("://" in text or re.match(r"^[^/\s]+@[^/\s]+:", text)):
        if not allow_local:
            raise GitSourceError(
                "git-local", "local paths and file:// URLs are not accepted as git sources here"
            )
        return text
    scheme = lowered.split("://", 1)[0] if "://" in lowered else "ssh"
    if scheme not in {"https", "ssh", "git+ssh", "ssh+git"}:
        raise GitSourceError("git-transport", f"only https:// and ssh URLs are accepted, not {scheme}://")
    try:
        parse_location(text)
    except IdentityError as exc:
        raise GitSourceError("git-url", str(exc)) from None
    return text


def check_ref(ref: str) -> str:
    if not ref:
        return "HEAD"
    if not _REF.match(ref) or ref.endswith((".lock", "/", ".")):
        raise GitSourceError("git-ref", f"not a valid branch, tag or commit: {ref[:80]!r}")
    return ref


def _environment(allow_local: bool, hooks_dir: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in {"PATH", "LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE"}}
    protocols = "https:ssh" + (":file" if allow_local else "")
    return {
        **keep,
        "HOME": hooks_dir,  # no ~/.gitconfig, no credential helpers of whoever runs the worker
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "/bin/false",
        "SSH_ASKPASS": "/bin/false",
        "GIT_SSH_COMMAND": "ssh -o BatchMode=yes -o StrictHostKeyChecking=accept-new",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_ALLOW_PROTOCOL": protocols,
        "GIT_PROTOCOL_FROM_USER": "0",
        "GIT_LFS_SKIP_SMUDGE": "1",
    }


def _config_args(hooks_dir: str, allow_local: bool) -> list[str]:
    pairs = {
        "core.hooksPath": hooks_dir,
        "protocol.ext.allow": "never",
        "protocol.fd.allow": "never",
        "protocol.file.allow": "always" if allow_local else "never",
        "protocol.git.allow": "never",
        "protocol.http.allow": "never",
        "submodule.recurse": "false",
        "core.fsmonitor": "false",
        "credential.helper": "",
        "advice.detachedHead": "false",
        "init.defaultBranch": "main",
    }
    args: list[str] = []
    for key, value in pairs.items():
        args += ["-c", f"{key}={value}"]
    return args


def _run(args: list[str], *, cwd: Path, env: dict[str, str], options: GitOptions, hooks: str) -> str:
    command = [options.git, *_config_args(hooks, options.allow_local), *args]
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=env,
            capture_output=True,
            timeout=options.timeout_s,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise GitSourceError(
            "git-timeout", f"git {args[0]} took longer than {options.timeout_s:g}s"
        ) from None
    except FileNotFoundError:
        raise GitSourceError("git-missing", "the git command line is not installed") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        tail = message[-1] if message else f"exit status {done.returncode}"
        raise GitSourceError("git-failed", f"git {args[0]} failed: {tail[:300]}")
    return done.stdout.decode("utf-8", "replace").strip()


def git_fetch(
    url: str, ref: str = "", *, dest: Path | None = None, options: GitOptions | None = None
) -> GitCheckout:
    """Shallow-fetch ``url`` at ``ref`` into ``dest`` (a fresh temporary folder by default).

    On failure the folder is removed (when this function created it) and ``GitSourceError``
    says why. The caller removes the checkout when done.
    """
    options = options or GitOptions()
    checked_url = check_url(url, allow_local=options.allow_local)
    checked_ref = check_ref(ref)
    created = dest is None
    target = Path(tempfile.mkdtemp(prefix="skill-git-")) if dest is None else dest
    # An empty hooks folder beside the checkout (same scratch space, removed below).
    hooks = tempfile.mkdtemp(prefix="skill-git-hooks-", dir=target.parent)
    env = _environment(options.allow_local, hooks)
    try:
        target.mkdir(parents=True, exist_ok=True)
        _run(["init", "-q"], cwd=target, env=env, options=options, hooks=hooks)
        _run(
            ["remote", "add", "origin", "--", checked_url], cwd=target, env=env, options=options, hooks=hooks
        )
        fetch = ["fetch", "-q", "--depth", "1", "--no-tags", "--no-recurse-submodules", "origin"]
        _run([*fetch, "--", checked_ref], cwd=target, env=env, options=options, hooks=hooks)
        _run(["checkout", "-q", "--detach", "FETCH_HEAD"], cwd=target, env=env, options=options, hooks=hooks)
        commit = _run(["rev-parse", "HEAD"], cwd=target, env=env, options=options, hooks=hooks)
    except BaseException:
        if created:
            shutil.rmtree(target, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(hooks, ignore_errors=True)
    if not _SHA.match(commit):
        raise GitSourceError("git-failed", f"unexpected commit id {commit[:80]!r}")
    return GitCheckout(path=target, commit=commit, url=checked_url, ref=checked_ref)
