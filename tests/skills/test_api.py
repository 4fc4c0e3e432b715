"""The skills API: scoped tokens, roles, and precise 4xx answers to hostile input (nothing stored)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from governance.skills.models import Blob, IngestRun, Skill, SkillVersion, Source
from tests.engine.archive_builders import SKILL_MD, make_targz, make_zip
from tests.engine.gitrepo import write_skill

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_tasks")]

API = "/api/v1/skills"


def nothing_stored() -> bool:
    return not (
        Source.objects.exists()
        or Skill.objects.exists()
        or SkillVersion.objects.exists()
        or Blob.objects.exists()
        or IngestRun.objects.exists()
    )


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def post_json(client: Client, path: str, data: Any, token: str | None = None) -> Any:
    headers = auth(token) if token else {}
    return client.post(
        f"{API}{path}", data=json.dumps(data), content_type="application/json", headers=headers
    )


def upload(client: Client, token: str, data: bytes, filename: str = "skills.zip", **fields: str) -> Any:
    return client.post(
        f"{API}/archives", data={"file": SimpleUploadedFile(filename, data), **fields}, headers=auth(token)
    )


@pytest.fixture
def admin_token(admin_user: User, make_token: Callable[..., str]) -> str:
    return make_token(admin_user, "skills:read", "skills:write")


@pytest.fixture
def lead_token(lead_user: User, make_token: Callable[..., str]) -> str:
    return make_token(lead_user, "skills:read", "skills:write")


def test_admin_registers_a_directory_and_reads_skills_back(
    tmp_path: Path, admin_token: str, django_capture_on_commit_callbacks: Any
) -> None:
    write_skill(tmp_path, "deploy", "deploy")
    client = Client()
    with django_capture_on_commit_callbacks(execute=True):
        response = post_json(client, "/sources", {"kind": "managed", "location": str(tmp_path)}, admin_token)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["source"]["identity"] == f"local:{tmp_path}"
    run = client.get(f"{API}/runs/{body['run']['id']}", headers=auth(admin_token)).json()
    assert run["status"] == "succeeded" and run["counts"]["new_versions"] == 1
    listed = client.get(f"{API}/?kind=managed", headers=auth(admin_token)).json()
    assert [(s["name"], s["version"], s["valid"]) for s in listed] == [("deploy", 1, True)]
    skill_id = listed[0]["id"]
    version = client.get(f"{API}/{skill_id}/versions/1", headers=auth(admin_token)).json()
    assert [f["path"] for f in version["files"]] == ["SKILL.md"]
    assert version["body"].startswith("# Steps")
    assert len(client.get(f"{API}/{skill_id}/versions", headers=auth(admin_token)).json()) == 1
    again = client.post(f"{API}/sources/{body['source']['id']}/ingest", headers=auth(admin_token))
    assert again.status_code == 202


def test_read_needs_the_read_scope(admin_user: User, make_token: Callable[..., str]) -> None:
    wrong = make_token(admin_user, "telemetry:write")
    assert Client().get(f"{API}/", headers=auth(wrong)).status_code == 401
    assert Client().get(f"{API}/").status_code == 401


def test_write_needs_the_write_scope(
    admin_user: User, make_token: Callable[..., str], tmp_path: Path
) -> None:
    read_only = make_token(admin_user, "skills:read")
    response = post_json(Client(), "/sources", {"kind": "managed", "location": str(tmp_path)}, read_only)
    assert response.status_code == 401 and nothing_stored()


def test_lead_may_not_ingest_directories_or_managed_sources(lead_token: str, tmp_path: Path) -> None:
    response = post_json(Client(), "/sources", {"kind": "project", "location": str(tmp_path)}, lead_token)
    assert response.status_code == 403
    assert response.json()["detail"] == "only admins may ingest a directory path"
    response = post_json(
        Client(), "/sources", {"kind": "managed", "location": "https://github.com/acme/skills"}, lead_token
    )
    assert response.status_code == 403 and "only admins may ingest managed" in response.json()["detail"]
    assert nothing_stored()


def test_developer_may_not_ingest(developer_user: User, make_token: Callable[..., str]) -> None:
    token = make_token(developer_user, "skills:read", "skills:write")
    response = post_json(
        Client(), "/sources", {"kind": "project", "location": "https://github.com/a/b"}, token
    )
    assert response.status_code == 403 and "team lead or admin" in response.json()["detail"]
    assert nothing_stored()


def test_lead_registers_a_git_url_without_ingesting(lead_token: str, org: Any) -> None:
    response = post_json(
        Client(),
        "/sources",
        {
            "kind": "project",
            "location": "git@github.com:Acme/Payments-API.git",
            "project": "payments-api",
            "ingest": False,
        },
        lead_token,
    )
    assert response.status_code == 201
    assert response.json()["source"]["identity"] == "github.com/acme/payments-api"
    assert response.json()["source"]["project"] == "payments-api"
    assert response.json()["run"] is None


@pytest.mark.parametrize(
    ("payload", "code", "detail"),
    [
        ({"kind": "project", "location": "ext::sh -c id"}, "source-location", "ext::"),
        (
            {"kind": "project", "location": "https://github.com/a/b\n"},
            "source-location",
            "control characters",
        ),
        ({"kind": "project", "location": ""}, "source-location", "empty source location"),
        ({"kind": "galaxy", "location": "https://github.com/a/b"}, "source-kind", "kind must be one of"),
        (
            {"kind": "project", "location": "https://github.com/a/b", "ref": "--upload-pack=x"},
            "git-ref",
            "not a valid branch",
        ),
        (
            {"kind": "project", "location": "https://github.com/a/b", "project": "nope"},
            "project-unknown",
            "no project",
        ),
    ],
)
def test_hostile_source_input_is_a_precise_400(
    admin_token: str, payload: dict[str, str], code: str, detail: str
) -> None:
    response = post_json(Client(), "/sources", payload, admin_token)
    assert response.status_code == 400, response.content
    assert response.json()["code"] == code and detail in response.json()["detail"]
    assert nothing_stored()


def test_malformed_json_is_a_4xx(admin_token: str) -> None:
    response = Client().post(
        f"{API}/sources", data=b"{nope", content_type="application/json", headers=auth(admin_token)
    )
    assert 400 <= response.status_code < 500 and nothing_stored()


def test_upload_of_an_honest_archive(lead_token: str) -> None:
    data = make_zip({"deploy/SKILL.md": SKILL_MD, "deploy/scripts/ship.sh": b"echo ship\n"})
    response = upload(Client(), lead_token, data, "team-skills.zip")
    assert response.status_code == 201, response.content
    assert response.json()["status"] == "succeeded" and response.json()["counts"]["new_skills"] == 1
    source = Source.objects.get()
    assert source.identity == "upload:team-skills" and source.kind == "project"
    skill = Skill.objects.get()
    assert {f.path for f in skill.current_version.files.all()} == {"SKILL.md", "scripts/ship.sh"}  # type: ignore[union-attr]


HOSTILE_ARCHIVES = [
    (make_zip({"../evil/SKILL.md": SKILL_MD}), "archive-path-traversal", "escapes the archive"),
    (make_zip({"/etc/x/SKILL.md": SKILL_MD}), "archive-absolute-path", "absolute path"),
    (
        make_zip({"d/SKILL.md": SKILL_MD, "d/l": b"/etc/passwd"}, special={"d/l": stat.S_IFLNK | 0o777}),
        "archive-link",
        "symbolic link",
    ),
    (make_targz([("d/SKILL.md", SKILL_MD), ("d/tty", "chr")]), "archive-special-file", "device"),
    (make_targz([("d/SKILL.md", SKILL_MD), ("d/l", ("symlink", "../../etc"))]), "archive-link", "is a link"),
    (make_zip({"caf\u00e9/SKILL.md": SKILL_MD}, raw_names=True), "archive-name-encoding", "not valid UTF-8"),
    (
        make_zip({"bomb/SKILL.md": SKILL_MD, "bomb/z": b"\0" * (6 * 1024 * 1024)}),
        "archive-bomb",
        "compression bomb",
    ),
    (make_zip({f"s/{i}": b"x" for i in range(2001)}), "archive-too-many-entries", "more than 2000 entries"),
    (make_zip({"notes/readme.md": b"no skill here"}), "archive-no-skills", "holds no skill folder"),
    (b"MZ\x90\x00 not an archive", "archive-format", "neither a zip nor"),
]


@pytest.mark.parametrize(("data", "code", "detail"), HOSTILE_ARCHIVES)
def test_hostile_archives_are_refused_and_leave_no_trace(
    admin_token: str, data: bytes, code: str, detail: str, tmp_path: Path, settings: Any
) -> None:
    settings.SKILL_STORAGE_DIR = tmp_path
    response = upload(Client(), admin_token, data, "upload.zip")
    assert response.status_code == 400, response.content
    assert response.json()["code"] == code
    assert detail in response.json()["detail"]
    assert nothing_stored()
    assert not any(tmp_path.rglob("*")) or list((tmp_path / "work").iterdir()) == []


def test_oversized_upload_is_413(admin_token: str, settings: Any) -> None:
    settings.SKILL_UPLOAD_MAX_BYTES = 2048
    response = upload(Client(), admin_token, make_zip({"d/SKILL.md": SKILL_MD, "d/big": os.urandom(4096)}))
    assert response.status_code == 413 and response.json()["code"] == "archive-too-large"
    assert nothing_stored()


def test_upload_without_file_is_4xx(admin_token: str) -> None:
    response = Client().post(f"{API}/archives", data={"kind": "project"}, headers=auth(admin_token))
    assert 400 <= response.status_code < 500 and nothing_stored()


def test_mcp_push_stores_skills_with_source_mcp(admin_token: str) -> None:
    skill_md = "---\nname: docs-search\ndescription: Searches the internal docs. Use when asked where something is documented.\n---\n# Search\n"
    payload = {
        "server": "Docs-Server",
        "skills": [
            {"name": "docs-search", "skill_md": skill_md, "files": {"references/index.md": "# Index"}}
        ],
    }
    response = post_json(Client(), "/mcp", payload, admin_token)
    assert response.status_code == 201, response.content
    skill = Skill.objects.get()
    assert skill.source.kind == "mcp" and skill.source.identity == "mcp:docs-server"
    assert skill.current_version.valid  # type: ignore[union-attr]
    again = post_json(Client(), "/mcp", payload, admin_token)
    assert again.json()["counts"]["new_versions"] == 0


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ({"server": "", "skills": [{"name": "a", "skill_md": "x"}]}, "mcp-server"),
        ({"server": "s", "skills": []}, "mcp-empty"),
        ({"server": "s", "skills": [{"name": "../x", "skill_md": "x"}]}, "mcp-skill-name"),
        (
            {"server": "s", "skills": [{"name": "a", "skill_md": "x", "files": {"../../etc/passwd": "x"}}]},
            "mcp-file-path",
        ),
        (
            {"server": "s", "skills": [{"name": "a", "skill_md": "x", "files": {"/abs": "x"}}]},
            "mcp-file-path",
        ),
        (
            {"server": "s", "skills": [{"name": "a", "skill_md": "x"}, {"name": "a", "skill_md": "y"}]},
            "mcp-duplicate",
        ),
    ],
)
def test_hostile_mcp_pushes_are_refused(admin_token: str, payload: dict[str, Any], code: str) -> None:
    response = post_json(Client(), "/mcp", payload, admin_token)
    assert response.status_code == 400, response.content
    assert response.json()["code"] == code
    assert nothing_stored()


def test_session_post_needs_csrf(admin_user: User, tmp_path: Path) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    response = post_json(client, "/sources", {"kind": "managed", "location": str(tmp_path)})
    assert response.status_code in {401, 403} and nothing_stored()


def _publish_deny(admin_user: User, pattern: str) -> None:
    from governance.policy.services import policy_draft_update, policy_publish

    policy_draft_update(
        actor=admin_user,
        document={
            "source_rules": [{"effect": "deny", "kind": "repository", "pattern": pattern, "note": "qa"}]
        },
    )
    policy_publish(actor=admin_user)


def test_a_denied_source_is_refused_at_registration_and_nothing_is_stored(
    admin_user: User, admin_token: str, admin_client: Client
) -> None:
    from governance.audit.models import AuditEntry

    _publish_deny(admin_user, "evil/skills")
    response = post_json(
        Client(),
        "/sources",
        {"kind": "project", "location": "https://github.com/Evil/Skills.git"},
        admin_token,
    )
    assert response.status_code == 403, response.content
    assert response.json()["code"] == "source-refused"
    assert "deny repository evil/skills" in response.json()["detail"]
    page = admin_client.post(
        "/sources/", {"kind": "project", "location": "git@github.com:evil/skills.git", "ref": ""}
    )
    assert page.status_code == 403
    assert b"refused by policy" in page.content
    bare = post_json(Client(), "/sources", {"kind": "project", "location": "evil/skills"}, admin_token)
    assert bare.status_code == 403 and bare.json()["code"] == "source-refused"
    assert nothing_stored()
    assert AuditEntry.objects.filter(action="source.refused").count() == 3
    assert not AuditEntry.objects.filter(action="source.registered").exists()


def test_bare_owner_repo_registers_the_github_repository(admin_token: str) -> None:
    response = post_json(
        Client(), "/sources", {"kind": "project", "location": "Acme/Skills", "ingest": False}, admin_token
    )
    assert response.status_code == 201, response.content
    source = Source.objects.get()
    assert (source.identity, source.location) == ("github.com/acme/skills", "https://github.com/acme/skills")


@pytest.mark.parametrize(
    ("method", "path", "payload"),
    [
        ("get", "/?name=a%00b", None),
        (
            "post",
            "/sources",
            {"kind": "project", "location": "https://github.com/a/b", "display_name": "x\u0000"},
        ),
        ("post", "/sources", {"kind": "project", "location": "https://github.com/a/b", "project": "p\u0000"}),
        ("post", "/mcp", {"server": "s", "skills": [{"name": "a\u0000", "skill_md": "x"}]}),
    ],
)
def test_nul_characters_are_a_400_not_a_database_error(
    admin_token: str, method: str, path: str, payload: dict[str, Any] | None
) -> None:
    client = Client()
    if method == "get":
        response = client.get(f"{API}{path}", headers=auth(admin_token))
    else:
        response = post_json(client, path, payload, admin_token)
    assert response.status_code == 400, response.content
    assert nothing_stored()


def test_nul_in_skill_text_is_stored_safely(lead_token: str) -> None:
    skill_md = (
        b"---\nname: nul-body\ndescription: Has a NUL in its body. Use when testing.\n---\nbefore\x00after\n"
    )
    response = upload(Client(), lead_token, make_zip({"nul-body/SKILL.md": skill_md}), "nul.zip")
    assert response.status_code == 201 and response.json()["status"] == "succeeded", response.content
    version = Skill.objects.get().current_version
    assert version is not None and "\u0000" not in version.body
    from governance.skills.selectors import version_file_contents

    assert b"before\x00after" in version_file_contents(version)["SKILL.md"]  # the exact bytes are kept
