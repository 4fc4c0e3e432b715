"""Organisation → teams → projects, roles, and API tokens."""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone


class Role(models.TextChoices):
    ADMIN = "admin", "Admin"
    LEAD = "lead", "Team lead"
    DEVELOPER = "developer", "Developer"


class Organisation(models.Model):
    name = models.CharField(max_length=200, unique=True)
    slug = models.SlugField(max_length=100, unique=True)

    def __str__(self) -> str:
        return self.name


class Team(models.Model):
    organisation = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="teams")
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=100)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, through="Membership", related_name="teams")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organisation", "slug"], name="team_slug_unique")]
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Project(models.Model):
    """A project is a repository; ``path`` scopes ownership inside a monorepo ("" = whole repository)."""

    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="projects")
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=100, unique=True)
    repository_url = models.CharField(max_length=500, blank=True)
    path = models.CharField(max_length=500, blank=True, default="")
    # Local checkout or bare repository the portal pushes approved changes to (reviews).
    push_url = models.CharField(max_length=500, blank=True)
    read_only = models.BooleanField(default=False)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Profile(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile")
    organisation = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="profiles")
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.DEVELOPER)

    def __str__(self) -> str:
        return f"{self.user} ({self.role})"


class Membership(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "team"], name="membership_unique")]


class Scope(models.TextChoices):
    SKILLS_READ = "skills:read", "Read skills and the registry"
    SKILLS_WRITE = "skills:write", "Ingest skills"
    TELEMETRY_WRITE = "telemetry:write", "Send telemetry"
    REVIEWS_WRITE = "reviews:write", "Propose skill changes (agents)"
    REVIEWS_DECIDE = "reviews:decide", "Approve or dismiss proposed skill changes (team leads' tools)"
    POLICY_READ = "policy:read", "Download managed policy"


TOKEN_PREFIX = "sgp_"  # noqa: S105 (a public prefix, not a secret)


def hash_token(raw: str) -> str:
    # Tokens carry 256 bits of randomness, so a fast hash is enough (no password stretching needed).
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(
        max_length=16, help_text="First characters, to recognise a token without storing it."
    )
    token_hash = models.CharField(max_length=64, unique=True)
    scopes = models.JSONField(default=list)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @staticmethod
    def generate_raw() -> str:
        return TOKEN_PREFIX + secrets.token_urlsafe(32)

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def has_scope(self, scope: str) -> bool:
        return self.is_active and scope in self.scopes


class Heartbeat(models.Model):
    """The last time a background component proved it runs (``worker``: a task went through beat,
    the broker and a worker, and wrote here). /healthz reads it to tell a stalled worker apart."""

    name = models.CharField(max_length=50, unique=True)
    seen_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} @ {self.seen_at:%Y-%m-%d %H:%M:%S}"
