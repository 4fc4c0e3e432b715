"""Self-evolution review: proposals from agents, decisions by team leads, deliveries to git.

A proposal is a state machine whose proposing side cannot write: only a reviewer's decision
creates a version, and only a delivery puts that version into the project's repository.

    pending ──approve──▶ approved ──delivered──▶ applied
       │                    │  ▲
       │                    ▼  └──retry── failed
       ├──dismiss──▶ dismissed
       └──base moved──▶ stale
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class ProposalState(models.TextChoices):
    PENDING = "pending", "Pending"
    APPROVED = "approved", "Approved, delivering"
    DISMISSED = "dismissed", "Dismissed"
    STALE = "stale", "Stale"
    APPLIED = "applied", "Applied"
    FAILED = "failed", "Delivery failed"


OPEN_STATES = (ProposalState.PENDING,)


class Proposal(models.Model):
    skill = models.ForeignKey("skills.Skill", on_delete=models.CASCADE, related_name="proposals")
    # Routing: the project (repository + path) that owns the skill, and so its team's leads.
    project = models.ForeignKey(
        "accounts.Project", null=True, on_delete=models.SET_NULL, related_name="proposals"
    )
    team = models.ForeignKey("accounts.Team", null=True, on_delete=models.SET_NULL, related_name="proposals")
    base_version = models.ForeignKey("skills.SkillVersion", on_delete=models.PROTECT, related_name="+")
    base_sha256 = models.CharField(max_length=64, help_text="SKILL.md the agent saw")
    proposed_text = models.TextField(help_text="The whole proposed SKILL.md")
    proposed_sha256 = models.CharField(max_length=64)
    updates = models.JSONField(default=list, help_text="[{section, change, reason}]")
    evidence = models.JSONField(default=dict, help_text="session, prompt, agent and version")
    proposer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    proposer_label = models.CharField(max_length=200, help_text="Who proposed, as the agent reported it")
    state = models.CharField(max_length=16, choices=ProposalState.choices, default=ProposalState.PENDING)
    # Flags set on arrival (a proposal can also turn stale later, when another change lands first).
    flag_stale = models.BooleanField(default=False, help_text="made against a version that was not current")
    flag_bloat = models.BooleanField(default=False, help_text="adds only what the skill already says")
    duplicate_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="duplicates"
    )
    change_signature = models.CharField(max_length=64, db_index=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    # The decision.
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_note = models.TextField(blank=True)
    edited = models.BooleanField(default=False, help_text="the reviewer edited the text before approving")
    applied_text = models.TextField(blank=True, help_text="The SKILL.md as approved (edited or not)")
    result_version = models.ForeignKey(
        "skills.SkillVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    rolled_back_at = models.DateTimeField(null=True, blank=True)
    rolled_back_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["state", "created_at"]), models.Index(fields=["skill", "state"])]

    def __str__(self) -> str:
        return f"proposal #{self.pk} on {self.skill.name} ({self.state})"

    @property
    def branch_name(self) -> str:
        return f"skill-review/proposal-{self.pk}"

    @property
    def flags(self) -> list[str]:
        names = []
        if self.flag_stale:
            names.append("stale")
        if self.flag_bloat:
            names.append("bloat")
        if self.duplicate_of_id:
            names.append("duplicate")
        return names


class ProposalComment(models.Model):
    proposal = models.ForeignKey(Proposal, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    body = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "id"]


class DeliveryKind(models.TextChoices):
    APPLY = "apply", "Approved change"
    ROLLBACK = "rollback", "Rollback"


class DeliveryMode(models.TextChoices):
    PUSH = "push", "Branch pushed"
    PATCH = "patch", "Patch to download"


class DeliveryState(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed"


class Delivery(models.Model):
    """Putting one new version into the project's repository (or a patch, when read-only).

    The database is the source of truth: a delivery stays pending until a worker delivers it,
    and the sweeper re-enqueues pending ones whose message was lost.
    """

    proposal = models.ForeignKey(Proposal, on_delete=models.CASCADE, related_name="deliveries")
    kind = models.CharField(max_length=16, choices=DeliveryKind.choices)
    mode = models.CharField(max_length=16, choices=DeliveryMode.choices)
    version = models.ForeignKey("skills.SkillVersion", on_delete=models.PROTECT, related_name="+")
    previous_version = models.ForeignKey("skills.SkillVersion", on_delete=models.PROTECT, related_name="+")
    state = models.CharField(max_length=16, choices=DeliveryState.choices, default=DeliveryState.PENDING)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    branch = models.CharField(max_length=200, blank=True)
    commit_sha = models.CharField(max_length=64, blank=True)
    patch = models.TextField(blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["state", "created_at"])]

    def __str__(self) -> str:
        return f"{self.kind} delivery #{self.pk} of proposal #{self.proposal_id} ({self.state})"
