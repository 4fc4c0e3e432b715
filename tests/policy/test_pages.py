"""Policy pages over HTTP: editor forms put errors on the wrong field, impact, publish, history."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from governance.audit.models import AuditEntry
from governance.policy.models import PolicyStatus, PolicyVersion
from tests.conftest import Org
from tests.policy.factories import stored_skill


@pytest.mark.django_db
def test_admin_adds_rules_previews_impact_and_publishes(admin_client: Client, org: Org) -> None:
    stored_skill("deploy", project=org.payments_api)
    response = admin_client.post(
        "/policy/edit/",
        {
            "action": "skill_rule",
            "skill_rule-effect": "deny",
            "skill_rule-name": "deploy",
            "skill_rule-note": "use the managed one",
        },
    )
    assert response.status_code == 302
    draft = PolicyVersion.objects.get(status=PolicyStatus.DRAFT)
    assert draft.document["skill_rules"] == [
        {"effect": "deny", "name": "deploy", "note": "use the managed one"}
    ]
    response = admin_client.post(
        "/policy/edit/",
        {
            "action": "source_rule",
            "source_rule-effect": "deny",
            "source_rule-kind": "repository",
            "source_rule-pattern": "git@github.com:evil/skills.git",
        },
    )
    assert response.status_code == 302
    impact = admin_client.get("/policy/impact/")
    assert impact.status_code == 200
    body = impact.content.decode()
    assert "allow→deny: 1" in body and "payments-api" in body
    published = admin_client.post("/policy/publish/", {"note": "first policy"})
    assert published.status_code == 302 and published["Location"] == "/policy/"
    draft.refresh_from_db()
    assert draft.status == PolicyStatus.PUBLISHED and draft.note == "first policy"
    overview = admin_client.get("/policy/").content.decode()
    assert "Version 1 published" in overview and "Skill(deploy)" in overview
    assert AuditEntry.objects.filter(action="policy.published").count() == 1


@pytest.mark.django_db
def test_validation_message_lands_on_the_wrong_field(admin_client: Client, org: Org) -> None:
    response = admin_client.post(
        "/policy/edit/",
        {
            "action": "source_rule",
            "source_rule-effect": "deny",
            "source_rule-kind": "host",
            "source_rule-pattern": "(unclosed",
        },
    )
    assert response.status_code == 400
    form = response.context["forms"]["source_rule"]
    assert "not a valid regular expression" in form.errors["pattern"][0]
    response = admin_client.post("/policy/edit/", {"action": "skill_rule", "skill_rule-effect": "deny"})
    assert response.status_code == 400
    assert "at least one criterion" in response.context["forms"]["skill_rule"].errors["name"][0]
    response = admin_client.post("/policy/edit/", {"action": "plugin", "plugin-plugin_id": "no-marketplace"})
    assert "plugin@marketplace" in response.context["forms"]["plugin"].errors["plugin_id"][0]
    response = admin_client.post("/policy/edit/", {"action": "raw", "raw-document": "{oops"})
    assert "invalid JSON at line 1" in response.context["forms"]["raw"].errors["document"][0]
    response = admin_client.post(
        "/policy/edit/", {"action": "raw", "raw-document": json.dumps({"telemetry": {"protocol": "grpc"}})}
    )
    assert "telemetry.protocol: must be http/json" in response.context["forms"]["raw"].errors["document"][0]
    assert not PolicyVersion.objects.exists()


@pytest.mark.django_db
def test_settings_form_and_remove_buttons(admin_client: Client, org: Org) -> None:
    admin_client.post(
        "/policy/edit/",
        {
            "action": "settings",
            "settings-channel_lock": ["skills", "hooks"],
            "settings-managed_hooks_only": "on",
            "settings-trusted_hook_plugins": "sec@acme\n",
            "settings-model_is_sensitive": "on",
            "settings-telemetry_enabled": "on",
            "settings-telemetry_protocol": "http/json",
        },
    )
    admin_client.post(
        "/policy/edit/", {"action": "override", "override-name": "legacy", "override-visibility": "off"}
    )
    doc = PolicyVersion.objects.get().document
    assert doc["channel_lock"] == ["skills", "hooks"] and doc["hooks"]["trusted_plugins"] == ["sec@acme"]
    assert doc["sensitive"] == {"model": True, "context_fork": False}
    assert doc["skill_overrides"] == {"legacy": "off"}
    admin_client.post("/policy/edit/", {"action": "delete", "section": "skill_overrides", "key": "legacy"})
    assert PolicyVersion.objects.get().document["skill_overrides"] == {}
    assert (
        admin_client.post(
            "/policy/edit/", {"action": "delete", "section": "skill_rules", "key": "7"}
        ).status_code
        == 404
    )


@pytest.mark.django_db
def test_developer_is_refused_editing_and_publishing(developer_client: Client, lead_client: Client) -> None:
    for client in (developer_client, lead_client):
        assert client.get("/policy/edit/").status_code == 403
        assert (
            client.post(
                "/policy/edit/", {"action": "skill_rule", "skill_rule-effect": "deny", "skill_rule-name": "x"}
            ).status_code
            == 403
        )
        assert client.post("/policy/publish/").status_code == 403
        assert client.get("/policy/impact/").status_code == 403
    assert not PolicyVersion.objects.exists()
    assert developer_client.get("/policy/").status_code == 200


@pytest.mark.django_db
def test_history_and_diff_between_versions(admin_client: Client, developer_client: Client, org: Org) -> None:
    admin_client.post(
        "/policy/edit/", {"action": "skill_rule", "skill_rule-effect": "deny", "skill_rule-name": "a"}
    )
    admin_client.post("/policy/publish/", {"note": "one"})
    admin_client.post(
        "/policy/edit/", {"action": "skill_rule", "skill_rule-effect": "ask", "skill_rule-name": "b"}
    )
    admin_client.post("/policy/publish/", {"note": "two"})
    history = developer_client.get("/policy/history/").content.decode()
    assert "v2" in history and "superseded" in history
    page = developer_client.get("/policy/v/2/")
    assert [(c.path, c.change) for c in page.context["changes"]] == [("skill_rules[1]", "added")]
    against = developer_client.get("/policy/v/2/?against=1")
    assert against.context["against"].number == 1
    assert developer_client.get("/policy/v/2/?against=x").status_code == 400
    assert developer_client.get("/policy/v/9/").status_code == 404


@pytest.mark.django_db
def test_a_stale_editor_does_not_overwrite_another_admins_change(admin_client: Client, org: Org) -> None:
    page = admin_client.get("/policy/edit/")
    stale = page.context["base_sha256"]
    admin_client.post(
        "/policy/edit/",
        {
            "action": "skill_rule",
            "base_sha256": stale,
            "skill_rule-effect": "deny",
            "skill_rule-name": "first",
        },
    )
    response = admin_client.post(
        "/policy/edit/",
        {
            "action": "skill_rule",
            "base_sha256": stale,
            "skill_rule-effect": "deny",
            "skill_rule-name": "second",
        },
    )
    assert response.status_code == 400
    assert "another admin saved" in response.context["forms"]["skill_rule"].non_field_errors()[0]
    assert [r["name"] for r in PolicyVersion.objects.get().document["skill_rules"]] == ["first"]
