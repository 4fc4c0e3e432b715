"""Demo proposals: a few pending improvements to the demo project skills (after the skills demo).

Idempotent: a proposal already stored for the same skill and text is not sent again.
"""

from __future__ import annotations

from typing import IO, Any

from governance.reviews import services
from governance.reviews.models import Proposal
from governance.skills.models import Skill
from portal.accounts.demo import DemoOrg

# (added text, section, change, reason) — the reason quotes the user message that prompted it.
IMPROVEMENTS = [
    (
        "\n## Gotchas\n- Check that CI is green on the target commit before starting; success: the "
        "status API answers `success`.\n",
        "Gotchas",
        "check CI before starting",
        "user: 'stop, CI on main is red, you should have checked that first'",
    ),
    (
        "\n## Before you finish\n- Post the result in the team channel with the link; success: "
        "the message shows the link.\n",
        "Before you finish",
        "announce the result",
        "user: 'you forgot to tell the channel again'",
    ),
    (
        "\n## Gotchas\n- Run it on a branch, never directly on main; success: `git branch --show-current` "
        "is not main.\n",
        "Gotchas",
        "never work on main",
        "user corrected this twice: 'please use a branch'",
    ),
]


def seed(*, demo: DemoOrg, stdout: IO[Any] | Any) -> None:
    proposer = demo.users["dana-dev"]
    skills = (
        Skill.objects.filter(
            source__kind="project", source__project__in=list(demo.projects.values()), removed_at__isnull=True
        )
        .exclude(current_version=None)
        .select_related("source", "current_version")
        .order_by("name", "id")[: len(IMPROVEMENTS)]
    )
    created = 0
    plan = list(zip(skills, IMPROVEMENTS, strict=False))
    if plan:
        # A second agent session proposing the first change again (other bullets): flagged duplicate.
        skill, (added, section, change, reason) = plan[0]
        plan.append((skill, (added.replace("\n- ", "\n* "), section, change, reason + " (another session)")))
    for skill, (added, section, change, reason) in plan:
        current = services.version_skill_md(skill.current_version)  # type: ignore[arg-type]
        text = current.decode("utf-8", "replace")
        proposed = text + ("" if text.endswith("\n") else "\n") + added
        if Proposal.objects.filter(skill=skill, proposed_text=proposed).exists():
            continue
        submission = services.Submission(
            skill=services.SkillRef(name=skill.name, source="project", catalog_id=skill.pk),
            base_sha256=skill.current_version.skill_md_sha256,  # type: ignore[union-attr]
            updates=[services.Update(section=section, change=change, reason=reason)],
            proposed_text=proposed,
            evidence={
                "session_id": f"demo-session-{skill.pk}",
                "agent": "claude-code",
                "agent_version": "2.1.0",
                "user": proposer.username,
            },
            proposer=f"claude-code ({proposer.username})",
        )
        try:
            services.proposal_submit(actor=proposer, submission=submission)
        except services.ReviewError as exc:
            stdout.write(f"  reviews: no demo proposal for {skill.name}: {exc.message}\n")
            continue
        created += 1
    if not skills:
        stdout.write("  reviews: no demo project skill yet (seed the skills demo first)\n")
    else:
        stdout.write(f"  reviews: {created} demo proposal(s) added\n")
