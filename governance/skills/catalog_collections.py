"""Collections (named sets of skills) and exports: a Claude Code plugin marketplace, or a tarball
for a managed skills directory.

Writes are keyword-only ``collection_*`` services; reads are ``collection_rows``; exports build
the archive in memory from the stored packages (every file of each skill's current version, by
sha256), so what is exported is exactly what was reviewed.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q

from governance.audit.services import audit_record
from governance.engine.resolve import TRUST_RANK
from governance.skills import catalog_selectors as sel
from governance.skills.models import Blob, Collection, Skill, VersionFile

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,99}$")
MARKETPLACE_SCHEMA = "https://json.schemastore.org/claude-code-marketplace.json"
PLUGIN_SCHEMA = "https://json.schemastore.org/claude-code-plugin-manifest.json"


class CollectionError(ValueError):
    pass


@transaction.atomic
def collection_create(*, slug: str, name: str, description: str = "", created_by: User | None) -> Collection:
    slug = slug.strip().lower()
    if not SLUG.match(slug):
        raise CollectionError("slug: lowercase letters, digits and hyphens, starting with a letter or digit")
    if not name.strip():
        raise CollectionError("name: required")
    if Collection.objects.filter(slug=slug).exists():
        raise CollectionError(f"slug: a collection named {slug!r} already exists")
    collection = Collection.objects.create(
        slug=slug, name=name.strip()[:200], description=description.strip(), created_by=created_by
    )
    audit_record(
        actor=created_by,
        action="collection.create",
        target_type="collection",
        target_id=collection.pk,
        target_label=slug,
        evidence={"name": collection.name},
    )
    return collection


@transaction.atomic
def collection_add_skills(*, collection: Collection, skill_ids: Iterable[int], actor: User | None) -> int:
    ids = set(skill_ids)
    found = set(Skill.objects.filter(pk__in=ids, removed_at__isnull=True).values_list("pk", flat=True))
    missing = sorted(ids - found)
    if missing:
        raise CollectionError(f"no such skill: {', '.join(map(str, missing))}")
    before = set(collection.skills.values_list("pk", flat=True))
    collection.skills.add(*found)
    added = sorted(found - before)
    if added:
        audit_record(
            actor=actor,
            action="collection.add",
            target_type="collection",
            target_id=collection.pk,
            target_label=collection.slug,
            evidence={"skills": added},
        )
    return len(added)


@transaction.atomic
def collection_remove_skill(*, collection: Collection, skill_id: int, actor: User | None) -> None:
    collection.skills.remove(skill_id)
    audit_record(
        actor=actor,
        action="collection.remove",
        target_type="collection",
        target_id=collection.pk,
        target_label=collection.slug,
        evidence={"skill": skill_id},
    )


def collection_rows(slug: str) -> list[sel.CatalogRow] | None:
    """The current versions of a collection's skills, or None when there is no such collection."""
    collection = Collection.objects.filter(slug=slug).first()
    if collection is None:
        return None
    return sel.rows_where(Q(collections=collection))


# --------------------------------------------------------------------------------------------
# Exports
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Export:
    filename: str
    content: bytes
    skills: list[str]
    skipped: list[str]


def _unique_by_folder(rows: Sequence[sel.CatalogRow]) -> tuple[list[sel.CatalogRow], list[str]]:
    """One skill per folder name (the name, which must equal the folder); most trusted first."""
    ordered = sorted(rows, key=lambda r: (-TRUST_RANK.get(r.source_kind, 0), r.name, r.skill_id))
    kept: dict[str, sel.CatalogRow] = {}
    skipped: list[str] = []
    for row in ordered:
        if not SLUG.match(row.name):
            skipped.append(f"{row.qualified_name}@{row.source_kind.value}: name is not a safe folder name")
        elif row.name in kept:
            skipped.append(
                f"{row.qualified_name}@{row.source_kind.value}: same folder as {kept[row.name].source_kind.value}"
            )
        else:
            kept[row.name] = row
    return sorted(kept.values(), key=lambda r: r.name), skipped


def _files(rows: Sequence[sel.CatalogRow]) -> dict[int, list[tuple[str, bytes]]]:
    """version id → [(path, bytes)] for every row, in two queries."""
    refs = list(
        VersionFile.objects.filter(version_id__in=[r.version_id for r in rows])
        .order_by("version_id", "path")
        .values_list("version_id", "path", "blob_id")
    )
    blobs = dict(Blob.objects.filter(sha256__in={sha for _, _, sha in refs}).values_list("sha256", "content"))
    out: dict[int, list[tuple[str, bytes]]] = {}
    for version_id, path, sha in refs:
        out.setdefault(version_id, []).append((path, bytes(blobs[sha])))
    return out


def _tar(entries: Sequence[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for path, data in entries:
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mode = 0o755 if path.split("/")[-2:-1] == ["scripts"] or path.endswith(".sh") else 0o644
            info.mtime = 0  # reproducible: equal content, equal archive
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _version(rows: Sequence[sel.CatalogRow]) -> str:
    digest = hashlib.sha256(",".join(f"{r.skill_id}:{r.version_id}" for r in rows).encode()).hexdigest()
    return f"1.0.0+{digest[:12]}"


def export_managed(rows: Sequence[sel.CatalogRow], *, label: str) -> Export:
    """A tarball to unpack into a managed directory: ``.claude/skills/<name>/...``."""
    kept, skipped = _unique_by_folder(rows)
    files = _files(kept)
    entries = [
        (f".claude/skills/{row.name}/{path}", data)
        for row in kept
        for path, data in files.get(row.version_id, [])
    ]
    return Export(f"{label}-managed-skills.tar.gz", _tar(entries), [r.name for r in kept], skipped)


def export_marketplace(
    rows: Sequence[sel.CatalogRow], *, slug: str, name: str, description: str, owner: str
) -> Export:
    """A Claude Code plugin marketplace: ``.claude-plugin/marketplace.json`` and one plugin
    (``plugins/<slug>``) whose ``skills/`` holds every skill; Claude Code lists them as
    ``<slug>:<name>``."""
    kept, skipped = _unique_by_folder(rows)
    files = _files(kept)
    version = _version(kept)
    text = description or f"Skills of {name}, exported from the skill governance portal."
    marketplace = {
        "$schema": MARKETPLACE_SCHEMA,
        "name": slug,
        "owner": {"name": owner},
        "description": text,
        "plugins": [{"name": slug, "source": f"./plugins/{slug}", "description": text, "version": version}],
    }
    plugin = {"$schema": PLUGIN_SCHEMA, "name": slug, "version": version, "description": text}
    root = f"{slug}-marketplace"
    entries: list[tuple[str, bytes]] = [
        (f"{root}/.claude-plugin/marketplace.json", json.dumps(marketplace, indent=2).encode() + b"\n"),
        (f"{root}/plugins/{slug}/.claude-plugin/plugin.json", json.dumps(plugin, indent=2).encode() + b"\n"),
    ]
    entries += [
        (f"{root}/plugins/{slug}/skills/{row.name}/{path}", data)
        for row in kept
        for path, data in files.get(row.version_id, [])
    ]
    return Export(f"{root}.tar.gz", _tar(entries), [r.name for r in kept], skipped)


def served_rows(catalog: sel.ProjectCatalog) -> list[sel.CatalogRow]:
    """What a project's agents load (trust-first): active, hidden and conditional skills."""
    from governance.engine.resolve import Status

    keep = {Status.ACTIVE, Status.HIDDEN, Status.CONDITIONAL}
    return [row for row, res in catalog.resolved() if res.status in keep]
