"""Catalog pages: the catalog, a skill, the listing budget, conditional activation, the fleet."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth.models import User
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from governance.engine.listing import (
    LISTING_PROFILES,
    EntryState,
    listing_profile,
    single_skill_survival,
)
from governance.engine.resolve import AGENTS, DEFAULT_AGENT, Status, activate, agent_profile
from governance.engine.tokens import body_token_estimate
from governance.policy.selectors import skill_decision, skill_permissions
from governance.skills import catalog_collections as coll
from governance.skills import catalog_selectors as sel
from governance.skills.catalog_forms import (
    CatalogFilterForm,
    CollectionForm,
    ConditionalForm,
    DiffForm,
    FleetForm,
    ListingForm,
)
from governance.skills.catalog_render import file_tree, package_diff, render_markdown
from governance.skills.models import Collection, Skill, SkillVersion
from governance.skills.selectors import version_file_contents
from portal.accounts.models import Project, Role
from portal.accounts.services import user_role

View = Callable[..., HttpResponse]

# Pages that show untrusted skill text: nothing remote loads, no inline script runs.
CSP = (
    "default-src 'self'; img-src 'self' data:; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)

FIX_HINTS = {
    "shadows-higher-trust": "Rename the lower-trust copy, or remove it; if the override is intended, "
    "move it to the managed source where it is reviewed.",
    "shadow-attempt": "Rename this copy so it cannot replace the trusted one under an agent with "
    "nearest-wins rules.",
    "look-alike-name": "Rename the skill with plain ASCII letters; a name that looks like another "
    "skill's is how an impersonation hides.",
    "duplicate-listed": "Keep one copy: Codex lists both and the model picks by description alone.",
}


def _small_int(raw: str) -> bool:
    """ASCII digits that fit a database integer (``"²".isdigit()`` is true; 5,000 digits overflow)."""
    return raw.isascii() and raw.isdigit() and len(raw) <= 18


def catalog_page(view: View) -> View:
    """Developers and above; every response carries the content security policy."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if user_role(request.user) not in {Role.DEVELOPER, Role.LEAD, Role.ADMIN}:
            return HttpResponseForbidden("The catalog needs a portal role.")
        response = view(request, *args, **kwargs)
        response["Content-Security-Policy"] = CSP
        return response

    return wrapper


def _render(request: HttpRequest, template: str, context: dict[str, Any], status: int = 200) -> HttpResponse:
    """Render with the project picker, built without a model form widget: a select of hundreds of
    projects through Django's widget templates costs more than the rest of the page."""
    context = {
        "project_options": list(Project.objects.order_by("name").values_list("slug", "name")),
        "project_slug": request.GET.get("project", ""),
        **context,
    }
    return render(request, template, context, status=status)


def _bad_request(request: HttpRequest, template: str, context: dict[str, Any]) -> HttpResponse:
    return _render(request, template, context, status=400)


@require_GET
@catalog_page
def catalog(request: HttpRequest) -> HttpResponse:
    form = CatalogFilterForm(request.GET or None)
    if request.GET and not form.is_valid():
        return _bad_request(request, "catalog/catalog.html", {"form": form, "entries": [], "agents": AGENTS})
    data: dict[str, Any] = form.cleaned_data if request.GET else {}
    agent = data.get("agent") or DEFAULT_AGENT
    team = data.get("team")
    entries = sel.catalog_entries(
        agent=agent,
        project=data.get("project"),
        search=data.get("q") or "",
        source=data.get("source") or "",
        status=data.get("status") or "",
        severity=data.get("severity") or "",
        team=team.pk if team else None,
        sort=data.get("sort") or "name",
    )
    page = Paginator(entries, 50).get_page(data.get("page") or 1)
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "form": form,
        "page": page,
        "entries": page.object_list,
        "permissions": skill_permissions([e.row.skill_id for e in page.object_list]),
        "health": _health_statuses([e.row.skill_id for e in page.object_list]),
        "total": len(entries),
        "agent": agent_profile(agent),
        "project": data.get("project"),
        "query": query.urlencode(),
        "security": sum(
            1
            for e in entries
            if any(f.get("code") in FIX_HINTS and f.get("severity") != "info" for f in e.findings)
        ),
    }
    return _render(request, "catalog/catalog.html", context)


def _health_statuses(skill_ids: list[int], days: int = 30) -> dict[int, str]:
    """skill id → health status (healthy, degraded, stale) from telemetry rollups, for these skills."""
    from governance.telemetry import selectors as telemetry

    rows = telemetry.skill_health(window=telemetry.Window.last(days), skill_ids=skill_ids)
    return {row.skill_id: row.status for row in rows if row.skill_id is not None}


def _invocations(days: int = 30) -> dict[int, int]:
    """skill id → invocations (for Claude Code's current listing, which drops the least invoked)."""
    from governance.telemetry import selectors as telemetry

    rows = telemetry.skill_health(window=telemetry.Window.last(days))
    return {row.skill_id: row.invocations for row in rows if row.skill_id is not None}


def _version(skill: Skill, number: int | None) -> SkillVersion:
    if number is None:
        if skill.current_version is None:
            raise Http404("This skill has no stored version.")
        return skill.current_version
    return get_object_or_404(SkillVersion, skill=skill, number=number)


@require_GET
@catalog_page
def skill_detail(request: HttpRequest, skill_id: int) -> HttpResponse:
    skill = get_object_or_404(Skill.objects.select_related("source", "source__project"), pk=skill_id)
    agent = request.GET.get("agent") or DEFAULT_AGENT
    if agent not in AGENTS:
        return HttpResponse(f"Unknown agent {agent!r}.", status=400, content_type="text/plain")
    raw_version = request.GET.get("v", "")
    if raw_version and not _small_int(raw_version):
        return HttpResponse("v must be a version number.", status=400, content_type="text/plain")
    number = int(raw_version) if raw_version else None
    version = _version(skill, number)
    files = version_file_contents(version)
    selected = request.GET.get("file") or ""
    if selected and selected not in files:
        raise Http404("No such file in this version.")
    content: str | None = None
    if selected:
        try:
            content = files[selected].decode("utf-8")
        except UnicodeDecodeError:
            content = None

    versions = list(
        SkillVersion.objects.filter(skill=skill)
        .order_by("-number")
        .values("id", "number", "created_at", "origin", "commit", "package_sha256")
    )
    diff_form = DiffForm(request.GET)
    diff = None
    diff_pair = None
    if request.GET.get("a") and request.GET.get("b"):
        if not diff_form.is_valid():
            return HttpResponse("a and b must be version numbers.", status=400, content_type="text/plain")
        va = _version(skill, diff_form.cleaned_data["a"])
        vb = _version(skill, diff_form.cleaned_data["b"])
        diff = package_diff(version_file_contents(va), version_file_contents(vb))
        diff_pair = (va.number, vb.number)

    chain = sel.shadow_chain(skill, agent)
    own = sel.project_catalog(skill.source.project, agent).status_of(skill.pk)
    findings = [dict(f) for f in version.findings if isinstance(f, dict)]
    for scope, cat, _group in chain:
        for finding in cat.resolution.findings.get(str(skill.pk), []):
            findings.append({**finding.as_dict(), "scope": scope})
    for item in findings:
        item.setdefault("fix", FIX_HINTS.get(str(item.get("code")), ""))
    survival = single_skill_survival(str(skill.pk), skill.qualified_name, version.body)
    fm = version.frontmatter if isinstance(version.frontmatter, dict) else {}
    context = {
        "skill": skill,
        "version": version,
        "is_current": version.pk == skill.current_version_id,
        "frontmatter": sorted(fm.items()),
        "body_html": render_markdown(version.body),
        "tree": file_tree(list(files)),
        "selected": selected,
        "content": content,
        "selected_size": len(files[selected]) if selected else 0,
        "versions": versions,
        "diff": diff,
        "diff_pair": diff_pair,
        "chain": chain,
        "own": own,
        "agent": agent_profile(agent),
        "agents": AGENTS.values(),
        "findings": findings,
        "survival": survival,
        "body_tokens": body_token_estimate(version.body),
        "entry_chars": len(version.description)
        + len(str(fm.get("when_to_use") or fm.get("whenToUse") or "")),
        "trust": sel.TRUST_LABEL.get(sel.SourceKind(skill.source.kind), ""),
        "permission": _permission(skill, version),
        "can_curate": _can_curate(request),
        "collections": list(Collection.objects.order_by("name").values("slug", "name"))
        if _can_curate(request)
        else [],
    }
    return render(request, "catalog/skill.html", context)


def _permission(skill: Skill, version: SkillVersion) -> dict[str, Any]:
    """The policy concern's decision and risk for this version."""
    return skill_decision(skill=skill, version=version)


def _listing_context(request: HttpRequest) -> tuple[dict[str, Any], int]:
    form = ListingForm(request.GET or None)
    if request.GET and not form.is_valid():
        return {"form": form}, 400
    data: dict[str, Any] = (
        form.cleaned_data
        if request.GET
        else {"window_tokens": 200_000, "profile": "classic", "window": "200000"}
    )
    project = data.get("project")
    agent = data.get("agent") or DEFAULT_AGENT
    profile = listing_profile(data["profile"], fraction=data.get("fraction"))

    def ids(key: str) -> set[int]:
        return {int(v) for v in request.GET.getlist(key) if _small_int(v)}

    remove, hide = ids("remove"), ids("hide")
    descriptions: dict[int, str] = {}
    for key in request.GET:
        value = request.GET.get(key, "")
        if key.startswith("desc_") and _small_int(key[5:]) and value.strip():
            descriptions[int(key[5:])] = value.strip()[:1024]

    baseline_cat = sel.project_catalog(project, agent)
    calls = _invocations() if profile.drop_least_invoked else {}
    baseline = sel.project_listing(
        baseline_cat, window_tokens=data["window_tokens"], profile=profile, invocations=calls
    )
    what_if = bool(remove or hide or descriptions)
    cat = (
        sel.project_catalog(project, agent, hide=hide, rows=list(baseline_cat.rows.values()))
        if hide
        else baseline_cat
    )
    listing = (
        sel.project_listing(
            cat,
            window_tokens=data["window_tokens"],
            profile=profile,
            remove=remove,
            descriptions=descriptions,
            invocations=calls,
        )
        if what_if
        else baseline
    )
    entries = {e.key: e for e in listing.entries}
    table: list[dict[str, Any]] = []
    for row, res in cat.resolved():
        entry = entries.get(str(row.skill_id))
        table.append(
            {
                "row": row,
                "res": res,
                "entry": entry,
                "removed": row.skill_id in remove,
                "hidden_whatif": row.skill_id in hide,
                "desc_override": descriptions.get(row.skill_id, ""),
            }
        )
    table.sort(key=lambda t: (t["entry"] is None, -(t["entry"].full_chars if t["entry"] else 0)))
    chart = {
        "labels": [e.name for e in listing.entries],
        "shown": [e.chars for e in listing.entries],
        "full": [e.full_chars for e in listing.entries],
        "states": [e.state.value for e in listing.entries],
        "budget": listing.budget,
        "used": listing.chars_used,
    }
    survival = sel.project_compaction(cat) if request.GET.get("compaction", "1") == "1" else []
    context = {
        "form": form,
        "project": project,
        "agent": agent_profile(agent),
        "profile": profile,
        "listing": listing,
        "baseline": baseline,
        "what_if": what_if,
        "table": table,
        "chart": chart,
        "counts": {k.replace("-", "_"): v for k, v in listing.counts().items()},
        "survival": survival,
        "survival_total": sum(s.kept_tokens for s in survival),
        "states": EntryState,
        "profiles": LISTING_PROFILES.values(),
    }
    return context, 200


@require_GET
@catalog_page
def listing_budget(request: HttpRequest) -> HttpResponse:
    context, status = _listing_context(request)
    return _render(request, "catalog/listing.html", context, status=status)


@require_GET
@catalog_page
def conditional(request: HttpRequest) -> HttpResponse:
    form = ConditionalForm(request.GET or None)
    if request.GET and not form.is_valid():
        return _bad_request(request, "catalog/conditional.html", {"form": form})
    data: dict[str, Any] = form.cleaned_data if request.GET else {}
    agent = data.get("agent") or DEFAULT_AGENT
    cat = sel.project_catalog(data.get("project"), agent)
    touched = form.touched() if request.GET else []
    activated = activate(cat.resolution, touched) if touched else {}
    rows: list[dict[str, Any]] = [
        {"row": row, "res": res, "hits": activated.get(str(row.skill_id), [])}
        for row, res in cat.resolved()
        if res.status is Status.CONDITIONAL
    ]
    rows.sort(key=lambda r: (not r["hits"], r["res"].listed_name))
    return _render(
        request,
        "catalog/conditional.html",
        {"form": form, "rows": rows, "touched": touched, "activated": len(activated), "agent": cat.agent,
         "project": data.get("project")},
    )  # fmt: skip


@require_GET
@catalog_page
def fleet(request: HttpRequest) -> HttpResponse:
    form = FleetForm(request.GET or None)
    if request.GET and not form.is_valid():
        return _bad_request(request, "catalog/fleet.html", {"form": form, "projects": []})
    data: dict[str, Any] = form.cleaned_data if request.GET else {}
    agent = data.get("agent") or DEFAULT_AGENT
    window = int(data.get("window") or 200_000)
    profile = data.get("profile") or "classic"
    projects = sel.fleet(agent=agent, window_tokens=window, profile=profile)
    offenders: dict[str, dict[str, Any]] = {}
    for fp in projects:
        for e in fp.listing.entries:
            o = offenders.setdefault(e.name, {"name": e.name, "chars": 0, "projects": 0, "key": e.key})
            o["chars"] += e.full_chars
            o["projects"] += 1
    worst = sorted(offenders.values(), key=lambda o: -o["chars"])[:15]
    context = {
        "form": form,
        "projects": projects,
        "degraded": sum(1 for p in projects if p.listing.degraded),
        "worst": worst,
        "window": window,
        "agent": agent_profile(agent),
    }
    return render(request, "catalog/fleet.html", context)


# --------------------------------------------------------------------------------------------
# Collections and exports
# --------------------------------------------------------------------------------------------


def _can_curate(request: HttpRequest) -> bool:
    return user_role(request.user) in {Role.LEAD, Role.ADMIN}


@require_http_methods(["GET", "POST"])
@catalog_page
def collections(request: HttpRequest) -> HttpResponse:
    form = CollectionForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if not _can_curate(request):
            return HttpResponseForbidden("Only team leads and admins create collections.")
        if form.is_valid():
            try:
                created = coll.collection_create(
                    slug=form.cleaned_data["slug"],
                    name=form.cleaned_data["name"],
                    description=form.cleaned_data["description"],
                    created_by=request.user,  # type: ignore[arg-type]
                )
            except coll.CollectionError as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(request, f"Collection {created.name} created.")
                return redirect("catalog-collection", slug=created.slug)
        status = 400
    rows = Collection.objects.annotate(n=Count("skills")).order_by("name")
    return render(
        request,
        "catalog/collections.html",
        {"form": form, "collections": rows, "can_curate": _can_curate(request)},
        status=status,
    )


@require_GET
@catalog_page
def collection_detail(request: HttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    rows = coll.collection_rows(slug) or []
    return render(
        request,
        "catalog/collection.html",
        {
            "collection": collection,
            "rows": rows,
            "can_curate": _can_curate(request),
            "registry_base": request.build_absolute_uri(f"/registry/collections/{collection.slug}/"),
        },
    )


def _curate(request: HttpRequest, collection: Collection) -> HttpResponse:
    """Add skills (by id) to a collection, or remove one; then back to where the user was."""
    if not _can_curate(request):
        return HttpResponseForbidden("Only team leads and admins change collections.")
    actor = request.user if isinstance(request.user, User) else None
    try:
        if _small_int(request.POST.get("remove", "")):
            coll.collection_remove_skill(
                collection=collection, skill_id=int(request.POST["remove"]), actor=actor
            )
            messages.success(request, "Skill removed from the collection.")
        else:
            raw = request.POST.getlist("skill")
            if not raw or not all(_small_int(v.strip()) for v in raw):
                return HttpResponse(
                    "skill: give one or more skill ids.", status=400, content_type="text/plain"
                )
            added = coll.collection_add_skills(
                collection=collection, skill_ids=[int(v) for v in raw], actor=actor
            )
            messages.success(request, f"{added} skill{'s' if added != 1 else ''} added to {collection.name}.")
    except coll.CollectionError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain")
    back = request.POST.get("next", "")
    if back.startswith("/catalog/") and "//" not in back:
        return redirect(back)
    return redirect("catalog-collection", slug=collection.slug)


@require_POST
@catalog_page
def collection_edit(request: HttpRequest, slug: str) -> HttpResponse:
    return _curate(request, get_object_or_404(Collection, slug=slug))


@require_POST
@catalog_page
def collection_add(request: HttpRequest) -> HttpResponse:
    """The skill page's "add to collection": the collection comes as a form field."""
    collection = Collection.objects.filter(slug=request.POST.get("collection", "")).first()
    if collection is None:
        return HttpResponse("collection: no such collection.", status=400, content_type="text/plain")
    return _curate(request, collection)


def _download(export: coll.Export) -> HttpResponse:
    response = HttpResponse(export.content, content_type="application/gzip")
    response["Content-Disposition"] = f'attachment; filename="{export.filename}"'
    response["X-Exported-Skills"] = str(len(export.skills))
    response["X-Skipped-Skills"] = str(len(export.skipped))
    return response


EXPORT_FORMATS = ("marketplace", "managed")


@require_GET
@catalog_page
def collection_export(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    if fmt not in EXPORT_FORMATS:
        raise Http404("Export format is marketplace or managed.")
    rows = coll.collection_rows(slug) or []
    if fmt == "managed":
        return _download(coll.export_managed(rows, label=collection.slug))
    owner = _organisation_name()
    return _download(
        coll.export_marketplace(
            rows, slug=collection.slug, name=collection.name, description=collection.description, owner=owner
        )
    )


@require_GET
@catalog_page
def project_export(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    """A project's effective catalog (trust-first: what its agents load) as an archive."""
    project = get_object_or_404(Project, slug=slug)
    if fmt not in EXPORT_FORMATS:
        raise Http404("Export format is marketplace or managed.")
    rows = coll.served_rows(sel.project_catalog(project, DEFAULT_AGENT))
    if fmt == "managed":
        return _download(coll.export_managed(rows, label=project.slug))
    return _download(
        coll.export_marketplace(
            rows, slug=project.slug, name=project.name, description="", owner=_organisation_name()
        )
    )


def _organisation_name() -> str:
    from portal.accounts.models import Organisation

    org = Organisation.objects.order_by("pk").first()
    return org.name if org is not None else "Skill governance portal"
