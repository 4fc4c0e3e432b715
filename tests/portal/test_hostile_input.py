"""Hostile bodies through HTTP: every answer is a precise 4xx, never a 500, and nothing is stored."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client

from governance.policy.models import PolicyVersion
from governance.telemetry.models import Event

pytestmark = pytest.mark.django_db

DEEP_ARRAY = b"[" * 50_000
DEEP_OBJECT = b'{"a":' * 50_000
HUGE_INTEGER = b'{"events": [1' + b"0" * 5_000 + b"]}"


@pytest.fixture
def telemetry_token(developer_user: User, make_token: Callable[..., str]) -> str:
    return make_token(developer_user, "telemetry:write")


@pytest.mark.parametrize("path", ["/api/v1/telemetry/events", "/otlp/v1/logs", "/otlp/v1/metrics"])
@pytest.mark.parametrize("body", [DEEP_ARRAY, DEEP_OBJECT, HUGE_INTEGER], ids=["array", "object", "integer"])
def test_telemetry_refuses_json_nested_too_deeply_or_unconvertible(
    path: str, body: bytes, telemetry_token: str
) -> None:
    client = Client(raise_request_exception=False)
    response = client.post(
        path,
        data=body,
        content_type="application/json",
        headers={"Authorization": f"Bearer {telemetry_token}"},
    )
    assert response.status_code == 400, response.content[:200]
    assert b"not valid JSON" in response.content
    assert not Event.objects.exists()


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (DEEP_ARRAY.decode(), "nested too deeply"),
        ('{"source_rules": 1' + "0" * 5_000 + "}", "invalid JSON"),
    ],
    ids=["nested", "integer"],
)
def test_policy_raw_editor_refuses_hostile_json_on_the_field(
    admin_client: Client, document: str, message: str
) -> None:
    response = admin_client.post("/policy/edit/", {"action": "raw", "raw-document": document})
    assert response.status_code == 400
    assert message in response.context["forms"]["raw"].errors["document"][0]
    assert not PolicyVersion.objects.exists()


@pytest.fixture
def skills_token(admin_user: User, make_token: Callable[..., str]) -> str:
    return make_token(admin_user, "skills:read", "skills:write")


OK_SKILL = "---\nname: ok\ndescription: a fine skill\n---\nbody\n"


@pytest.mark.parametrize(
    ("path", "payload", "code"),
    [
        (
            "/api/v1/skills/mcp",
            {"server": "s" * 5000, "skills": [{"name": "ok", "skill_md": OK_SKILL}]},
            "mcp-server",
        ),
        (
            "/api/v1/skills/mcp",
            {"server": "docs", "skills": [{"name": "ok", "skill_md": "\x00" + OK_SKILL}]},
            "mcp-skill-md",
        ),
        (
            "/api/v1/skills/sources",
            {"kind": "project", "location": "https://example.com/" + "a" * 5000},
            "source-location",
        ),
        (
            "/api/v1/skills/sources",
            {"kind": "project", "location": "https://example.com/o/r", "ref": "r" * 300},
            "git-ref",
        ),
    ],
    ids=["mcp-server-too-long", "mcp-nul", "source-location-too-long", "source-ref-too-long"],
)
def test_ingest_refuses_what_the_database_cannot_hold(
    path: str, payload: dict[str, object], code: str, skills_token: str
) -> None:
    """On PostgreSQL these were 500s (column too short) or failed runs (NUL in text): now 400s."""
    from governance.skills.models import IngestRun, Skill, Source

    client = Client(raise_request_exception=False)
    response = client.post(
        path,
        data=json.dumps(payload),
        content_type="application/json",
        headers={"Authorization": f"Bearer {skills_token}"},
    )
    assert response.status_code == 400, response.content[:300]
    assert response.json()["code"] == code
    assert not (Source.objects.exists() or Skill.objects.exists() or IngestRun.objects.exists())


@pytest.mark.parametrize(
    ("path", "client_fixture", "expected"),
    [
        ("/api/v1/skills/archives", None, b'"code": "body-too-large"'),
        ("/sources/upload/", "lead_client", b"request body larger than"),
    ],
    ids=["api", "page"],
)
def test_an_oversized_upload_is_refused_before_its_body_is_read(
    path: str,
    client_fixture: str | None,
    expected: bytes,
    skills_token: str,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Multipart files were streamed to a temporary file of any size before the view's size check."""
    from django.http.multipartparser import MultiPartParser

    from governance.skills.models import IngestRun, Source

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the body of an oversized request was parsed")

    monkeypatch.setattr(MultiPartParser, "parse", never)
    client = request.getfixturevalue(client_fixture) if client_fixture else Client()
    headers = {} if client_fixture else {"Authorization": f"Bearer {skills_token}"}
    body = b'--x\r\nContent-Disposition: form-data; name="file"; filename="a.zip"\r\n\r\nPK\r\n--x--\r\n'
    response = client.generic(
        "POST",
        path,
        body,
        content_type="multipart/form-data; boundary=x",
        headers=headers,
        CONTENT_LENGTH=str(10 * 1024**3),  # what a client streaming 10 GB declares
    )
    assert response.status_code == 413
    assert expected in response.content
    assert not (Source.objects.exists() or IngestRun.objects.exists())


LONE = "\\ud800"  # a JSON escape of half a surrogate pair: valid JSON, no valid UTF-8 string


@pytest.mark.parametrize(
    ("path", "body", "scopes"),
    [
        (
            "/api/v1/telemetry/events",
            '{"events": [{"type": "skill_invoked", "skill": {"name": "x' + LONE + '"}}]}',
            ["telemetry:write"],
        ),
        (
            "/otlp/v1/logs",
            '{"resourceLogs": [{"resource": {"attributes": [{"key": "user.email", "value": {"stringValue": "'
            + LONE
            + '"}}]}}]}',
            ["telemetry:write"],
        ),
        (
            "/api/v1/skills/sources",
            '{"kind": "project", "location": "https://github.com/a/b' + LONE + '"}',
            ["skills:write"],
        ),
        (
            "/api/v1/skills/mcp",
            '{"server": "docs' + LONE + '", "skills": [{"name": "ok", "skill_md": "x"}]}',
            ["skills:write"],
        ),
        (
            "/api/v1/reviews/suggestions",
            '{"skill": {"name": "x' + LONE + '"}, "base_sha256": "", "updates": []}',
            ["reviews:write"],
        ),
    ],
    ids=["telemetry", "otlp", "sources", "mcp", "reviews"],
)
def test_a_lone_surrogate_in_json_is_a_400_not_a_500(
    path: str, body: str, scopes: list[str], admin_user: User, make_token: Callable[..., str]
) -> None:
    from governance.audit.models import AuditEntry
    from governance.reviews.models import Proposal
    from governance.skills.models import IngestRun, Source

    token = make_token(admin_user, *scopes)
    client = Client(raise_request_exception=False)
    response = client.post(
        path,
        data=body.encode(),
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 400, response.content[:300]
    assert not (
        Event.objects.exists()
        or Source.objects.exists()
        or IngestRun.objects.exists()
        or Proposal.objects.exists()
        or AuditEntry.objects.exists()
    )


def test_a_lone_surrogate_in_the_policy_editor_is_a_field_error(admin_client: Client) -> None:
    document = (
        '{"source_rules": [{"effect": "deny", "kind": "repository", "pattern": "a/b", "note": "'
        + LONE
        + '"}]}'
    )
    response = admin_client.post("/policy/edit/", {"action": "raw", "raw-document": document})
    assert response.status_code == 400
    assert "lone UTF-16 surrogate" in response.context["forms"]["raw"].errors["document"][0]
    assert not PolicyVersion.objects.exists()


BIG = "9" * 30  # overflows every database integer
HUGE = "9" * 5000  # more digits than Python converts
SUPERSCRIPT = "²"  # "²".isdigit() is true, int("²") fails


@pytest.mark.parametrize("number", [BIG, HUGE, SUPERSCRIPT], ids=["big", "huge", "superscript"])
@pytest.mark.parametrize(
    "url",
    [
        "/health/?days={n}",
        "/health/?team={n}&project={n}",
        "/health/agents/?team={n}",
        "/catalog/listing/?remove={n}&hide={n}",
        "/catalog/listing/?desc_{n}=short",
        "/catalog/?team={n}&project={n}&page={n}",
        "/reviews/?team={n}&page={n}",
        "/audit/?actor={n}",
        "/policy/history/?against={n}",
    ],
)
def test_numbers_in_query_strings_never_make_a_500(url: str, number: str, admin_client: Client) -> None:
    admin_client.raise_request_exception = False
    response = admin_client.get(url.format(n=number))
    assert response.status_code < 500, url


@pytest.mark.parametrize("number", [BIG, HUGE, SUPERSCRIPT], ids=["big", "huge", "superscript"])
def test_numbers_in_posted_ids_never_make_a_500(number: str, admin_client: Client) -> None:
    admin_client.raise_request_exception = False
    response = admin_client.post("/reviews/bulk-approve/", {"ids": [number]})
    assert response.status_code < 500
    response = admin_client.post("/catalog/collections/add/", {"collection": "none", "skill": [number]})
    assert response.status_code == 400


def test_a_source_url_carrying_a_token_is_refused_and_not_stored(skills_token: str) -> None:
    """Its location would be shown on the ingest run page (leads) and kept in the audit ledger."""
    from governance.audit.models import AuditEntry
    from governance.skills.models import IngestRun, Source

    secret = "ghp_" + "x" * 36
    response = Client().post(
        "/api/v1/skills/sources",
        data=json.dumps(
            {"kind": "project", "location": f"https://x-access-token:{secret}@github.com/acme/skills"}
        ),
        content_type="application/json",
        headers={"Authorization": f"Bearer {skills_token}"},
    )
    assert response.status_code == 400
    assert response.json()["code"] == "source-credentials"
    assert secret not in response.content.decode()
    assert not (Source.objects.exists() or IngestRun.objects.exists() or AuditEntry.objects.exists())
