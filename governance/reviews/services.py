"""Writes of the reviews concern: proposals in, decisions, versions, deliveries, rollbacks.

The gates are structure (DOMAIN §9):
1. only project skills are targets; 2. every update carries its reason; 3. the proposing side
has no write: ``proposal_submit`` only stores a proposal, a version is created by
``proposal_approve`` (a reviewer) alone; 4. the frontmatter bytes stay identical (compared as
bytes, for agents' proposals and reviewers' edits alike); 5. a proposal is made against a base
version and turns stale when the base moved; 6. ``settings.SELF_EVOLUTION_ENABLED`` switches the
whole feature off, and nothing here can change it.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.contrib.auth.models import User
from django.db import OperationalError, transaction
from django.utils import timezone

from governance.audit.services import audit_record
from governance.engine.identity import IdentityError, canonical_identity
from governance.engine.proposals import (
    PatchError,
    UndelimitedFrontmatter,
    apply_unified_diff,
    change_signature,
    frontmatter_difference,
    is_bloat,
)
from governance.engine.skillfile import parse_skill_md
from governance.engine.types import PackageFile, ParsedSkill, SourceKind
from governance.reviews.delivery import Author, Commit, DeliveryError, format_patch, push_version
from governance.reviews.models import (
    Delivery,
    DeliveryKind,
    DeliveryMode,
    DeliveryState,
    Proposal,
    ProposalComment,
    ProposalState,
)
from governance.skills.models import Skill, SkillVersion, VersionOrigin
from governance.skills.selectors import version_file_contents, version_package_files
from governance.skills.services import skill_version_create
from portal.accounts.models import Project, Role
from portal.accounts.services import user_led_team_ids, user_role

logger = logging.getLogger(__name__)

SKILL_MD = "SKILL.md"
MAX_SKILL_MD_BYTES = 512 * 1024
T = TypeVar("T")


class ReviewError(Exception):
    """A refused request; ``status`` is the HTTP status the API and pages answer with."""

    status = 422

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class FeatureOff(ReviewError):
    status = 403


class NotAllowed(ReviewError):
    status = 403


class NotFound(ReviewError):
    status = 404


class Conflict(ReviewError):
    status = 409


# ---------------------------------------------------------------------------------------------
# Proposals in
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SkillRef:
    """How the agent names the skill: a catalog id, or the repository and the skill's folder/name."""

    name: str
    source: str
    catalog_id: int | None = None
    repository: str = ""
    path: str = ""


@dataclass(frozen=True, slots=True)
class Update:
    section: str
    change: str
    reason: str


@dataclass(slots=True)
class Submission:
    skill: SkillRef
    base_sha256: str
    updates: list[Update]
    proposed_text: str | None = None
    diff: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    proposer: str = ""


def feature_enabled() -> bool:
    """The kill switch, read from settings (the environment) on every call; never written here."""
    return bool(settings.SELF_EVOLUTION_ENABLED)


def _require_feature() -> None:
    if not feature_enabled():
        raise FeatureOff(
            "self-evolution is switched off on this portal (SELF_EVOLUTION_ENABLED); "
            "no proposal is accepted and none is applied"
        )


def _check_updates(updates: list[Update]) -> None:
    if not updates:
        raise ReviewError("updates is empty: a proposal lists each change with its reason")
    for index, update in enumerate(updates, start=1):
        if not update.reason.strip():
            raise ReviewError(
                f"update {index} (section {update.section!r}) has no reason: every change must "
                "carry the user message that prompted it"
            )
        if not update.change.strip():
            raise ReviewError(f"update {index} (section {update.section!r}) has no change")


def _not_a_target(kind: str) -> ReviewError:
    return ReviewError(
        f"only project skills may be changed by self-evolution; {kind} skills are never targets "
        "(they are not in a repository the team reviews)"
    )


def _resolve_skill(ref: SkillRef) -> Skill:
    if ref.source != SourceKind.PROJECT.value:
        raise _not_a_target(ref.source or "unnamed-source")
    skills = Skill.objects.select_related("source", "source__project", "current_version")
    if ref.catalog_id is not None:
        skill = skills.filter(pk=ref.catalog_id).first()
        if skill is None:
            raise NotFound(f"no skill with catalog id {ref.catalog_id}")
        if ref.name and skill.name != ref.name:
            raise ReviewError(f"catalog id {ref.catalog_id} is skill {skill.name!r}, not {ref.name!r}")
    else:
        if not ref.repository:
            raise ReviewError("name the skill by catalog_id, or by repository and name")
        try:
            identity = canonical_identity(ref.repository)
        except IdentityError as exc:
            raise ReviewError(f"repository {ref.repository!r} is not a repository location: {exc}") from None
        candidates = skills.filter(name=ref.name, source__identity=identity, removed_at__isnull=True)
        if ref.path:
            candidates = candidates.filter(location=ref.path.strip("/"))
        found = list(candidates[:2])
        if not found:
            raise NotFound(f"no skill {ref.name!r} from {identity} is in the catalog")
        if len(found) > 1:
            raise ReviewError(f"several skills {ref.name!r} live in {identity}: give path or catalog_id")
        skill = found[0]
    if skill.source.kind != SourceKind.PROJECT.value:
        raise _not_a_target(skill.source.kind)
    if skill.current_version is None:
        raise ReviewError(f"skill {skill.name!r} has no stored version yet")
    if skill.removed_at is not None:
        raise Conflict(f"skill {skill.name!r} was removed from its repository at the last ingest")
    return skill


def skill_owner_project(skill: Skill) -> Project | None:
    """The project owning a skill: its source's project, else the project registered for the same
    repository whose path is the longest prefix of the skill's folder (monorepos)."""
    if skill.source.project_id is not None:
        return skill.source.project
    best: Project | None = None
    for project in Project.objects.select_related("team").exclude(repository_url=""):
        try:
            same = canonical_identity(project.repository_url) == skill.source.identity
        except IdentityError:
            continue
        prefix = project.path.strip("/")
        inside = not prefix or skill.location == prefix or skill.location.startswith(prefix + "/")
        if same and inside and (best is None or len(prefix) > len(best.path.strip("/"))):
            best = project
    return best


def version_skill_md(version: SkillVersion) -> bytes:
    return version_file_contents(version).get(SKILL_MD, b"")


def _proposed_bytes(submission: Submission, base: bytes) -> bytes:
    if (submission.proposed_text is None) == (submission.diff is None):
        raise ReviewError("send exactly one of proposed_text (the whole new SKILL.md) or diff (unified)")
    if submission.diff is not None:
        try:
            text = apply_unified_diff(base.decode("utf-8"), submission.diff)
        except (PatchError, UnicodeDecodeError) as exc:
            raise ReviewError(f"the diff does not apply to the base SKILL.md: {exc}") from None
    else:
        text = submission.proposed_text or ""
    data = text.encode("utf-8")
    if len(data) > MAX_SKILL_MD_BYTES:
        raise ReviewError(f"the proposed SKILL.md is {len(data):,} bytes, over {MAX_SKILL_MD_BYTES:,}")
    return data


def check_frontmatter_unchanged(base: bytes, proposed: bytes) -> None:
    try:
        difference = frontmatter_difference(base, proposed)
    except UndelimitedFrontmatter as exc:
        raise ReviewError(str(exc)) from None
    if difference is not None:
        raise ReviewError(difference.describe())


def _refuse(*, actor: User, submission: Submission, error: ReviewError) -> None:
    audit_record(
        actor=actor,
        action="proposal.refused",
        target_type="skill",
        target_id=str(submission.skill.catalog_id or ""),
        target_label=f"{submission.skill.name} ({submission.skill.source})",
        evidence={
            "reason": error.message,
            "status": error.status,
            "repository": submission.skill.repository,
            "proposer": submission.proposer,
            **{k: v for k, v in submission.evidence.items() if isinstance(v, str | int)},
        },
        before_sha256=submission.base_sha256[:64],
    )


def proposal_submit(*, actor: User, submission: Submission) -> Proposal:
    """Store an agent's proposal after the refusal gates, flagged stale / bloat / duplicate.

    Raises ReviewError (nothing stored but a ``proposal.refused`` ledger entry) when refused.
    """
    try:
        return _proposal_submit(actor=actor, submission=submission)
    except ReviewError as error:
        _refuse(actor=actor, submission=submission, error=error)
        raise


def _proposal_submit(*, actor: User, submission: Submission) -> Proposal:
    _require_feature()
    _check_updates(submission.updates)
    skill = _resolve_skill(submission.skill)
    base_version = (
        SkillVersion.objects.filter(skill=skill, skill_md_sha256=submission.base_sha256.lower())
        .order_by("-number")
        .first()
    )
    if base_version is None:
        raise Conflict(
            f"base_sha256 {submission.base_sha256[:12]}… matches no stored version of {skill.name!r}; "
            "propose against the SKILL.md the portal knows (ingest the project first)"
        )
    base = version_skill_md(base_version)
    proposed = _proposed_bytes(submission, base)
    check_frontmatter_unchanged(base, proposed)
    if proposed == base:
        raise ReviewError("the proposal changes nothing: its SKILL.md equals the base")
    project = skill_owner_project(skill)
    if project is None:
        raise ReviewError(
            f"no project owns {skill.source.identity} {skill.location}: an admin must register it, "
            "so the proposal can reach the team that reviews it"
        )
    base_text = base.decode("utf-8", "replace")
    proposed_text = proposed.decode("utf-8")
    signature = change_signature(base_text, proposed_text)
    with transaction.atomic():
        duplicate = (
            Proposal.objects.filter(
                skill=skill, change_signature=signature, state=ProposalState.PENDING, duplicate_of=None
            )
            .order_by("created_at", "id")
            .first()
        )
        stale = skill.current_version_id != base_version.pk
        proposal = Proposal.objects.create(
            skill=skill,
            project=project,
            team_id=project.team_id,
            base_version=base_version,
            base_sha256=base_version.skill_md_sha256,
            proposed_text=proposed_text,
            proposed_sha256=hashlib.sha256(proposed).hexdigest(),
            updates=[
                {"section": u.section, "change": u.change, "reason": u.reason} for u in submission.updates
            ],
            evidence=submission.evidence,
            proposer=actor,
            proposer_label=(submission.proposer or actor.get_username())[:200],
            state=ProposalState.STALE if stale else ProposalState.PENDING,
            flag_stale=stale,
            flag_bloat=is_bloat(base_text, proposed_text),
            duplicate_of=duplicate,
            change_signature=signature,
        )
        audit_record(
            actor=actor,
            action="proposal.received",
            target_type="proposal",
            target_id=proposal.pk,
            target_label=f"#{proposal.pk} {skill.name}",
            evidence={
                "skill_id": skill.pk,
                "project": project.slug,
                "flags": proposal.flags,
                "updates": proposal.updates,
                **submission.evidence,
            },
            before_sha256=proposal.base_sha256,
            after_sha256=proposal.proposed_sha256,
        )
    return proposal


# ---------------------------------------------------------------------------------------------
# Decisions
# ---------------------------------------------------------------------------------------------


def review_refusal(*, user: User, proposal: Proposal) -> str | None:
    """Why ``user`` may not decide ``proposal`` (None when they may): routing and separation of duties."""
    role = user_role(user)
    if role not in (Role.LEAD, Role.ADMIN):
        return "only team leads decide proposals"
    if proposal.team_id is None or proposal.team_id not in user_led_team_ids(user):
        team = proposal.team.name if proposal.team else "no team"
        return f"this proposal is routed to the leads of {team}"
    if proposal.proposer_id == user.pk:
        return "you made this proposal: someone else must decide it"
    names = {user.get_username().lower()}
    if user.email:
        names.add(user.email.lower())
    session_user = str(proposal.evidence.get("user", "")).lower()
    if proposal.proposer_label.lower() in names or session_user in names:
        return "this change came from your own session: someone else must decide it"
    return None


def can_review(*, user: User, proposal: Proposal) -> bool:
    return review_refusal(user=user, proposal=proposal) is None


def _require_reviewer(*, user: User, proposal: Proposal) -> None:
    refusal = review_refusal(user=user, proposal=proposal)
    if refusal is not None:
        raise NotAllowed(refusal)


def _retry_when_locked(work: Callable[[], T]) -> T:
    """Run a write transaction, retrying when SQLite reports its single writer lock as busy.

    PostgreSQL waits on row locks instead and never raises this; the retried work re-reads
    everything, so the loser of a race sees the winner's commit.
    """
    for attempt in range(20):
        try:
            return work()
        except OperationalError as exc:
            if "locked" not in str(exc) or attempt == 19:
                raise
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")


def _package(*, skill: Skill, base: SkillVersion, skill_md: bytes) -> ParsedSkill:
    """The whole package of ``base`` with its SKILL.md replaced, parsed and checked by the engine."""
    folder = skill.location.rsplit("/", 1)[-1]
    parsed = parse_skill_md(skill_md, folder=folder, path=skill.location, source=SourceKind.PROJECT)
    files = [f for f in version_package_files(base) if f.path != SKILL_MD]
    files.append(
        PackageFile(
            path=SKILL_MD, sha256=hashlib.sha256(skill_md).hexdigest(), size=len(skill_md), content=skill_md
        )
    )
    parsed.files = sorted(files, key=lambda f: f.path)
    return parsed


def _delivery_mode(project: Project | None) -> str:
    if project is None or project.read_only or not project.push_url:
        return DeliveryMode.PATCH
    return DeliveryMode.PUSH


def _enqueue(delivery: Delivery) -> None:
    from governance.reviews.tasks import deliver

    delivery_id = delivery.pk
    # robust: a broker outage must not turn a committed decision into an error; the sweeper resends.
    transaction.on_commit(lambda: deliver.delay(delivery_id), robust=True)


def proposal_approve(
    *, proposal_id: int, reviewer: User, edited_text: str | None = None, note: str = ""
) -> Proposal:
    """Approve a pending proposal: a new version of the whole package, then its delivery.

    Two approvals racing on one base: the conditional updates below let exactly one create the
    version; the other finds the base moved and turns its proposal stale (Conflict).
    """
    _require_feature()
    proposal = _retry_when_locked(
        lambda: _approve(proposal_id=proposal_id, reviewer=reviewer, edited_text=edited_text, note=note)
    )
    if proposal.state == ProposalState.STALE:
        raise Conflict(
            f"the skill changed since proposal #{proposal.pk} was made (another change was applied "
            "first): it is now stale, nothing was applied"
        )
    return proposal


@transaction.atomic
def _approve(*, proposal_id: int, reviewer: User, edited_text: str | None, note: str) -> Proposal:
    proposal = (
        Proposal.objects.select_for_update(of=("self",))
        .select_related("skill", "skill__source", "project", "team", "base_version")
        .filter(pk=proposal_id)
        .first()
    )
    if proposal is None:
        raise NotFound(f"no proposal #{proposal_id}")
    _require_reviewer(user=reviewer, proposal=proposal)
    now = timezone.now()
    base = version_skill_md(proposal.base_version)
    text = proposal.proposed_text
    edited = edited_text is not None and edited_text.replace("\r\n", "\n") != text.replace("\r\n", "\n")
    if edited and edited_text is not None:
        text = edited_text
        data = text.encode("utf-8")
        if len(data) > MAX_SKILL_MD_BYTES:
            raise ReviewError(f"the edited SKILL.md is {len(data):,} bytes, over {MAX_SKILL_MD_BYTES:,}")
        check_frontmatter_unchanged(base, data)
        if data == base:
            raise ReviewError("the edited SKILL.md equals the base: dismiss the proposal instead")
    skill_md = text.encode("utf-8")
    # Claim the decision: only a pending proposal can be approved, once.
    claimed = Proposal.objects.filter(pk=proposal.pk, state=ProposalState.PENDING).update(
        state=ProposalState.APPROVED, decided_by=reviewer, decided_at=now
    )
    if not claimed:
        raise Conflict(
            f"proposal #{proposal.pk} is {proposal.state}: only a pending proposal can be approved"
        )
    # Compare-and-swap on the skill: the base must still be its current version.
    still_current = Skill.objects.filter(
        pk=proposal.skill_id, current_version_id=proposal.base_version_id
    ).update(updated_at=now)
    if not still_current:
        Proposal.objects.filter(pk=proposal.pk).update(
            state=ProposalState.STALE, decided_by=None, decided_at=None
        )
        proposal.state = ProposalState.STALE
        audit_record(
            actor=reviewer,
            action="proposal.stale",
            target_type="proposal",
            target_id=proposal.pk,
            target_label=f"#{proposal.pk} {proposal.skill.name}",
            evidence={"reason": "the base version is no longer current"},
            before_sha256=proposal.base_sha256,
        )
        return proposal
    version = skill_version_create(
        skill=proposal.skill,
        parsed=_package(skill=proposal.skill, base=proposal.base_version, skill_md=skill_md),
        origin=VersionOrigin.REVIEW,
        created_by=reviewer,
    )
    proposal.state = ProposalState.APPROVED
    proposal.decided_by = reviewer
    proposal.decided_at = now
    proposal.decision_note = note.strip()
    proposal.edited = edited
    proposal.applied_text = text
    proposal.result_version = version
    proposal.save(update_fields=["decision_note", "edited", "applied_text", "result_version"])
    delivery = Delivery.objects.create(
        proposal=proposal,
        kind=DeliveryKind.APPLY,
        mode=_delivery_mode(proposal.project),
        version=version,
        previous_version=proposal.base_version,
        requested_by=reviewer,
        branch=proposal.branch_name,
    )
    # Every other open proposal on this skill was made against the old base: now stale.
    Proposal.objects.filter(skill_id=proposal.skill_id, state=ProposalState.PENDING).exclude(
        pk=proposal.pk
    ).update(state=ProposalState.STALE)
    label = f"#{proposal.pk} {proposal.skill.name}"
    evidence = {"version": version.number, "note": proposal.decision_note, "delivery": delivery.mode}
    audit_record(
        actor=reviewer,
        action="proposal.edited" if edited else "proposal.approved",
        target_type="proposal",
        target_id=proposal.pk,
        target_label=label,
        evidence={**evidence, "proposed_sha256": proposal.proposed_sha256} if edited else evidence,
        before_sha256=proposal.base_sha256,
        after_sha256=version.skill_md_sha256,
    )
    _enqueue(delivery)
    return proposal


def proposals_bulk_approve(*, proposal_ids: Iterable[int], reviewer: User) -> dict[int, str]:
    """Approve each explicitly selected proposal; returns id → outcome ("approved" or the refusal)."""
    outcomes: dict[int, str] = {}
    for proposal_id in sorted(set(proposal_ids)):
        try:
            proposal_approve(proposal_id=proposal_id, reviewer=reviewer)
        except ReviewError as exc:
            outcomes[proposal_id] = exc.message
        else:
            outcomes[proposal_id] = "approved"
    return outcomes


@transaction.atomic
def proposal_dismiss(*, proposal_id: int, reviewer: User, reason: str) -> Proposal:
    if not reason.strip():
        raise ReviewError("a dismissal needs a reason (it is shown to the proposer and kept in the ledger)")
    proposal = Proposal.objects.select_related("skill", "team").filter(pk=proposal_id).first()
    if proposal is None:
        raise NotFound(f"no proposal #{proposal_id}")
    _require_reviewer(user=reviewer, proposal=proposal)
    now = timezone.now()
    done = Proposal.objects.filter(
        pk=proposal.pk, state__in=[ProposalState.PENDING, ProposalState.STALE]
    ).update(state=ProposalState.DISMISSED, decided_by=reviewer, decided_at=now, decision_note=reason.strip())
    if not done:
        raise Conflict(
            f"proposal #{proposal.pk} is {proposal.state}: only pending or stale ones can be dismissed"
        )
    audit_record(
        actor=reviewer,
        action="proposal.dismissed",
        target_type="proposal",
        target_id=proposal.pk,
        target_label=f"#{proposal.pk} {proposal.skill.name}",
        evidence={"reason": reason.strip()},
        before_sha256=proposal.base_sha256,
        after_sha256=proposal.proposed_sha256,
    )
    proposal.refresh_from_db()
    return proposal


@transaction.atomic
def proposal_comment(*, proposal: Proposal, author: User, body: str) -> ProposalComment:
    text = body.strip()
    if not text:
        raise ReviewError("a comment cannot be empty")
    if len(text) > 10_000:
        raise ReviewError("a comment is limited to 10,000 characters")
    comment = ProposalComment.objects.create(proposal=proposal, author=author, body=text)
    audit_record(
        actor=author,
        action="proposal.commented",
        target_type="proposal",
        target_id=proposal.pk,
        target_label=f"#{proposal.pk} {proposal.skill.name}",
        evidence={"comment_id": comment.pk},
    )
    return comment


def proposal_rollback(*, proposal_id: int, reviewer: User) -> Delivery:
    """Undo one applied change: a new version equal to the one before it, delivered the same way."""
    return _retry_when_locked(lambda: _rollback(proposal_id=proposal_id, reviewer=reviewer))


@transaction.atomic
def _rollback(*, proposal_id: int, reviewer: User) -> Delivery:
    proposal = (
        Proposal.objects.select_for_update(of=("self",))
        .select_related("skill", "skill__source", "project", "team", "base_version", "result_version")
        .filter(pk=proposal_id)
        .first()
    )
    if proposal is None:
        raise NotFound(f"no proposal #{proposal_id}")
    _require_reviewer(user=reviewer, proposal=proposal)
    applied = proposal.result_version
    if proposal.state != ProposalState.APPLIED or applied is None:
        raise Conflict(
            f"proposal #{proposal.pk} is {proposal.state}: only an applied change can be rolled back"
        )
    if proposal.rolled_back_at is not None:
        raise Conflict(f"proposal #{proposal.pk} was already rolled back")
    now = timezone.now()
    moved = not Skill.objects.filter(pk=proposal.skill_id, current_version_id=applied.pk).update(
        updated_at=now
    )
    if moved:
        raise Conflict(
            f"{proposal.skill.name} has newer versions than this change: roll those back first, "
            "so that undoing one change does not silently undo others"
        )
    before = proposal.base_version
    files = version_package_files(before)
    folder = proposal.skill.location.rsplit("/", 1)[-1]
    skill_md = next(f.content for f in files if f.path == SKILL_MD)
    parsed = parse_skill_md(skill_md, folder=folder, path=proposal.skill.location, source=SourceKind.PROJECT)
    parsed.files = files
    version = skill_version_create(
        skill=proposal.skill, parsed=parsed, origin=VersionOrigin.ROLLBACK, created_by=reviewer
    )
    Proposal.objects.filter(pk=proposal.pk).update(rolled_back_at=now, rolled_back_by=reviewer)
    delivery = Delivery.objects.create(
        proposal=proposal,
        kind=DeliveryKind.ROLLBACK,
        mode=_delivery_mode(proposal.project),
        version=version,
        previous_version=applied,
        requested_by=reviewer,
        branch=f"{proposal.branch_name}-rollback",
    )
    Proposal.objects.filter(skill_id=proposal.skill_id, state=ProposalState.PENDING).update(
        state=ProposalState.STALE
    )
    audit_record(
        actor=reviewer,
        action="change.rolled_back",
        target_type="proposal",
        target_id=proposal.pk,
        target_label=f"#{proposal.pk} {proposal.skill.name}",
        evidence={"version": version.number, "restores": before.number, "delivery": delivery.mode},
        before_sha256=applied.skill_md_sha256,
        after_sha256=version.skill_md_sha256,
    )
    _enqueue(delivery)
    return delivery


# ---------------------------------------------------------------------------------------------
# Delivery
# ---------------------------------------------------------------------------------------------


def _author() -> Author:
    return Author(
        name=settings.REVIEWS_GIT_AUTHOR_NAME,
        email=settings.REVIEWS_GIT_AUTHOR_EMAIL,
    )


def _commit_for(delivery: Delivery) -> Commit:
    proposal = delivery.proposal
    reviewer = delivery.requested_by
    who = reviewer.get_username() if reviewer else "unknown"
    credit = f"{who} <{reviewer.email}>" if reviewer and reviewer.email else who
    skill = proposal.skill.name
    if delivery.kind == DeliveryKind.ROLLBACK:
        subject = f"Roll back {skill} to v{delivery.version.number} (undo proposal #{proposal.pk})"
        body = (
            f"Restores the package of v{proposal.base_version.number}, undoing the change of "
            f"proposal #{proposal.pk} (v{delivery.previous_version.number})."
        )
    else:
        subject = f"Improve {skill} (proposal #{proposal.pk}, v{delivery.version.number})"
        lines = [
            f"- {u.get('section', '')}: {u.get('change', '')} (reason: {u.get('reason', '')})"
            for u in proposal.updates
        ]
        body = "Changes proposed by " + proposal.proposer_label + ":\n" + "\n".join(lines)
        if proposal.edited:
            body += "\n\nEdited by the reviewer before approval."
    body += f"\n\nReviewed-by: {credit}\nApproved-in: skill governance portal, proposal #{proposal.pk}"
    return Commit(
        subject=subject,
        body=body,
        author=_author(),
        date=delivery.created_at,
        marker=f"{delivery.pk}/{delivery.version.package_sha256[:16]}",
    )


def _claim(delivery_id: int) -> Delivery | None:
    """Move a pending (or long-stuck running) delivery to running; None if another worker has it."""
    stuck_before = timezone.now() - timedelta(seconds=settings.REVIEWS_DELIVERY_STUCK_SECONDS)
    with transaction.atomic():
        delivery = (
            Delivery.objects.select_for_update(of=("self",))
            .select_related(
                "proposal",
                "proposal__skill",
                "proposal__project",
                "proposal__base_version",
                "version",
                "previous_version",
                "requested_by",
            )
            .filter(pk=delivery_id)
            .first()
        )
        if delivery is None:
            return None
        runnable = delivery.state == DeliveryState.PENDING or (
            delivery.state == DeliveryState.RUNNING
            and delivery.started_at is not None
            and delivery.started_at < stuck_before
        )
        if not runnable:
            return None
        if delivery.kind == DeliveryKind.APPLY and not feature_enabled():
            return None  # stays pending; the sweeper delivers it once the feature is back on
        delivery.state = DeliveryState.RUNNING
        delivery.started_at = timezone.now()
        delivery.attempts += 1
        delivery.save(update_fields=["state", "started_at", "attempts"])
        return delivery


def _start_branches(delivery: Delivery) -> tuple[str, ...]:
    """Branches that may hold the version this delivery starts from, when not merged yet: the
    pushed branch that delivered ``previous_version`` (a second change stacks on the first)."""
    branches = (
        Delivery.objects.filter(
            version_id=delivery.previous_version_id, mode=DeliveryMode.PUSH, state=DeliveryState.DELIVERED
        )
        .exclude(pk=delivery.pk)
        .order_by("-finished_at")
        .values_list("branch", flat=True)
    )
    return tuple(dict.fromkeys(branches))


def delivery_run(*, delivery_id: int) -> Delivery | None:
    """Deliver one version (push a branch, or render a patch). Idempotent; safe to call twice."""
    delivery = _retry_when_locked(lambda: _claim(delivery_id))
    if delivery is None:
        return None
    proposal = delivery.proposal
    project = proposal.project
    commit = _commit_for(delivery)
    after = version_file_contents(delivery.version)
    before = version_file_contents(delivery.previous_version)
    timeout = float(settings.REVIEWS_GIT_TIMEOUT)
    commit_sha = ""
    patch = ""
    try:
        if delivery.mode == DeliveryMode.PUSH and project is not None:
            commit_sha = push_version(
                remote=project.push_url,
                branch=delivery.branch,
                folder=proposal.skill.location,
                files=after,
                expected=before,
                start_branches=_start_branches(delivery),
                commit=commit,
                timeout=timeout,
            )
        else:
            patch = format_patch(folder=proposal.skill.location, before=before, after=after, commit=commit)
    except DeliveryError as exc:
        logger.warning("delivery %s of proposal %s failed: %s", delivery.pk, proposal.pk, exc)
        _finish(delivery, error=str(exc))
    else:
        _finish(delivery, commit_sha=commit_sha, patch=patch)
    delivery.refresh_from_db()
    return delivery


def _finish(delivery: Delivery, *, error: str = "", commit_sha: str = "", patch: str = "") -> None:
    def write() -> None:
        with transaction.atomic():
            now = timezone.now()
            state = DeliveryState.FAILED if error else DeliveryState.DELIVERED
            Delivery.objects.filter(pk=delivery.pk).update(
                state=state, error=error[:4000], commit_sha=commit_sha, patch=patch, finished_at=now
            )
            if delivery.kind == DeliveryKind.APPLY:
                Proposal.objects.filter(
                    pk=delivery.proposal_id, state__in=[ProposalState.APPROVED, ProposalState.FAILED]
                ).update(state=ProposalState.FAILED if error else ProposalState.APPLIED)
            action = ("rollback" if delivery.kind == DeliveryKind.ROLLBACK else "change") + (
                ".delivery_failed" if error else ".applied"
            )
            audit_record(
                actor=None,
                actor_label="portal",
                action=action,
                target_type="proposal",
                target_id=delivery.proposal_id,
                target_label=f"#{delivery.proposal_id} {delivery.proposal.skill.name}",
                evidence={
                    "delivery": delivery.pk,
                    "mode": delivery.mode,
                    "branch": delivery.branch,
                    "commit": commit_sha,
                    "attempt": delivery.attempts,
                    **({"error": error} if error else {}),
                },
                before_sha256=delivery.previous_version.skill_md_sha256,
                after_sha256=delivery.version.skill_md_sha256,
            )

    _retry_when_locked(write)


def delivery_retry(*, delivery_id: int, user: User) -> Delivery:
    """Put a failed delivery back in the queue (same version, same branch)."""
    with transaction.atomic():
        delivery = (
            Delivery.objects.select_related("proposal", "proposal__skill").filter(pk=delivery_id).first()
        )
        if delivery is None:
            raise NotFound(f"no delivery #{delivery_id}")
        _require_reviewer(user=user, proposal=delivery.proposal)
        if not Delivery.objects.filter(pk=delivery.pk, state=DeliveryState.FAILED).update(
            state=DeliveryState.PENDING, error=""
        ):
            raise Conflict(f"delivery #{delivery.pk} is {delivery.state}: only a failed delivery is retried")
        if delivery.kind == DeliveryKind.APPLY:
            Proposal.objects.filter(pk=delivery.proposal_id, state=ProposalState.FAILED).update(
                state=ProposalState.APPROVED
            )
        audit_record(
            actor=user,
            action="delivery.retried",
            target_type="proposal",
            target_id=delivery.proposal_id,
            target_label=f"#{delivery.proposal_id} {delivery.proposal.skill.name}",
            evidence={"delivery": delivery.pk, "previous_error": delivery.error},
        )
        _enqueue(delivery)
    delivery.refresh_from_db()
    return delivery


def deliveries_sweep(*, older_than_seconds: int = 60) -> list[int]:
    """Re-enqueue deliveries the database says are pending (lost messages) or stuck running."""
    now = timezone.now()
    stuck = now - timedelta(seconds=settings.REVIEWS_DELIVERY_STUCK_SECONDS)
    pending = Delivery.objects.filter(
        state=DeliveryState.PENDING, created_at__lt=now - timedelta(seconds=older_than_seconds)
    )
    running = Delivery.objects.filter(state=DeliveryState.RUNNING, started_at__lt=stuck)
    ids = sorted(set(pending.values_list("id", flat=True)) | set(running.values_list("id", flat=True)))
    from governance.reviews.tasks import deliver

    for delivery_id in ids:
        deliver.delay(delivery_id)
    return ids
