"""Collections: curated by leads, served by the registry, exported as a marketplace or a tarball."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any

import jsonschema
from django.test import Client

from governance.audit.models import AuditEntry
from governance.skills.models import Collection
from tests.catalog.conftest import Catalog

SCHEMAS = Path("/work/shared/schemas")


def _schema(name: str) -> dict[str, Any]:
    """SchemaStore's Claude Code schemas, from the shared folder the team validates against."""
    return json.loads((SCHEMAS / name).read_text())


def _members(archive: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]


def _collection(lead_client: Client, catalog: Catalog) -> Collection:
    response = lead_client.post(
        "/catalog/collections/",
        {"slug": "security", "name": "Security", "description": "Reviewed security skills."},
    )
    assert response.status_code == 302
    for skill in (catalog.managed_review, catalog.deploy, catalog.project_review):
        added = lead_client.post(
            "/catalog/collections/add/", {"collection": "security", "skill": str(skill.pk)}
        )
        assert added.status_code == 302
    return Collection.objects.get(slug="security")


def test_leads_curate_developers_only_look(
    lead_client: Client, developer_client: Client, catalog: Catalog
) -> None:
    collection = _collection(lead_client, catalog)
    assert collection.skills.count() == 3
    assert AuditEntry.objects.filter(action="collection.add", target_label="security").count() == 3
    assert developer_client.post("/catalog/collections/", {"slug": "x", "name": "X"}).status_code == 403
    assert (
        developer_client.post(
            "/catalog/collections/security/edit/", {"remove": str(catalog.deploy.pk)}
        ).status_code
        == 403
    )
    page = developer_client.get("/catalog/collections/security/")
    assert page.status_code == 200 and "Export as plugin marketplace" in page.content.decode()
    duplicate = lead_client.post("/catalog/collections/", {"slug": "security", "name": "Again"})
    assert duplicate.status_code == 400 and "already exists" in duplicate.content.decode()
    bad = lead_client.post("/catalog/collections/security/edit/", {"skill": "999999"})
    assert bad.status_code == 400 and "no such skill: 999999" in bad.content.decode()
    assert collection.skills.count() == 3  # nothing partial
    lead_client.post("/catalog/collections/security/edit/", {"remove": str(catalog.deploy.pk)})
    assert collection.skills.count() == 2


def test_marketplace_export_is_valid_and_complete(lead_client: Client, catalog: Catalog) -> None:
    _collection(lead_client, catalog)
    response = lead_client.get("/catalog/collections/security/export/marketplace/")
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="security-marketplace.tar.gz"'
    files = _members(response.content)
    marketplace = json.loads(files["security-marketplace/.claude-plugin/marketplace.json"])
    plugin = json.loads(files["security-marketplace/plugins/security/.claude-plugin/plugin.json"])
    jsonschema.validate(marketplace, _schema("claude-code-marketplace.json"))
    jsonschema.validate(plugin, _schema("claude-code-plugin-manifest.json"))
    assert marketplace["plugins"][0]["source"] == "./plugins/security"
    # two copies named security-review: the managed one (more trusted) is exported, the other skipped
    skill_md = files["security-marketplace/plugins/security/skills/security-review/SKILL.md"]
    assert b"Review a change for security issues" in skill_md
    assert response["X-Skipped-Skills"] == "1"
    assert (
        files["security-marketplace/plugins/security/skills/deploy/scripts/deploy.sh"]
        == b"#!/bin/sh\necho deploy\n"
    )


def test_managed_export_and_project_export(lead_client: Client, catalog: Catalog) -> None:
    _collection(lead_client, catalog)
    files = _members(lead_client.get("/catalog/collections/security/export/managed/").content)
    assert sorted(files) == [
        ".claude/skills/deploy/SKILL.md",
        ".claude/skills/deploy/references/runbook.md",
        ".claude/skills/deploy/scripts/deploy.sh",
        ".claude/skills/security-review/SKILL.md",
    ]
    project = _members(lead_client.get("/catalog/projects/payments-api/export/managed/").content)
    names = {p.split("/")[2] for p in project}
    # what payments-api's agents load under trust-first: no shadowed copy, no unsafe look-alike name
    assert names == {"commit", "deploy", "release-notes", "security-review", "sql-style"}
    assert lead_client.get("/catalog/projects/payments-api/export/zip/").status_code == 404


def test_registry_serves_a_collection(
    lead_client: Client, catalog: Catalog, lead_user: Any, make_token: Any
) -> None:
    _collection(lead_client, catalog)
    token = make_token(lead_user, "skills:read")
    headers = {"Authorization": f"Bearer {token}"}
    index = Client().get("/registry/collections/security/index.json", headers=headers)
    assert index.json() == {"skills": ["deploy", "security-review"]}
    assert Client().get("/registry/collections/nope/index.json", headers=headers).status_code == 404
