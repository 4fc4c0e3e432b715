"""API router of the reviews concern (mounted at /api/v1/reviews by portal/api.py).

Agents propose with a ``reviews:write`` token: that scope reaches ``POST /suggestions`` and
``GET /suggestions/{id}`` only, so the proposing side has no route that writes a skill.
Approving and dismissing need ``reviews:decide`` (or a session) *and* a team lead's role.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest
from ninja import Field, Router, Schema, Status
from ninja.errors import HttpError

from governance.reviews import selectors, services
from governance.reviews.models import Proposal, ProposalState
from portal.auth import ScopedToken, SessionAuth, token_or_session

router = Router(tags=["reviews"])

SHA256 = r"^[0-9a-fA-F]{64}$"


class SkillRefIn(Schema):
    name: str = Field(..., max_length=200)
    source: str = Field(
        ..., max_length=32, description="bundled, builtin, managed, user, project, plugin, mcp"
    )
    catalog_id: int | None = Field(None, description="the portal's skill id, when the agent knows it")
    repository: str = Field("", max_length=500, description="repository URL, any spelling")
    path: str = Field("", max_length=1000, description="folder of the skill inside the repository")


class UpdateIn(Schema):
    section: str = Field("", max_length=300)
    change: str = Field(..., max_length=5000)
    reason: str = Field("", max_length=5000, description="the user message that prompted the change")


class EvidenceIn(Schema):
    session_id: str = Field("", max_length=200)
    prompt_id: str = Field("", max_length=200)
    agent: str = Field("", max_length=100)
    agent_version: str = Field("", max_length=100)
    user: str = Field("", max_length=200, description="whose session it was (separation of duties)")


class SuggestionIn(Schema):
    skill: SkillRefIn
    base_sha256: str = Field(..., pattern=SHA256, description="sha256 of the SKILL.md the agent saw")
    updates: list[UpdateIn] = Field(..., max_length=50)
    proposed_text: str | None = Field(None, description="the whole proposed SKILL.md")
    diff: str | None = Field(None, description="or: a unified diff against the base SKILL.md")
    evidence: EvidenceIn | None = None
    proposer: str = Field("", max_length=200, description="agent and person proposing")


class DeliveryOut(Schema):
    id: int
    kind: str
    mode: str
    state: str
    branch: str
    commit_sha: str
    error: str
    attempts: int


class SuggestionOut(Schema):
    id: int
    state: str
    flags: list[str]
    skill_id: int
    skill_name: str
    team: str | None
    base_sha256: str
    current_sha256: str | None
    proposed_sha256: str
    updates: list[dict[str, Any]]
    proposer: str
    created_at: datetime
    decided_by: str | None
    decided_at: datetime | None
    decision_note: str
    edited: bool
    result_version: int | None
    rolled_back: bool
    deliveries: list[DeliveryOut]


class ApproveIn(Schema):
    edited_text: str | None = Field(None, description="approve this SKILL.md instead of the proposed one")
    note: str = Field("", max_length=5000)


class DismissIn(Schema):
    reason: str = Field(..., max_length=5000)


def _out(proposal: Proposal) -> SuggestionOut:
    current = proposal.skill.current_version
    return SuggestionOut(
        id=proposal.pk,
        state=proposal.state,
        flags=proposal.flags,
        skill_id=proposal.skill_id,
        skill_name=proposal.skill.name,
        team=proposal.team.name if proposal.team else None,
        base_sha256=proposal.base_sha256,
        current_sha256=current.skill_md_sha256 if current else None,
        proposed_sha256=proposal.proposed_sha256,
        updates=proposal.updates,
        proposer=proposal.proposer_label,
        created_at=proposal.created_at,
        decided_by=proposal.decided_by.get_username() if proposal.decided_by else None,
        decided_at=proposal.decided_at,
        decision_note=proposal.decision_note,
        edited=proposal.edited,
        result_version=proposal.result_version.number if proposal.result_version else None,
        rolled_back=proposal.rolled_back_at is not None,
        deliveries=[
            DeliveryOut(
                id=d.pk,
                kind=d.kind,
                mode=d.mode,
                state=d.state,
                branch=d.branch,
                commit_sha=d.commit_sha,
                error=d.error,
                attempts=d.attempts,
            )
            for d in proposal.deliveries.all()
        ],
    )


def _user(request: HttpRequest) -> User:
    return request.user  # type: ignore[return-value]


def _visible(request: HttpRequest, proposal_id: int) -> Proposal:
    proposal = selectors.proposal_get(proposal_id=proposal_id)
    if proposal is None or not selectors.proposal_visible(user=_user(request), proposal=proposal):
        raise HttpError(404, f"no proposal #{proposal_id}")
    return proposal


@router.post(
    "/suggestions",
    response={201: SuggestionOut},
    auth=token_or_session("reviews:write"),
    summary="Propose a change to a project skill",
)
def suggestion_create(request: HttpRequest, payload: SuggestionIn) -> Status[SuggestionOut]:
    """Store a proposal for the team leads owning the skill's project. Refused (nothing stored)
    when the skill is not a project skill, an update has no reason, the frontmatter differs from
    the base by one byte, or self-evolution is switched off. Accepted proposals may be flagged
    ``stale``, ``bloat`` or ``duplicate``."""
    submission = services.Submission(
        skill=services.SkillRef(**payload.skill.dict()),
        base_sha256=payload.base_sha256,
        updates=[services.Update(**u.dict()) for u in payload.updates],
        proposed_text=payload.proposed_text,
        diff=payload.diff,
        evidence={k: v for k, v in (payload.evidence.dict() if payload.evidence else {}).items() if v},
        proposer=payload.proposer,
    )
    try:
        proposal = services.proposal_submit(actor=_user(request), submission=submission)
    except services.ReviewError as exc:
        raise HttpError(exc.status, exc.message) from None
    return Status(201, _out(selectors.proposal_get(proposal_id=proposal.pk) or proposal))


@router.get(
    "/suggestions",
    response=list[SuggestionOut],
    auth=[ScopedToken("reviews:write"), ScopedToken("reviews:decide"), SessionAuth()],
)
def suggestion_list(
    request: HttpRequest, state: str = "pending", team: str = "", skill: str = "", limit: int = 100
) -> list[SuggestionOut]:
    """Proposals the caller may see (their teams', or their own), oldest first; ``state=all`` for every state."""
    if state != "all" and state not in ProposalState.values:
        raise HttpError(422, f"state must be all or one of {', '.join(ProposalState.values)}")
    filters = selectors.QueueFilters(team=team, skill=skill, state=state)
    rows = selectors.proposals_queue(user=_user(request), filters=filters).prefetch_related("deliveries")
    return [_out(p) for p in rows[: max(1, min(limit, 500))]]


@router.get("/suggestions/{proposal_id}", response=SuggestionOut, auth=token_or_session("reviews:write"))
def suggestion_get(request: HttpRequest, proposal_id: int) -> SuggestionOut:
    """The state of a proposal: pending, approved, dismissed, stale, applied or failed."""
    return _out(_visible(request, proposal_id))


@router.post(
    "/suggestions/{proposal_id}/approve", response=SuggestionOut, auth=token_or_session("reviews:decide")
)
def suggestion_approve(request: HttpRequest, proposal_id: int, payload: ApproveIn) -> SuggestionOut:
    """Approve (optionally with an edited SKILL.md): a new version, then delivery to the repository."""
    _visible(request, proposal_id)
    try:
        services.proposal_approve(
            proposal_id=proposal_id,
            reviewer=_user(request),
            edited_text=payload.edited_text,
            note=payload.note,
        )
    except services.ReviewError as exc:
        raise HttpError(exc.status, exc.message) from None
    return _out(_visible(request, proposal_id))


@router.post(
    "/suggestions/{proposal_id}/dismiss", response=SuggestionOut, auth=token_or_session("reviews:decide")
)
def suggestion_dismiss(request: HttpRequest, proposal_id: int, payload: DismissIn) -> SuggestionOut:
    _visible(request, proposal_id)
    try:
        services.proposal_dismiss(proposal_id=proposal_id, reviewer=_user(request), reason=payload.reason)
    except services.ReviewError as exc:
        raise HttpError(exc.status, exc.message) from None
    return _out(_visible(request, proposal_id))


@router.post(
    "/suggestions/{proposal_id}/rollback", response=SuggestionOut, auth=token_or_session("reviews:decide")
)
def suggestion_rollback(request: HttpRequest, proposal_id: int) -> SuggestionOut:
    """Undo an applied change: a new version equal to the one before it, delivered the same way."""
    _visible(request, proposal_id)
    try:
        services.proposal_rollback(proposal_id=proposal_id, reviewer=_user(request))
    except services.ReviewError as exc:
        raise HttpError(exc.status, exc.message) from None
    return _out(_visible(request, proposal_id))
