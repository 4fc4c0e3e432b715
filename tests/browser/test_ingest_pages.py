"""Sources and upload pages in a real browser: register, watch the run finish, see a refusal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from governance.skills.models import Skill
from tests.engine.archive_builders import SKILL_MD, make_zip
from tests.engine.gitrepo import write_skill

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.fixture
def eager() -> Any:
    from portal.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous


def test_admin_registers_a_source_and_sees_the_report(
    login: Any, admin_user: User, tmp_path: Path, eager: Any
) -> None:
    root = tmp_path / "managed"
    write_skill(root, "deploy", "deploy")
    write_skill(root, "security-review", "security-review")
    write_skill(root, "broken", "Broken")
    page = login(admin_user)
    page.click("[data-nav=sources]")
    page.select_option("#id_kind", "managed")
    page.fill("#id_location", str(root))
    page.fill("#id_display_name", "Managed skills")
    page.click("[data-testid=source-form] button[type=submit]")
    page.wait_for_selector("[data-status=succeeded]")
    assert "skills found" in page.inner_text("[data-testid=counts]")
    assert "name-not-lowercase" in page.inner_text("[data-testid=run-findings]")
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "ingest-run.png"), full_page=True)
    page.goto("/sources/")
    assert "Managed skills" in page.inner_text("[data-testid=sources]")
    page.screenshot(path=str(SHOTS / "ingest-sources.png"), full_page=True)
    assert Skill.objects.count() == 3


def test_lead_sees_a_hostile_upload_refused(login: Any, lead_user: User, tmp_path: Path) -> None:
    evil = tmp_path / "evil.zip"
    evil.write_bytes(make_zip({"../../etc/SKILL.md": SKILL_MD}))
    page = login(lead_user)
    page.click("[data-nav=sources]")
    page.set_input_files("#id_file", str(evil))
    page.click("[data-testid=upload-form] button[type=submit]")
    error = page.inner_text("[data-testid=upload-error]")
    assert "archive-path-traversal" in error and "escapes the archive" in error
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "ingest-upload-refused.png"), full_page=True)
    assert Skill.objects.count() == 0
