"""Immutable versions of whole packages: every file kept by sha256, blobs shared."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from governance.skills.models import Blob, Skill, SkillVersion, VersionFile, VersionOrigin
from governance.skills.selectors import version_file_contents, version_package_files
from governance.skills.services import PackageError, package_sha256, skill_version_create
from tests.skills.conftest import error, make_parsed

pytestmark = pytest.mark.django_db


def test_version_stores_the_whole_package(deploy_skill: Skill, admin_user: User) -> None:
    parsed = make_parsed(
        "deploy", extra_files={"scripts/run.sh": b"#!/bin/sh\necho ok\n", "references/a.md": b"A"}
    )
    version = skill_version_create(
        skill=deploy_skill, parsed=parsed, origin=VersionOrigin.INGEST, created_by=admin_user
    )
    assert version.number == 1
    assert version.package_sha256 == package_sha256(parsed.files)
    assert version.created_by == admin_user
    contents = version_file_contents(version)
    assert list(contents) == ["SKILL.md", "references/a.md", "scripts/run.sh"]
    assert contents["scripts/run.sh"] == b"#!/bin/sh\necho ok\n"
    assert contents["SKILL.md"].startswith(b"---\nname: deploy\n")
    deploy_skill.refresh_from_db()
    assert deploy_skill.current_version == version
    assert [f.path for f in version_package_files(version)] == list(contents)


def test_next_version_shares_unchanged_blobs(deploy_skill: Skill) -> None:
    first = make_parsed("deploy", extra_files={"scripts/run.sh": b"same"})
    skill_version_create(skill=deploy_skill, parsed=first, origin=VersionOrigin.INGEST, created_by=None)
    assert Blob.objects.count() == 2
    second = make_parsed(
        "deploy", body="# Steps\n\n1. Do it twice.\n", extra_files={"scripts/run.sh": b"same"}
    )
    v2 = skill_version_create(
        skill=deploy_skill, parsed=second, origin=VersionOrigin.REVIEW, created_by=None, commit="abc123"
    )
    assert v2.number == 2 and v2.origin == VersionOrigin.REVIEW and v2.commit == "abc123"
    assert Blob.objects.count() == 3  # only the new SKILL.md was added
    assert VersionFile.objects.filter(version__skill=deploy_skill).count() == 4
    v1 = SkillVersion.objects.get(skill=deploy_skill, number=1)
    assert version_file_contents(v1)["SKILL.md"] != version_file_contents(v2)["SKILL.md"]


def test_findings_and_validity_are_kept(deploy_skill: Skill) -> None:
    parsed = make_parsed("deploy", findings=[error("name-mismatch")])
    version = skill_version_create(
        skill=deploy_skill, parsed=parsed, origin=VersionOrigin.INGEST, created_by=None
    )
    assert version.valid is False
    assert version.findings[0]["code"] == "name-mismatch"


def test_package_without_skill_md_is_refused_and_stores_nothing(deploy_skill: Skill) -> None:
    parsed = make_parsed("deploy")
    parsed.files = [f for f in parsed.files if f.path != "SKILL.md"]
    with pytest.raises(PackageError, match=r"no SKILL\.md"):
        skill_version_create(skill=deploy_skill, parsed=parsed, origin=VersionOrigin.INGEST, created_by=None)
    assert SkillVersion.objects.count() == 0 and Blob.objects.count() == 0


def test_package_digest_ignores_file_order() -> None:
    a = make_parsed("x", extra_files={"a": b"1", "b": b"2"}).files
    assert package_sha256(a) == package_sha256(list(reversed(a)))
