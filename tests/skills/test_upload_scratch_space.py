"""An upload is scanned as its own tree, wherever the scratch space lives."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from governance.skills.models import Skill
from tests.engine.archive_builders import SKILL_MD, make_zip


@pytest.mark.django_db
def test_an_upload_is_not_hidden_by_a_gitignore_above_the_scratch_space(
    tmp_path: Path, settings: Any, lead_user: User, make_token: Callable[..., str]
) -> None:
    """A portal run from a git clone keeps SKILL_STORAGE_DIR in var/, which the clone ignores."""
    clone = tmp_path / "portal-clone"
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    (clone / ".gitignore").write_text("var/\n")
    settings.SKILL_STORAGE_DIR = clone / "var" / "skills"
    token = make_token(lead_user, "skills:write")
    response = Client().post(
        "/api/v1/skills/archives",
        data={"file": SimpleUploadedFile("team.zip", make_zip({"deploy/SKILL.md": SKILL_MD}))},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 201, response.content
    assert list(Skill.objects.values_list("name", flat=True)) == ["deploy"]
    assert list((clone / "var" / "skills" / "work").iterdir()) == []
