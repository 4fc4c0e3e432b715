"""Every URL, every role: who gets in, who is refused.

Adding a page without adding it here fails ``test_every_page_is_in_the_matrix``, so no page ships
without a decision about who may see it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from portal.api import api

ROLES = ["anonymous", "developer", "lead", "admin"]
ROLE_RANK = {role: rank for rank, role in enumerate(ROLES)}

# url name → (minimum role, kwargs builder). Builders take the ``org`` fixture and may create rows.
Builder = Callable[[Any], dict[str, Any]]


def no_kwargs(org: Any) -> dict[str, Any]:
    return {}


def _catalog_skill(org: Any) -> int:
    from tests.catalog.conftest import make_source, store_skill

    source = make_source("project", "github.com/acme/matrix", org.payments_api)
    return store_skill(source, "matrix-skill").pk


def policy_version_kwargs(org: Any) -> dict[str, Any]:
    from governance.policy.models import PolicyVersion

    PolicyVersion.objects.create(number=1, status="published", document={}, document_sha256="0" * 64)
    return {"number": 1}


def telemetry_skill(org: Any) -> dict[str, Any]:
    from governance.telemetry.models import SkillDaily, SkillDay

    SkillDaily.objects.create(day="2026-11-01", skill_key="deploy", agent="claude-code", inv_model=1)
    SkillDay.objects.create(day="2026-11-01", skill_key="deploy", inv_model=1)
    return {"skill_key": "deploy"}


def _proposal(org: Any) -> int:
    from tests.reviews.conftest import make_proposal

    return make_proposal(org).pk


def _patch_delivery(org: Any) -> int:
    from tests.reviews.conftest import make_patch_delivery

    return make_patch_delivery(org).pk


def _ingest_source(org: Any) -> int:
    from governance.skills.models import Source

    return Source.objects.get_or_create(kind="project", identity="github.com/acme/matrix")[0].pk


def _ingest_run(org: Any) -> int:
    from governance.skills.models import IngestRun

    return IngestRun.objects.create(source_kind="project", location="https://github.com/acme/matrix").pk


def _catalog_collection(org: Any) -> str:
    from governance.skills.models import Collection

    return Collection.objects.get_or_create(slug="matrix", defaults={"name": "Matrix"})[0].slug


PAGES: dict[str, tuple[str, Builder]] = {
    "home": ("developer", no_kwargs),
    "tokens": ("developer", no_kwargs),
    "catalog": ("developer", no_kwargs),
    "catalog-skill": ("developer", lambda org: {"skill_id": _catalog_skill(org)}),
    "catalog-listing": ("developer", no_kwargs),
    "catalog-conditional": ("developer", no_kwargs),
    "catalog-fleet": ("developer", no_kwargs),
    "catalog-collections": ("developer", no_kwargs),
    "catalog-collection": ("developer", lambda org: {"slug": _catalog_collection(org)}),
    "catalog-collection-export": (
        "developer",
        lambda org: {"slug": _catalog_collection(org), "fmt": "managed"},
    ),
    "catalog-project-export": (
        "developer",
        lambda org: {"slug": org.payments_api.slug, "fmt": "marketplace"},
    ),
    "policy": ("developer", no_kwargs),
    "policy-edit": ("admin", no_kwargs),
    "policy-impact": ("admin", no_kwargs),
    "policy-history": ("developer", no_kwargs),
    "policy-version": ("developer", policy_version_kwargs),
    "health": ("developer", no_kwargs),
    "health-agents": ("developer", no_kwargs),
    "health-skill": ("developer", telemetry_skill),
    "telemetry": ("developer", no_kwargs),
    "reviews": ("developer", no_kwargs),
    "review-detail": ("developer", lambda org: {"proposal_id": _proposal(org)}),
    "review-delivery-patch": ("developer", lambda org: {"delivery_id": _patch_delivery(org)}),
    "audit": ("admin", no_kwargs),
    "audit-export": ("admin", no_kwargs),
    "sources": ("admin", no_kwargs),
    "source-detail": ("admin", lambda org: {"source_id": _ingest_source(org)}),
    "ingest-run": ("lead", lambda org: {"run_id": _ingest_run(org)}),
    "skills-upload": ("lead", no_kwargs),
}

# Reachable without a session on purpose (they authenticate otherwise or are public by nature).
PUBLIC = {
    "login",
    "logout",
    "healthz",
    "otlp-logs",  # OTLP: bearer token
    "otlp-metrics",
    "registry-index",  # registry: bearer token (skills:read)
    "registry-skill-index",
    "registry-file",
}
# POST-only actions, covered by their own tests (CSRF and role), listed so none is forgotten.
ACTIONS = {
    "token-revoke",
    "policy-publish",
    "review-bulk-approve",
    "review-approve",
    "review-dismiss",
    "review-comment",
    "review-rollback",
    "review-delivery-retry",
    "source-ingest",
    "catalog-collection-edit",
    "catalog-collection-add",
}


def _named_patterns(resolver: URLResolver | None = None, prefix: str = "") -> Iterator[str]:
    resolver = resolver or get_resolver()
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            namespace = entry.namespace
            if namespace in {"admin", "api"}:
                continue
            yield from _named_patterns(entry, prefix + (f"{namespace}:" if namespace else ""))
        elif isinstance(entry, URLPattern) and entry.name:
            yield prefix + entry.name


def test_every_page_is_in_the_matrix() -> None:
    names = set(_named_patterns())
    missing = sorted(names - set(PAGES) - PUBLIC - ACTIONS)
    assert not missing, f"pages with no access decision in PAGES: {missing}"


def _client_for(role: str, request: pytest.FixtureRequest) -> Client:
    if role == "anonymous":
        return Client()
    user: User = request.getfixturevalue(f"{role}_user")
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("name", sorted(PAGES))
def test_page_access(name: str, role: str, org: Any, request: pytest.FixtureRequest) -> None:
    minimum, build = PAGES[name]
    url = reverse(name, kwargs=build(org))
    response = _client_for(role, request).get(url)
    if role == "anonymous":
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")
    elif ROLE_RANK[role] >= ROLE_RANK[minimum]:
        assert response.status_code == 200, f"{role} should see {url}"
    else:
        assert response.status_code == 403, f"{role} must be refused {url}"


def _api_operations() -> list[tuple[str, str]]:
    schema = api.get_openapi_schema()
    operations = []
    for path, methods in schema["paths"].items():
        for method in methods:
            operations.append((method.upper(), path))
    return sorted(operations)


@pytest.mark.django_db
@pytest.mark.parametrize(("method", "path"), _api_operations())
def test_every_api_operation_refuses_anonymous_callers(method: str, path: str) -> None:
    concrete = re.sub(r"\{[^}]+\}", "1", path)  # any value: auth is checked before lookups
    response = Client().generic(method, concrete, data=b"{}", content_type="application/json")
    assert response.status_code == 401, (
        f"{method} {path} answered {response.status_code} to an anonymous caller"
    )
