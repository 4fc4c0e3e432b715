"""Models of the policy concern: versioned policy documents (draft → published → superseded)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone


class PolicyStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    PUBLISHED = "published", "Published"
    SUPERSEDED = "superseded", "Superseded"


class PolicyVersion(models.Model):
    """One version of the organisation's policy. Published and superseded versions never change.

    ``document`` is the canonical JSON of ``governance.engine.policydoc.PolicyDocument``;
    ``document_sha256`` hashes it, so the ledger can name exactly what was published.
    """

    number = models.PositiveIntegerField(unique=True)
    status = models.CharField(max_length=16, choices=PolicyStatus.choices, default=PolicyStatus.DRAFT)
    document = models.JSONField(default=dict)
    document_sha256 = models.CharField(max_length=64)
    note = models.CharField(max_length=300, blank=True, help_text="What changed and why")
    based_on = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(default=timezone.now)
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    published_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-number"]
        constraints = [
            models.UniqueConstraint(fields=["status"], condition=Q(status="draft"), name="policy_one_draft"),
            models.UniqueConstraint(
                fields=["status"], condition=Q(status="published"), name="policy_one_published"
            ),
        ]

    def __str__(self) -> str:
        return f"policy v{self.number} ({self.status})"
