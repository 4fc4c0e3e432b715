"""Pages of the ingest side: sources (admins), one source's runs, one run's report, uploads (leads)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from governance.skills import selectors, services
from governance.skills.ingest_forms import SourceForm, UploadForm
from governance.skills.models import IngestRun, Source
from portal.accounts.models import Role
from portal.accounts.services import user_role

View = Callable[..., HttpResponse]


def role_at_least(*roles: Role) -> Callable[[View], View]:
    def decorate(view: View) -> View:
        @wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if user_role(request.user) not in roles:
                return HttpResponseForbidden(
                    "This page needs the role: " + " or ".join(r.label for r in roles)
                )
            return view(request, *args, **kwargs)

        return wrapper

    return decorate


admins_only = role_at_least(Role.ADMIN)
leads_and_admins = role_at_least(Role.LEAD, Role.ADMIN)


def _user(request: HttpRequest) -> User | None:
    return request.user if isinstance(request.user, User) else None


@require_http_methods(["GET", "POST"])
@admins_only
def sources(request: HttpRequest) -> HttpResponse:
    form = SourceForm(request.POST or None)
    refused = False
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            source = services.source_register(
                kind=data["kind"],
                location=data["location"],
                ref=data["ref"],
                project=data["project"],
                display_name=data["display_name"],
                actor=_user(request),
            )
        except services.IngestRefused as exc:
            form.add_error("location" if exc.code.startswith("source-") else None, exc.message)
            refused = exc.code == "source-refused"
        else:
            if data["ingest_now"]:
                run = services.ingest_request(source=source, requested_by=_user(request))
                messages.success(request, f"Source {source} registered; ingest run {run.pk} started.")
                return redirect("ingest-run", run_id=run.pk)
            messages.success(request, f"Source {source} registered.")
            return redirect("source-detail", source_id=source.pk)
    rows = [(s, s.runs.order_by("-created_at").first()) for s in selectors.sources_list()]
    status = (403 if refused else 400) if request.method == "POST" else 200
    return render(
        request,
        "ingest/sources.html",
        {"form": form, "rows": rows, "runs": selectors.ingest_runs_recent(limit=15)},
        status=status,
    )


@require_http_methods(["GET"])
@admins_only
def source_detail(request: HttpRequest, source_id: int) -> HttpResponse:
    source = get_object_or_404(Source.objects.select_related("project"), pk=source_id)
    skills = source.skills.select_related("current_version").order_by("name")
    return render(
        request,
        "ingest/source.html",
        {"source": source, "runs": selectors.ingest_runs_recent(source=source), "skills": skills},
    )


@require_POST
@admins_only
def source_ingest(request: HttpRequest, source_id: int) -> HttpResponse:
    source = get_object_or_404(Source, pk=source_id)
    if source.kind == "mcp" or source.location.startswith("upload:"):
        messages.error(request, "This source is pushed (MCP) or uploaded: it cannot be fetched again.")
        return redirect("source-detail", source_id=source.pk)
    run = services.ingest_request(source=source, requested_by=_user(request))
    return redirect("ingest-run", run_id=run.pk)


@require_http_methods(["GET"])
@leads_and_admins
def ingest_run(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(IngestRun.objects.select_related("source", "requested_by"), pk=run_id)
    counts = [(k.replace("_", " "), v) for k, v in run.counts.items()]
    return render(request, "ingest/run.html", {"run": run, "counts": counts})


@require_http_methods(["GET", "POST"])
@leads_and_admins
def upload(request: HttpRequest) -> HttpResponse:
    form = UploadForm(request.POST or None, request.FILES or None)
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            data = form.cleaned_data
            handle = data["file"]
            limit = int(settings.SKILL_UPLOAD_MAX_BYTES)
            if data["kind"] == "managed" and user_role(request.user) is not Role.ADMIN:
                form.add_error("kind", "Only admins may upload managed skills.")
                status = 403
            elif handle.size > limit:
                form.add_error("file", f"The archive is {handle.size} bytes; the limit is {limit}.")
                status = 413
            else:
                try:
                    run = services.archive_ingest(
                        data=handle.read(limit + 1),
                        filename=handle.name,
                        kind=data["kind"],
                        requested_by=_user(request),
                        name=data["name"],
                        project=data["project"],
                    )
                except services.IngestRefused as exc:
                    form.add_error("file", f"Refused ({exc.code}): {exc.message}")
                else:
                    messages.success(request, f"Archive {handle.name} ingested.")
                    return redirect("ingest-run", run_id=run.pk)
    return render(request, "ingest/upload.html", {"form": form}, status=status)
