"""Helpers for the skills tests: parsed packages built by hand, sources in the database."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import pytest

from governance.engine.types import Finding, PackageFile, ParsedSkill, Severity, SourceKind
from governance.skills.models import Skill, Source


def package_file(path: str, content: bytes) -> PackageFile:
    return PackageFile(
        path=path, sha256=hashlib.sha256(content).hexdigest(), size=len(content), content=content
    )


def make_parsed(
    name: str,
    *,
    description: str = "Does a thing. Use when the thing is asked for.",
    body: str = "# Steps\n\n1. Do it.\n",
    extra_files: dict[str, bytes] | None = None,
    source: SourceKind = SourceKind.PROJECT,
    findings: list[Finding] | None = None,
) -> ParsedSkill:
    frontmatter_text = f"name: {name}\ndescription: {description}\n"
    skill_md = f"---\n{frontmatter_text}---\n{body}".encode()
    files = [package_file("SKILL.md", skill_md)]
    files += [package_file(p, c) for p, c in sorted((extra_files or {}).items())]
    return ParsedSkill(
        name=name,
        folder=name,
        path=name,
        source=source,
        frontmatter={"name": name, "description": description},
        frontmatter_text=frontmatter_text,
        body=body,
        skill_md_sha256=files[0].sha256,
        findings=list(findings or []),
        files=files,
    )


def error(code: str) -> Finding:
    return Finding(code=code, severity=Severity.ERROR, message=code)


@pytest.fixture
def project_source(db: None) -> Source:
    return Source.objects.create(kind="project", identity="github.com/acme/payments-api", location="x")


@pytest.fixture
def deploy_skill(project_source: Source) -> Skill:
    return Skill.objects.create(source=project_source, location=".claude/skills/deploy", name="deploy")


@pytest.fixture
def eager_tasks() -> Iterator[None]:
    """Run Celery tasks in-process even when a broker is configured (tests of the services)."""
    from portal.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous


@pytest.fixture(autouse=True)
def skill_storage(settings: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Checkouts and unpacked archives go to a scratch folder of the test, never the repository's var/."""
    settings.SKILL_STORAGE_DIR = tmp_path_factory.mktemp("skill-storage")
    return settings.SKILL_STORAGE_DIR
