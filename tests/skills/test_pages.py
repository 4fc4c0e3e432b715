"""Ingest pages: register a source and watch its run (admins), upload archives (leads, admins)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from governance.skills.models import IngestRun, Skill, Source
from tests.engine.archive_builders import SKILL_MD, make_zip
from tests.engine.gitrepo import write_skill

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_tasks")]


def test_admin_registers_a_directory_and_lands_on_the_finished_run(
    admin_client: Client, tmp_path: Path, django_capture_on_commit_callbacks: Any
) -> None:
    write_skill(tmp_path, "deploy", "deploy")
    write_skill(tmp_path, "broken", "Broken")
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            reverse("sources"), {"kind": "managed", "location": str(tmp_path), "ingest_now": "on"}
        )
    assert response.status_code == 302
    run = IngestRun.objects.get()
    assert response["Location"] == reverse("ingest-run", kwargs={"run_id": run.pk})
    page = admin_client.get(response["Location"])
    html = page.content.decode()
    assert page.status_code == 200
    assert 'data-status="succeeded"' in html and 'http-equiv="refresh"' not in html
    assert "name-not-lowercase" in html  # the invalid skill's error is in the report
    listing = admin_client.get(reverse("sources")).content.decode()
    assert f"local:{tmp_path}" in listing
    detail = admin_client.get(reverse("source-detail", kwargs={"source_id": run.source_id})).content.decode()
    assert "deploy" in detail and "invalid" in detail


def test_pending_run_page_refreshes_itself(admin_client: Client) -> None:
    run = IngestRun.objects.create(
        source_kind="project", location="https://github.com/a/b", progress_total=10, progress_done=4
    )
    html = admin_client.get(reverse("ingest-run", kwargs={"run_id": run.pk})).content.decode()
    assert 'http-equiv="refresh"' in html and 'value="40"' in html


def test_hostile_location_is_a_400_form_error(admin_client: Client) -> None:
    response = admin_client.post(reverse("sources"), {"kind": "project", "location": "ext::sh -c id"})
    assert response.status_code == 400
    assert "ext::" in response.content.decode()
    assert not Source.objects.exists()


def test_non_admins_cannot_register_or_ingest(lead_client: Client, developer_client: Client) -> None:
    source = Source.objects.create(
        kind="project", identity="github.com/a/b", location="https://github.com/a/b"
    )
    for client in (lead_client, developer_client):
        assert client.post(reverse("sources"), {"kind": "project", "location": "/etc"}).status_code == 403
        assert client.post(reverse("source-ingest", kwargs={"source_id": source.pk})).status_code == 403
    assert not IngestRun.objects.exists()


def test_ingest_action_needs_csrf(admin_user: Any) -> None:
    source = Source.objects.create(
        kind="project", identity="github.com/a/b", location="https://github.com/a/b"
    )
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    assert client.post(reverse("source-ingest", kwargs={"source_id": source.pk})).status_code == 403
    assert not IngestRun.objects.exists()


def test_lead_uploads_an_archive(lead_client: Client) -> None:
    archive = SimpleUploadedFile("payments-skills.zip", make_zip({"deploy/SKILL.md": SKILL_MD}))
    response = lead_client.post(reverse("skills-upload"), {"file": archive, "kind": "project"})
    assert response.status_code == 302, response.content.decode()
    assert Skill.objects.get().source.identity == "upload:payments-skills"


def test_hostile_upload_is_refused_on_the_page_and_stores_nothing(lead_client: Client) -> None:
    archive = SimpleUploadedFile("evil.zip", make_zip({"../../etc/cron.d/SKILL.md": SKILL_MD}))
    response = lead_client.post(reverse("skills-upload"), {"file": archive, "kind": "project"})
    assert response.status_code == 400
    assert "archive-path-traversal" in response.content.decode()
    assert not (Source.objects.exists() or Skill.objects.exists() or IngestRun.objects.exists())


def test_lead_cannot_upload_managed_skills(lead_client: Client) -> None:
    archive = SimpleUploadedFile("m.zip", make_zip({"deploy/SKILL.md": SKILL_MD}))
    response = lead_client.post(reverse("skills-upload"), {"file": archive, "kind": "managed"})
    assert (
        response.status_code == 403 and "Only admins may upload managed skills" in response.content.decode()
    )
    assert not Skill.objects.exists()


def test_developer_cannot_upload(developer_client: Client) -> None:
    archive = SimpleUploadedFile("m.zip", make_zip({"deploy/SKILL.md": SKILL_MD}))
    assert developer_client.post(reverse("skills-upload"), {"file": archive}).status_code == 403
    assert not Skill.objects.exists()
