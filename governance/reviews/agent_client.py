"""Send skill-change proposals from a Claude Code installation to the portal (standard library only).

Copy this file next to a project (e.g. ``.claude/hooks/skill_proposal.py``) and wire it as a
Claude Code hook; it needs Python 3.11, git, and two environment variables:
``SKILL_PORTAL_URL`` (e.g. https://skills.example.com) and ``SKILL_PORTAL_TOKEN`` (a token with
the ``reviews:write`` scope only: it can propose, never approve or write a skill).

Two ways in:

* as a ``PostToolUse`` hook on ``Write|Edit|MultiEdit``: when the agent (or Claude Code's
  skill-improvement apply step) changes a project skill's SKILL.md, the change is sent as a
  proposal against the committed SKILL.md (``git show HEAD:…``), with the last user message of
  the transcript as its reason; with ``--revert`` the file is restored, so the change exists
  only as a proposal until a team lead approves it in the portal::

      {"hooks": {"PostToolUse": [{"matcher": "Write|Edit|MultiEdit", "hooks": [{"type": "command",
        "command": "python3 \\"$CLAUDE_PROJECT_DIR/.claude/hooks/skill_proposal.py\\" hook --revert"}]}]}}

* from the detector's output (``[{section, change, reason}]``) and the proposed SKILL.md::

      python3 skill_proposal.py send --skill-dir .claude/skills/deploy \\
          --updates updates.json --proposed new-SKILL.md --session-id "$SESSION"

Exit codes: 0 sent (or nothing to send); 2 refused or failed, with the portal's message on stderr
(in a hook, Claude Code shows it to the model).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

TIMEOUT_SECONDS = 20
AGENT = "claude-code"


class ClientError(Exception):
    pass


class NotAProjectSkill(ClientError):
    """The SKILL.md is not committed in a git repository (a user skill, a new skill): not a target."""


class Refused(ClientError):
    """The portal answered and refused the proposal (a 4xx with its reason)."""


def _git(*args: str, cwd: Path) -> bytes:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        timeout=TIMEOUT_SECONDS,
        env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
        check=False,
    )
    if done.returncode != 0:
        raise ClientError(f"git {args[0]} failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def skill_folder_of(path: Path) -> Path | None:
    """The skill folder when ``path`` is a SKILL.md inside ``.claude/skills/<name>/``."""
    if (
        path.name != "SKILL.md"
        or path.parent.parent.name != "skills"
        or path.parent.parent.parent.name != ".claude"
    ):
        return None
    return path.parent


def last_user_message(transcript: Path | None) -> str:
    """The last message the user typed, from a Claude Code JSONL transcript ("" if none)."""
    if transcript is None or not transcript.is_file():
        return ""
    found = ""
    with transcript.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if not isinstance(record, dict) or record.get("type") != "user":
                continue
            content = (record.get("message") or {}).get("content")
            if isinstance(content, str):
                found = content
            elif isinstance(content, list):
                texts = [
                    c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text"
                ]
                if texts:
                    found = "\n".join(texts)
    return found.strip()[:2000]


def build_proposal(
    *,
    skill_dir: Path,
    proposed: bytes,
    updates: list[dict[str, str]],
    session_id: str = "",
    prompt_id: str = "",
    user: str = "",
    agent_version: str = "",
) -> dict[str, Any] | None:
    """The request body for the portal, or None when the SKILL.md equals the committed one."""
    try:
        root = Path(_git("rev-parse", "--show-toplevel", cwd=skill_dir).decode().strip())
        relative = skill_dir.resolve().relative_to(root.resolve()).as_posix()
        base = _git("show", f"HEAD:{relative}/SKILL.md", cwd=root)
    except ClientError as exc:
        raise NotAProjectSkill(f"{skill_dir} is not a skill committed in a git repository ({exc})") from None
    if base == proposed:
        return None
    repository = _git("remote", "get-url", "origin", cwd=root).decode().strip()
    return {
        "skill": {"name": skill_dir.name, "source": "project", "repository": repository, "path": relative},
        "base_sha256": hashlib.sha256(base).hexdigest(),
        "updates": updates,
        "proposed_text": proposed.decode("utf-8"),
        "evidence": {
            "session_id": session_id,
            "prompt_id": prompt_id,
            "agent": AGENT,
            "agent_version": agent_version,
            "user": user,
        },
        "proposer": f"{AGENT} ({user})" if user else AGENT,
    }


def send(body: dict[str, Any], *, url: str, token: str) -> dict[str, Any]:
    request = urllib.request.Request(  # noqa: S310 (the portal URL is the operator's configuration)
        url.rstrip("/") + "/api/v1/reviews/suggestions",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:  # noqa: S310
            return dict(json.loads(response.read()))
    except urllib.error.HTTPError as exc:
        try:
            detail = json.loads(exc.read()).get("detail", exc.reason)
        except ValueError:
            detail = exc.reason
        raise Refused(f"the portal refused the proposal ({exc.code}): {detail}") from None
    except urllib.error.URLError as exc:
        raise ClientError(f"the portal is unreachable: {exc.reason}") from None


def _settings() -> tuple[str, str]:
    url = os.environ.get("SKILL_PORTAL_URL", "")
    token = os.environ.get("SKILL_PORTAL_TOKEN", "")
    if not url or not token:
        raise ClientError("set SKILL_PORTAL_URL and SKILL_PORTAL_TOKEN (a reviews:write token)")
    return url, token


def run_hook(*, stdin: str, revert: bool) -> str:
    """Handle one PostToolUse event; returns a message ("" when the event is not about a skill)."""
    event = json.loads(stdin or "{}")
    file_path = (event.get("tool_input") or {}).get("file_path") or ""
    if not file_path:
        return ""
    path = Path(file_path)
    if not path.is_absolute():
        path = Path(event.get("cwd") or ".") / path
    skill_dir = skill_folder_of(path)
    if skill_dir is None or not path.is_file():
        return ""
    reason = last_user_message(Path(event["transcript_path"]) if event.get("transcript_path") else None)
    updates = [
        {
            "section": "",
            "change": f"{event.get('tool_name', 'Edit')} of SKILL.md during the session",
            "reason": reason,
        }
    ]
    try:
        body = build_proposal(
            skill_dir=skill_dir,
            proposed=path.read_bytes(),
            updates=updates,
            session_id=str(event.get("session_id", "")),
            user=os.environ.get("USER", ""),
        )
    except NotAProjectSkill:
        return ""  # user skills and skills not committed yet are not self-evolution targets
    if body is None:
        return ""
    url, token = _settings()
    try:
        created = send(body, url=url, token=token)
    except Refused:
        if revert:  # a refused change (e.g. to the frontmatter) does not stay in the working tree either
            _git("checkout", "--", path.name, cwd=skill_dir)
        raise
    if revert:
        _git("checkout", "--", path.name, cwd=skill_dir)
    kept = "restored to the committed version" if revert else "left as edited locally"
    return (
        f"Proposal #{created['id']} ({created['state']}) sent to the skill portal for review by the "
        f"team leads; {path} was {kept}."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Send a skill-change proposal to the skill governance portal"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    hook = commands.add_parser("hook", help="read a Claude Code PostToolUse event on stdin")
    hook.add_argument("--revert", action="store_true", help="restore the committed SKILL.md after sending")
    manual = commands.add_parser("send", help="send the detector's updates and the proposed SKILL.md")
    manual.add_argument("--skill-dir", type=Path, required=True)
    manual.add_argument("--updates", type=Path, required=True, help="JSON list of {section, change, reason}")
    manual.add_argument("--proposed", type=Path, required=True, help="the proposed SKILL.md")
    manual.add_argument("--session-id", default="")
    manual.add_argument("--prompt-id", default="")
    manual.add_argument("--agent-version", default="")
    args = parser.parse_args(argv)
    try:
        if args.command == "hook":
            message = run_hook(stdin=sys.stdin.read(), revert=args.revert)
        else:
            updates = json.loads(args.updates.read_text(encoding="utf-8"))
            body = build_proposal(
                skill_dir=args.skill_dir,
                proposed=args.proposed.read_bytes(),
                updates=updates,
                session_id=args.session_id,
                prompt_id=args.prompt_id,
                user=os.environ.get("USER", ""),
                agent_version=args.agent_version,
            )
            if body is None:
                message = "the proposed SKILL.md equals the committed one: nothing to send"
            else:
                url, token = _settings()
                created = send(body, url=url, token=token)
                message = f"Proposal #{created['id']} ({created['state']}, flags: {created['flags']}) sent."
    except (ClientError, OSError, ValueError, subprocess.TimeoutExpired) as exc:
        print(f"skill proposal not sent: {exc}", file=sys.stderr)
        return 2
    if message:
        print(message, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
