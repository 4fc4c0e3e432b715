"""Marketplaces: plugin skills named plugin:name, relative sources kept inside the root, remote ones recorded."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from governance.engine.marketplace import MarketplaceError, load_marketplace
from governance.engine.scan import scan_source
from governance.engine.types import SourceKind

SCHEMAS = Path("/work/shared/schemas")


def write_skill(folder: Path, name: str | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name or folder.name}\ndescription: Handles {folder.name} work. Use when asked.\n---\n# Steps\n"
    )


def make_marketplace(root: Path, plugins: list[dict[str, Any]], **extra: Any) -> Path:
    (root / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    manifest = {"name": "acme-tools", "owner": {"name": "Acme Platform"}, "plugins": plugins, **extra}
    (root / ".claude-plugin/marketplace.json").write_text(json.dumps(manifest))
    return root


def test_local_plugins_yield_namespaced_skills(tmp_path: Path) -> None:
    write_skill(tmp_path / "plugins/pdf-tools/skills/pdf-extract")
    write_skill(tmp_path / "plugins/pdf-tools/extra/pdf-merge")
    (tmp_path / "plugins/pdf-tools/.claude-plugin").mkdir(parents=True)
    (tmp_path / "plugins/pdf-tools/.claude-plugin/plugin.json").write_text(
        json.dumps({"name": "pdf-tools", "version": "1.2.0", "skills": "./extra"})
    )
    write_skill(tmp_path / "plugins/release/skills/changelog")
    make_marketplace(
        tmp_path,
        [
            {"name": "pdf-tools", "source": "./plugins/pdf-tools"},
            {"name": "release", "source": "./plugins/release", "version": "0.3.0"},
            {"name": "remote-one", "source": {"source": "github", "repo": "Acme/Remote-Plugin"}},
            {"name": "npm-one", "source": {"source": "npm", "package": "@acme/skills"}},
        ],
    )
    result = scan_source(tmp_path, kind=SourceKind.PROJECT, identity="github.com/acme/tools")
    assert result.kind is SourceKind.PLUGIN
    names = sorted((s.qualified_name, s.path, s.source.value) for s in result.skills)
    assert names == [
        ("pdf-tools:pdf-extract", "plugins/pdf-tools/skills/pdf-extract", "plugin"),
        ("pdf-tools:pdf-merge", "plugins/pdf-tools/extra/pdf-merge", "plugin"),
        ("release:changelog", "plugins/release/skills/changelog", "plugin"),
    ]
    assert all(s.valid for s in result.skills), [f for s in result.skills for f in s.findings]
    assert {s.source_identity for s in result.skills} == {"github.com/acme/tools"}
    remote = {p.name: p for p in result.remote_plugins}
    assert remote["remote-one"].identity == "github.com/acme/remote-plugin"
    assert remote["remote-one"].fetchable_git
    assert remote["npm-one"].identity == "npm:@acme/skills" and not remote["npm-one"].fetchable_git
    market = load_marketplace(tmp_path)
    assert market.name == "acme-tools" and market.owner == "Acme Platform"
    assert {p.name: p.version for p in market.plugins}["pdf-tools"] == "1.2.0"


def test_prefix_is_applied_after_the_name_checks(tmp_path: Path) -> None:
    # The skill's own name is checked against its folder; the namespace comes afterwards.
    write_skill(tmp_path / "p/skills/deploy")
    write_skill(tmp_path / "p/skills/wrong", name="other")
    make_marketplace(tmp_path, [{"name": "ops", "source": "./p"}])
    by_name = {s.qualified_name: s for s in scan_source(tmp_path, kind=SourceKind.PLUGIN).skills}
    assert by_name["ops:deploy"].valid and by_name["ops:deploy"].name == "deploy"
    assert "name-folder-mismatch" in [f.code for f in by_name["ops:other"].findings]


@pytest.mark.parametrize("source", ["../outside", "./../outside", "/etc", "./link-out"])
def test_relative_sources_stay_inside_the_marketplace(tmp_path: Path, source: str) -> None:
    write_skill(tmp_path / "outside/skills/secret")
    market = tmp_path / "market"
    market.mkdir()
    os.symlink(tmp_path / "outside", market / "link-out")
    make_marketplace(market, [{"name": "evil", "source": source}])
    result = scan_source(market, kind=SourceKind.PLUGIN)
    assert result.skills == []
    assert [e.code for e in result.errors] == ["plugin-source-outside-root"]
    assert "leaves the marketplace folder" in result.errors[0].message


def test_plugin_skill_paths_stay_inside_the_plugin(tmp_path: Path) -> None:
    write_skill(tmp_path / "outside/secret")
    write_skill(tmp_path / "m/p/skills/ok")
    (tmp_path / "m/p/.claude-plugin").mkdir(parents=True)
    (tmp_path / "m/p/.claude-plugin/plugin.json").write_text(
        json.dumps({"name": "p", "skills": ["../../outside"]})
    )
    make_marketplace(tmp_path / "m", [{"name": "p", "source": "./p"}])
    result = scan_source(tmp_path / "m", kind=SourceKind.PLUGIN)
    assert [s.qualified_name for s in result.skills] == ["p:ok"]
    assert [e.code for e in result.errors] == ["plugin-skills-outside-plugin"]


def test_plugin_name_that_would_destroy_the_namespace(tmp_path: Path) -> None:
    write_skill(tmp_path / "p/skills/deploy")
    make_marketplace(tmp_path, [{"name": "evil:ops", "source": "./p"}])
    result = scan_source(tmp_path, kind=SourceKind.PLUGIN)
    assert [e.code for e in result.errors] == ["plugin-name-namespace"]
    assert [s.qualified_name for s in result.skills] == ["deploy"]  # never "evil:ops:deploy"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "invalid JSON at line 1"),
        ("[]", "must be a JSON object"),
        ('{"owner": {"name": "x"}, "plugins": []}', "'name' is required"),
        ('{"name": "m", "plugins": {}}', "'plugins' must be a list"),
        (b"\xff\xfe{}", "not UTF-8"),
    ],
)
def test_broken_marketplace_manifest(tmp_path: Path, content: str | bytes, message: str) -> None:
    (tmp_path / ".claude-plugin").mkdir()
    target = tmp_path / ".claude-plugin/marketplace.json"
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content)
    with pytest.raises(MarketplaceError, match=message):
        load_marketplace(tmp_path)
    result = scan_source(tmp_path, kind=SourceKind.PLUGIN)
    assert result.unreadable and result.errors[0].code == "path-unreadable"


def test_single_plugin_folder(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills/pdf-extract")
    (tmp_path / ".claude-plugin").mkdir()
    (tmp_path / ".claude-plugin/plugin.json").write_text(json.dumps({"name": "pdf-tools"}))
    result = scan_source(tmp_path, kind=SourceKind.PLUGIN)
    assert [s.qualified_name for s in result.skills] == ["pdf-tools:pdf-extract"]


@pytest.mark.skipif(not SCHEMAS.is_dir(), reason="shared schemas not present")
def test_manifests_we_accept_validate_against_the_published_schemas(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    manifest = {
        "name": "acme-tools",
        "owner": {"name": "Acme Platform"},
        "plugins": [
            {"name": "pdf-tools", "source": "./plugins/pdf-tools"},
            {"name": "remote-one", "source": {"source": "github", "repo": "acme/remote"}},
        ],
    }
    schema = json.loads((SCHEMAS / "claude-code-marketplace.json").read_text())
    jsonschema.validate(manifest, schema)
    plugin_schema = json.loads((SCHEMAS / "claude-code-plugin-manifest.json").read_text())
    jsonschema.validate({"name": "pdf-tools", "version": "1.2.0", "skills": "./extra"}, plugin_schema)
