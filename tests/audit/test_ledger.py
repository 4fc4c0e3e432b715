"""The governance ledger page: admins only, filters, JSON-lines export of the same selection."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from governance.audit.models import AuditEntry
from governance.audit.services import audit_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def entries(admin_user: User, lead_user: User) -> None:
    audit_record(
        actor=admin_user, action="source.added", target_type="source", target_label="github.com/acme/x"
    )
    audit_record(
        actor=lead_user,
        action="proposal.approved",
        target_type="proposal",
        target_id=7,
        target_label="#7 deploy",
        before_sha256="a" * 64,
        after_sha256="b" * 64,
        evidence={"version": 2},
    )
    old = audit_record(actor=None, action="policy.published", target_type="policy", target_label="v3")
    AuditEntry.objects.filter(pk=old.pk).update(at=timezone.now() - timedelta(days=40))


def test_admin_sees_and_filters_the_ledger(entries: None, admin_client: Client) -> None:
    page = admin_client.get("/audit/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "source.added" in html and "proposal.approved" in html and "policy.published" in html

    by_action = admin_client.get("/audit/", {"action": "proposal.approved"}).content.decode()
    assert "#7 deploy" in by_action and "github.com/acme/x" not in by_action
    by_actor = admin_client.get("/audit/", {"actor": "liam"}).content.decode()
    assert "#7 deploy" in by_actor and "github.com/acme/x" not in by_actor
    since = (timezone.now() - timedelta(days=7)).date().isoformat()
    recent = admin_client.get("/audit/", {"since": since}).content.decode()
    assert "policy.published</code>" not in recent and "source.added" in recent


def test_export_is_json_lines_of_the_filtered_selection(entries: None, admin_client: Client) -> None:
    response = admin_client.get("/audit/export.jsonl", {"target_type": "proposal"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/x-ndjson")
    lines = b"".join(response.streaming_content).decode().splitlines()  # type: ignore[attr-defined]
    rows = [json.loads(line) for line in lines]
    assert len(rows) == 1
    assert rows[0]["action"] == "proposal.approved"
    assert rows[0]["actor"] == "liam-lead"
    assert (rows[0]["before_sha256"], rows[0]["after_sha256"]) == ("a" * 64, "b" * 64)
    assert rows[0]["evidence"] == {"version": 2}


def test_everything_is_exported_oldest_first(entries: None, admin_client: Client) -> None:
    response = admin_client.get("/audit/export.jsonl")
    rows = [json.loads(x) for x in b"".join(response.streaming_content).decode().splitlines()]  # type: ignore[attr-defined]
    assert [r["action"] for r in rows] == ["policy.published", "source.added", "proposal.approved"]


@pytest.mark.parametrize("path", ["/audit/", "/audit/export.jsonl"])
def test_lead_and_developer_are_refused(path: str, lead_client: Client, developer_client: Client) -> None:
    assert lead_client.get(path).status_code == 403
    assert developer_client.get(path).status_code == 403
