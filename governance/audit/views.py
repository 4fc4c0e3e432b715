"""The governance ledger page (admins only): filters, and the same selection as JSON lines."""

from __future__ import annotations

import json
from collections.abc import Iterator

from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from governance.audit.forms import LedgerFilterForm
from governance.audit.selectors import LedgerFilters, ledger_actions, ledger_entries, ledger_target_types
from portal.accounts.services import user_is_admin


def _filters(request: HttpRequest) -> tuple[LedgerFilterForm, LedgerFilters]:
    if not user_is_admin(request.user):
        raise PermissionDenied("the ledger is for admins")
    form = LedgerFilterForm(request.GET or None)
    if not (form.is_bound and form.is_valid()):
        return form, LedgerFilters()
    data = form.cleaned_data
    return form, LedgerFilters(
        actor=data["actor"],
        action=data["action"],
        target_type=data["target_type"],
        target=data["target"],
        since=data["since"],
        until=data["until"],
    )


@require_GET
def ledger(request: HttpRequest) -> HttpResponse:
    form, filters = _filters(request)
    page = Paginator(ledger_entries(filters=filters).select_related("actor"), 100).get_page(
        request.GET.get("page")
    )
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "audit/ledger.html",
        {
            "form": form,
            "page": page,
            "query": query.urlencode(),
            "actions": ledger_actions(),
            "target_types": ledger_target_types(),
            "filters": filters,
        },
    )


@require_GET
def export(request: HttpRequest) -> StreamingHttpResponse:
    """The filtered ledger as JSON lines, oldest first, streamed (one entry per line)."""
    _form, filters = _filters(request)

    def lines() -> Iterator[str]:
        for entry in ledger_entries(filters=filters).order_by("at", "id").iterator(chunk_size=1000):
            yield json.dumps(entry.as_dict(), ensure_ascii=False, sort_keys=True, default=str) + "\n"

    response = StreamingHttpResponse(lines(), content_type="application/x-ndjson; charset=utf-8")
    stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
    response["Content-Disposition"] = f'attachment; filename="governance-ledger-{stamp}.jsonl"'
    return response
