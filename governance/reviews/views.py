"""Pages of the review queue: thin; decisions go through services, which check roles."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from governance.engine.proposals import side_by_side, unified_diff, with_line_endings_of
from governance.reviews import selectors, services
from governance.reviews.forms import ApproveForm, BulkApproveForm, CommentForm, DismissForm, QueueFilterForm
from governance.reviews.models import Proposal, ProposalState


def _user(request: HttpRequest) -> User:
    return request.user  # type: ignore[return-value]


def _visible_or_404(request: HttpRequest, proposal_id: int) -> Proposal:
    proposal = selectors.proposal_get(proposal_id=proposal_id)
    if proposal is None or not selectors.proposal_visible(user=_user(request), proposal=proposal):
        raise Http404(f"no proposal #{proposal_id}")
    return proposal


def _fail(request: HttpRequest, error: services.ReviewError) -> None:
    if isinstance(error, services.NotAllowed):
        raise PermissionDenied(error.message)
    messages.error(request, error.message)


@require_GET
def queue(request: HttpRequest) -> HttpResponse:
    form = QueueFilterForm(request.GET or None)
    filters = selectors.QueueFilters()
    if form.is_valid():
        data = form.cleaned_data
        filters = selectors.QueueFilters(
            team=data["team"] or "",
            skill=data["skill"] or "",
            state=data["state"] or "pending",
            flag=data["flag"] or "",
            min_age_days=data["min_age_days"],
        )
    user = _user(request)
    page = Paginator(selectors.proposals_queue(user=user, filters=filters), 50).get_page(
        request.GET.get("page")
    )
    rows = [(p, services.can_review(user=user, proposal=p)) for p in page]
    return render(
        request,
        "reviews/queue.html",
        {
            "form": form,
            "filters": filters,
            "page": page,
            "rows": rows,
            "counts": selectors.state_counts(user=user),
            "teams": selectors.teams_for_filter(user=user),
            "any_reviewable": any(ok and p.state == ProposalState.PENDING for p, ok in rows),
            "feature_enabled": services.feature_enabled(),
        },
    )


def _diffs(before: str, after: str, before_label: str, after_label: str) -> dict[str, object]:
    return {
        "rows": side_by_side(before, after),
        "unified": unified_diff(before, after, before_label=before_label, after_label=after_label),
        "before_label": before_label,
        "after_label": after_label,
    }


@require_GET
def detail(request: HttpRequest, proposal_id: int) -> HttpResponse:
    proposal = _visible_or_404(request, proposal_id)
    user = _user(request)
    base_text = services.version_skill_md(proposal.base_version).decode("utf-8", "replace")
    shown = proposal.applied_text or proposal.proposed_text
    current = proposal.skill.current_version
    diffs = [
        _diffs(
            base_text,
            shown,
            f"base v{proposal.base_version.number}",
            "proposed" if not proposal.applied_text else "approved",
        )
    ]
    if current is not None and current.pk not in (proposal.base_version_id, proposal.result_version_id):
        current_text = services.version_skill_md(current).decode("utf-8", "replace")
        diffs.append(_diffs(current_text, shown, f"current v{current.number}", "proposed"))
    refusal = services.review_refusal(user=user, proposal=proposal)
    return render(
        request,
        "reviews/detail.html",
        {
            "proposal": proposal,
            "diffs": diffs,
            "current": current,
            "versions": selectors.recent_versions(skill=proposal.skill),
            "usage": selectors.skill_usage(skill=proposal.skill),
            "deliveries": selectors.deliveries_of(proposal=proposal),
            "findings": current.findings if current else [],
            "can_review": refusal is None,
            "refusal": refusal,
            "approve_form": ApproveForm(initial={"edited_text": proposal.proposed_text}),
            "dismiss_form": DismissForm(),
            "comment_form": CommentForm(),
            "feature_enabled": services.feature_enabled(),
        },
    )


@require_POST
def approve(request: HttpRequest, proposal_id: int) -> HttpResponse:
    proposal = _visible_or_404(request, proposal_id)
    form = ApproveForm(request.POST)
    if not form.is_valid():
        messages.error(request, "The approval form was not valid.")
        return redirect("review-detail", proposal_id=proposal.pk)
    edited = None
    if "edit" in request.POST:
        base = services.version_skill_md(proposal.base_version)
        edited = with_line_endings_of(form.cleaned_data["edited_text"], base)
    try:
        services.proposal_approve(
            proposal_id=proposal.pk,
            reviewer=_user(request),
            edited_text=edited,
            note=form.cleaned_data["note"],
        )
    except services.ReviewError as exc:
        _fail(request, exc)
    else:
        messages.success(request, f"Proposal #{proposal.pk} approved; delivery is under way.")
    return redirect("review-detail", proposal_id=proposal.pk)


@require_POST
def dismiss(request: HttpRequest, proposal_id: int) -> HttpResponse:
    proposal = _visible_or_404(request, proposal_id)
    form = DismissForm(request.POST)
    reason = form.cleaned_data["reason"] if form.is_valid() else ""
    try:
        services.proposal_dismiss(proposal_id=proposal.pk, reviewer=_user(request), reason=reason)
    except services.ReviewError as exc:
        _fail(request, exc)
    else:
        messages.success(request, f"Proposal #{proposal.pk} dismissed.")
    return redirect("review-detail", proposal_id=proposal.pk)


@require_POST
def comment(request: HttpRequest, proposal_id: int) -> HttpResponse:
    proposal = _visible_or_404(request, proposal_id)
    form = CommentForm(request.POST)
    try:
        services.proposal_comment(
            proposal=proposal,
            author=_user(request),
            body=form.cleaned_data["body"] if form.is_valid() else "",
        )
    except services.ReviewError as exc:
        _fail(request, exc)
    return redirect("review-detail", proposal_id=proposal.pk)


@require_POST
def rollback(request: HttpRequest, proposal_id: int) -> HttpResponse:
    proposal = _visible_or_404(request, proposal_id)
    try:
        services.proposal_rollback(proposal_id=proposal.pk, reviewer=_user(request))
    except services.ReviewError as exc:
        _fail(request, exc)
    else:
        messages.success(request, f"Change #{proposal.pk} rolled back; the rollback is being delivered.")
    return redirect("review-detail", proposal_id=proposal.pk)


@require_POST
def delivery_retry(request: HttpRequest, delivery_id: int) -> HttpResponse:
    delivery = selectors.delivery_get(delivery_id=delivery_id)
    if delivery is None:
        raise Http404("no such delivery")
    proposal = _visible_or_404(request, delivery.proposal_id)
    try:
        services.delivery_retry(delivery_id=delivery.pk, user=_user(request))
    except services.ReviewError as exc:
        _fail(request, exc)
    else:
        messages.success(request, "Delivery queued again.")
    return redirect("review-detail", proposal_id=proposal.pk)


@require_GET
def delivery_patch(request: HttpRequest, delivery_id: int) -> HttpResponse:
    delivery = selectors.delivered_patch(delivery_id=delivery_id)
    if delivery is None:
        raise Http404("no delivered patch with this id")
    _visible_or_404(request, delivery.proposal_id)
    response = HttpResponse(delivery.patch, content_type="text/x-patch; charset=utf-8")
    name = f"{delivery.branch.replace('/', '-')}.patch"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@require_POST
def bulk_approve(request: HttpRequest) -> HttpResponse:
    """Approve only the proposals explicitly ticked, after a confirmation page that lists them."""
    user = _user(request)
    candidates = [
        p
        for p in selectors.proposals_by_ids(ids=_ints(request.POST.getlist("ids")))
        if p.state == ProposalState.PENDING and selectors.proposal_visible(user=user, proposal=p)
    ]
    form = BulkApproveForm(request.POST, allowed_ids=[p.pk for p in candidates])
    if not form.is_valid():
        messages.error(request, "Select the proposals to approve, one by one.")
        return redirect("reviews")
    chosen = [p for p in candidates if p.pk in set(form.cleaned_data["ids"])]
    refusals = {p.pk: services.review_refusal(user=user, proposal=p) for p in chosen}
    if not form.cleaned_data["confirm"]:
        rows = [(p, refusals[p.pk]) for p in chosen]
        return render(request, "reviews/bulk_confirm.html", {"chosen": chosen, "rows": rows})
    outcomes = services.proposals_bulk_approve(proposal_ids=[p.pk for p in chosen], reviewer=user)
    approved = [i for i, outcome in outcomes.items() if outcome == "approved"]
    messages.success(request, f"Approved {len(approved)} of {len(outcomes)} selected proposal(s).")
    for proposal_id, outcome in outcomes.items():
        if outcome != "approved":
            messages.error(request, f"#{proposal_id}: {outcome}")
    return redirect("reviews")


def _ints(values: list[str]) -> list[int]:
    # ASCII digits that fit a database integer ("²".isdigit() is true; 30 digits overflow).
    return [int(v) for v in values if v.isascii() and v.isdigit() and len(v) <= 18]
