"""Skills as stored: sources, skills, immutable versions of whole packages, content-addressed files."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from governance.engine.types import SourceKind

SOURCE_KIND_CHOICES = [(k.value, k.value) for k in SourceKind]

# Trust rank used by the governance default (trust-first): higher wins.
TRUST_RANK = {
    SourceKind.BUNDLED.value: 60,
    SourceKind.BUILTIN.value: 55,
    SourceKind.MANAGED.value: 50,
    SourceKind.USER.value: 30,
    SourceKind.PROJECT.value: 20,
    SourceKind.PLUGIN.value: 15,
    SourceKind.MCP.value: 10,
}


class Source(models.Model):
    """Where skills come from. ``identity`` is canonical (one repository, one identity, any spelling)."""

    kind = models.CharField(max_length=16, choices=SOURCE_KIND_CHOICES)
    identity = models.CharField(max_length=500)
    display_name = models.CharField(max_length=300, blank=True)
    location = models.CharField(max_length=1000, blank=True, help_text="URL or path as registered")
    ref = models.CharField(max_length=200, blank=True)
    project = models.ForeignKey(
        "accounts.Project", null=True, blank=True, on_delete=models.SET_NULL, related_name="sources"
    )
    marketplace = models.CharField(max_length=200, blank=True)
    plugin = models.CharField(max_length=200, blank=True)
    last_commit = models.CharField(max_length=64, blank=True)
    last_ingested_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["kind", "identity"], name="source_kind_identity_unique")
        ]
        ordering = ["kind", "identity"]

    def __str__(self) -> str:
        return self.display_name or f"{self.kind}:{self.identity}"

    @property
    def trust_rank(self) -> int:
        return TRUST_RANK.get(self.kind, 0)


class Blob(models.Model):
    """File content, stored once per sha256 whatever the number of versions that contain it."""

    sha256 = models.CharField(max_length=64, primary_key=True)
    size = models.PositiveIntegerField()
    content = models.BinaryField()


class Skill(models.Model):
    """A skill's identity is (source, location, name); its content lives in versions."""

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="skills")
    location = models.CharField(max_length=1000, help_text="Folder of the skill inside its source (POSIX)")
    name = models.CharField(max_length=200, db_index=True)
    plugin = models.CharField(max_length=200, blank=True)
    current_version = models.ForeignKey(
        "SkillVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    removed_at = models.DateTimeField(
        null=True, blank=True, help_text="Gone from its source at the last ingest"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "location", "name"], name="skill_identity_unique")
        ]
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.qualified_name}@{self.source.kind}"

    @property
    def qualified_name(self) -> str:
        return f"{self.plugin}:{self.name}" if self.plugin else self.name


class VersionOrigin(models.TextChoices):
    INGEST = "ingest", "Ingested from its source"
    REVIEW = "review", "Approved change"
    ROLLBACK = "rollback", "Rollback"


class SkillVersion(models.Model):
    """An immutable snapshot of the whole package: SKILL.md parsed, plus every file by sha256."""

    skill = models.ForeignKey(Skill, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    package_sha256 = models.CharField(
        max_length=64, help_text="sha256 over the sorted (path, sha256) manifest"
    )
    skill_md_sha256 = models.CharField(max_length=64, db_index=True)
    frontmatter = models.JSONField(default=dict)
    frontmatter_text = models.TextField(blank=True)
    body = models.TextField(blank=True)
    description = models.TextField(blank=True)
    valid = models.BooleanField(default=True)
    findings = models.JSONField(default=list)
    origin = models.CharField(max_length=16, choices=VersionOrigin.choices, default=VersionOrigin.INGEST)
    commit = models.CharField(max_length=64, blank=True)
    ingest_run = models.ForeignKey(
        "IngestRun", null=True, blank=True, on_delete=models.SET_NULL, related_name="versions"
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["skill", "number"], name="version_number_unique")]
        ordering = ["skill", "-number"]

    def __str__(self) -> str:
        return f"{self.skill} v{self.number}"


class VersionFile(models.Model):
    version = models.ForeignKey(SkillVersion, on_delete=models.CASCADE, related_name="files")
    path = models.CharField(max_length=1000)
    blob = models.ForeignKey(Blob, on_delete=models.PROTECT, related_name="+")
    size = models.PositiveIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["version", "path"], name="version_file_unique")]
        ordering = ["path"]


class IngestStatus(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    REFUSED = "refused"


class IngestRun(models.Model):
    """One ingest of one source: lands completely or not at all; its report is kept either way."""

    source = models.ForeignKey(Source, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs")
    source_kind = models.CharField(max_length=16, choices=SOURCE_KIND_CHOICES)
    location = models.CharField(max_length=1000)
    ref = models.CharField(max_length=200, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    status = models.CharField(max_length=16, choices=IngestStatus.choices, default=IngestStatus.PENDING)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    counts = models.JSONField(default=dict)
    findings = models.JSONField(default=list)
    error = models.TextField(blank=True)
    commit = models.CharField(max_length=64, blank=True)
    phase = models.CharField(max_length=32, blank=True, help_text="fetching, scanning, storing...")
    attempts = models.PositiveIntegerField(default=0)
    enqueued_at = models.DateTimeField(null=True, blank=True, help_text="last time a task was sent for it")
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="last sign of life of its worker")
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "enqueued_at"], name="ingestrun_status_enqueued")]

    def __str__(self) -> str:
        return f"ingest {self.source_kind}:{self.location} ({self.status})"

    @property
    def progress_percent(self) -> int:
        if self.status in {IngestStatus.SUCCEEDED, IngestStatus.FAILED, IngestStatus.REFUSED}:
            return 100
        if not self.progress_total:
            return 0
        return min(100, int(100 * self.progress_done / self.progress_total))

    @property
    def finished(self) -> bool:
        return self.status in {IngestStatus.SUCCEEDED, IngestStatus.FAILED, IngestStatus.REFUSED}


class Collection(models.Model):
    """A named, curated set of skills: served by the registry, exported as a plugin marketplace
    or as a managed skills directory."""

    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    skills = models.ManyToManyField(Skill, related_name="collections", blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name
