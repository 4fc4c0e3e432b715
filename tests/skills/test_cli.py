"""``manage.py skills check|ingest``: the JSON contract, exit codes, and no database for check."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from governance.skills.models import IngestRun, Skill, Source
from tests.engine.gitrepo import write_skill

GOOD = "---\nname: {name}\ndescription: Handles {name} work. Use when asked to {name}.\n---\n# Steps\n\n1. Do it.\n"


def skill(folder: Path, text: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(text if text is not None else GOOD.format(name=folder.name))
    return folder


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("skills", *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()


def check_json(*args: str) -> tuple[int, dict[str, Any]]:
    code, out, err = run("check", *args, "--format", "json")
    assert out, err
    return code, json.loads(out)


# No django_db mark: pytest-django refuses any database access, so these prove "check" needs none.


def test_clean_folder_exits_0_with_the_documented_contract(tmp_path: Path) -> None:
    skill(tmp_path / "skills/deploy")
    skill(tmp_path / "skills/db-migrations")
    code, report = check_json(str(tmp_path / "skills"), "--source", "managed")
    assert code == 0
    assert set(report) >= {"skills", "errors"}
    item = report["skills"][0]
    assert set(item) >= {"name", "path", "source", "valid", "findings", "status", "shadowed_by", "permission"}
    assert sorted((s["name"], s["path"], s["source"], s["valid"], s["status"]) for s in report["skills"]) == [
        ("db-migrations", "db-migrations", "managed", True, "active"),
        ("deploy", "deploy", "managed", True, "active"),
    ]
    assert item["shadowed_by"] is None
    assert item["permission"]["decision"] in {"allow", "ask", "deny"}
    assert isinstance(item["permission"]["reasons"], list)
    assert report["errors"] == []


def test_kind_equals_path_resolves_sources_together(tmp_path: Path) -> None:
    skill(tmp_path / "managed/security-review")
    skill(tmp_path / "repo/.claude/skills/security-review")
    skill(tmp_path / "repo/apps/web/.claude/skills/deploy")
    code, report = check_json(f"managed={tmp_path / 'managed'}", f"project={tmp_path / 'repo'}")
    by = {(s["source"], s["path"]): s for s in report["skills"]}
    project_copy = by[("project", ".claude/skills/security-review")]
    assert project_copy["status"] == "shadowed"
    assert project_copy["shadowed_by"] == "security-review@managed"
    assert by[("managed", "security-review")]["status"] == "active"
    assert ("project", "apps/web/.claude/skills/deploy") in by  # monorepo path kept
    assert code in {0, 1}


def test_error_findings_exit_1_with_codes_and_messages(tmp_path: Path) -> None:
    skill(tmp_path / "Bad-Name", "---\nname: Bad-Name\n---\nbody\n")
    code, report = check_json(str(tmp_path))
    assert code == 1
    [item] = report["skills"]
    assert item["valid"] is False and item["status"] == "rejected"
    codes = {f["code"] for f in item["findings"]}
    assert {"name-not-lowercase", "description-missing"} <= codes
    assert all(set(f) >= {"code", "severity", "message"} for f in item["findings"])


def test_strict_turns_unknown_fields_into_errors(tmp_path: Path) -> None:
    skill(tmp_path / "deploy", GOOD.format(name="deploy").replace("---\n#", "frobnicate: yes\n---\n#", 1))
    code, report = check_json(str(tmp_path))
    assert code == 0 and "field-unknown" in {f["code"] for f in report["skills"][0]["findings"]}
    code, report = check_json(str(tmp_path), "--strict")
    assert code == 1 and report["strict"] is True


def test_text_format(tmp_path: Path) -> None:
    skill(tmp_path / "deploy")
    code, out, _ = run("check", str(tmp_path))
    assert code == 0
    assert "ok  deploy [project]" in out and "1 skills, 0 invalid" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/nonexistent/skills"], "no such file or folder"),
        (["galaxy=/tmp"], "unknown source kind 'galaxy'"),
        (["--agent", "gpt-9", "."], "unknown agent"),
        (["--managed-settings", "/nonexistent.json", "."], "--managed-settings"),
    ],
)
def test_could_not_run_exits_2(args: list[str], message: str) -> None:
    code, out, err = run("check", *args)
    assert code == 2
    assert message in out + err


def test_bad_managed_settings_json_exits_2(tmp_path: Path) -> None:
    skill(tmp_path / "skills/deploy")
    (tmp_path / "managed-settings.json").write_text("{not json")
    code, _, err = run(
        "check", str(tmp_path / "skills"), "--managed-settings", str(tmp_path / "managed-settings.json")
    )
    assert code == 2 and "invalid JSON" in err


def test_managed_settings_decide_permission(tmp_path: Path) -> None:
    skill(tmp_path / "skills/deploy")
    (tmp_path / "managed-settings.json").write_text(json.dumps({"permissions": {"deny": ["Skill(deploy)"]}}))
    _code, report = check_json(
        str(tmp_path / "skills"), "--managed-settings", str(tmp_path / "managed-settings.json")
    )
    assert report["skills"][0]["permission"]["decision"] == "deny"


def test_hostile_skill_folders_are_findings_not_crashes(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    skill(root / "binary").joinpath("SKILL.md").write_bytes(
        b"---\nname: binary\ndescription: \xff\xfe\n---\n"
    )
    laughs = (
        "---\nname: laughs\na: &a [x, x, x, x, x, x, x, x, x]\n"
        + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
            for i in range(8)
        )
        + "description: boom\n---\n"
    )
    skill(root / "laughs", laughs)
    skill(tmp_path / "outside/secret")
    os.symlink(tmp_path / "outside/secret", root / "linked")
    code, report = check_json(str(root))
    assert code == 1
    by = {s["name"]: s for s in report["skills"]}
    assert "encoding-not-utf8" in {f["code"] for f in by["binary"]["findings"]}
    assert "yaml-alias-bomb" in {f["code"] for f in by["laughs"]["findings"]}
    assert [(e["code"], e["path"]) for e in report["errors"]] == [("link-outside-root", f"{root}/linked")]
    assert "secret" not in by


@pytest.mark.django_db
def test_ingest_stores_what_check_reads(tmp_path: Path, settings: Any) -> None:
    write_skill(tmp_path / "managed", "deploy", "deploy")
    write_skill(tmp_path / "managed", "bad", "Bad")
    code, out, err = run("ingest", f"managed={tmp_path / 'managed'}", "--format", "json")
    assert code == 1, err  # stored, but with error findings
    report = json.loads(out)["runs"][0]
    assert report["status"] == "succeeded" and report["counts"]["skills_found"] == 2
    assert Skill.objects.filter(source__kind="managed").count() == 2
    code, out, _ = run("ingest", f"managed={tmp_path / 'managed'}")
    assert "new_versions 0" in out


@pytest.mark.django_db
def test_ingest_of_missing_path_exits_2_and_keeps_the_report(tmp_path: Path) -> None:
    code, out, _ = run("ingest", f"user={tmp_path / 'nope'}")
    assert code == 2 and "no such file or folder" in out
    assert IngestRun.objects.get().status == "failed"
    assert not Skill.objects.exists()


@pytest.mark.django_db
def test_ingest_refuses_hostile_location(tmp_path: Path) -> None:
    code, _, err = run("ingest", "project=ext::sh -c id")
    assert code == 2 and "ext::" in err
    assert not Source.objects.exists()


def test_text_format_escapes_what_skills_supply(tmp_path: Path) -> None:
    """A skill's name, description and folder carry an ANSI colour and a bidi override: the text
    report shows them escaped (a terminal must not obey them), in every place they surface."""
    hostile = "evil\x1b[31m\u202eskill"
    frontmatter = '---\nname: "evil\\e[31m\\u202eskill"\ndescription: "Paints \\e[31m red \\u202e. Use when asked."\n---\n'
    skill(tmp_path / "managed" / hostile, frontmatter + "# Steps\n")
    skill(tmp_path / "project" / hostile, frontmatter + "# Steps\n")
    code, out, _ = run("check", f"managed={tmp_path / 'managed'}", f"project={tmp_path / 'project'}")
    assert code in {0, 1}
    assert "evil\\u001b[31m\\u202eskill" in out
    assert f"{tmp_path / 'project'}/evil\\u001b[31m\\u202eskill" in out  # the folder path too
    assert "\x1b" not in out and "\u202e" not in out
    assert all(ch.isprintable() for line in out.splitlines() for ch in line)
