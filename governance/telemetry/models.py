"""Models of the telemetry concern: stored events (partitioned by time on PostgreSQL) and rollups.

``Event`` rows hold no personal data: skill names the catalog does not know, sessions and users are
keyed pseudonyms; free text is never stored. On PostgreSQL the table is partitioned by day on
``occurred_at`` (see migration 0001); the primary key there is ``(id, occurred_at)``, which Django
does not need to know about. Dashboards read ``SkillDaily`` and ``FleetDaily`` only.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class Channel(models.TextChoices):
    API = "api", "Native API"
    OTLP = "otlp", "OpenTelemetry"


class Event(models.Model):
    id = models.BigAutoField(primary_key=True)
    event_id = models.UUIDField()
    occurred_at = models.DateTimeField()
    received_at = models.DateTimeField(default=timezone.now)
    type = models.CharField(max_length=24)
    channel = models.CharField(max_length=8, choices=Channel.choices, default=Channel.API)
    agent = models.CharField(max_length=32)
    agent_version = models.CharField(max_length=64, blank=True)
    session = models.CharField(max_length=24, blank=True, help_text="keyed pseudonym")
    actor = models.CharField(max_length=24, blank=True, help_text="keyed pseudonym of the user")
    team_id = models.IntegerField(null=True, blank=True)
    project_id = models.IntegerField(null=True, blank=True)
    skill_id = models.IntegerField(null=True, blank=True, help_text="catalog Skill, when known")
    skill_key = models.CharField(
        max_length=210, blank=True, help_text="catalog name, anon-<pseudonym>, or an anonymous bucket"
    )
    skill_source = models.CharField(max_length=16, blank=True)
    trigger = models.CharField(max_length=16, blank=True)
    outcome = models.CharField(max_length=16, blank=True)
    tokens = models.BigIntegerField(default=0)
    tokens_kept = models.BigIntegerField(default=0)
    tokens_cut = models.BigIntegerField(default=0)
    cost_usd = models.FloatField(default=0.0)
    data = models.JSONField(default=dict)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["event_id", "occurred_at"], name="telemetry_event_id_unique")
        ]

    def __str__(self) -> str:
        return f"{self.type} {self.skill_key} @ {self.occurred_at:%Y-%m-%d %H:%M}"


class PendingRollup(models.Model):
    """Days whose rollups are out of date; the database, not the broker, remembers pending work.

    Ingest bumps ``seq`` in the same transaction as the events; a rollup removes the row only if
    ``seq`` has not moved since it started, so nothing that arrives meanwhile is forgotten.
    """

    day = models.DateField(primary_key=True)
    seq = models.BigIntegerField(default=1)
    requested_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"pending rollup {self.day} (seq {self.seq})"


class SkillCounters(models.Model):
    """What happened to a skill in one day (shared by both skill rollups)."""

    events = models.IntegerField(default=0)
    sessions = models.IntegerField(default=0)
    loads = models.IntegerField(default=0)
    inv_user = models.IntegerField(default=0)
    inv_model = models.IntegerField(default=0)
    inv_nested = models.IntegerField(default=0)
    already_loaded = models.IntegerField(default=0)
    uses = models.IntegerField(
        default=0,
        help_text="invocations counted for frecency: one per user and skill within 60 s (DOMAIN §8)",
    )
    ghosts = models.IntegerField(
        default=0, help_text="re-invocations refused as already loaded after an eviction"
    )
    cut_truncated = models.IntegerField(default=0)
    cut_name_only = models.IntegerField(default=0)
    cut_dropped = models.IntegerField(default=0)
    degraded_sessions = models.IntegerField(default=0)
    reinjections = models.IntegerField(default=0)
    cut_tails = models.IntegerField(default=0)
    tokens_cut = models.BigIntegerField(default=0)
    evictions = models.IntegerField(default=0)
    unloads = models.IntegerField(default=0)
    denials = models.IntegerField(default=0)
    hooks = models.IntegerField(default=0)
    tokens = models.BigIntegerField(default=0)
    cost_usd = models.FloatField(default=0.0)
    metric_tokens = models.BigIntegerField(default=0)
    metric_cost_usd = models.FloatField(default=0.0)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def invocations(self) -> int:
        return self.inv_user + self.inv_model + self.inv_nested


class SkillDaily(SkillCounters):
    """Per day, skill and dimension (team, project, agent, version): for filtered views."""

    day = models.DateField()
    skill_key = models.CharField(max_length=210)
    skill_id = models.IntegerField(null=True, blank=True)
    skill_source = models.CharField(max_length=16, blank=True)
    team_id = models.IntegerField(null=True, blank=True)
    project_id = models.IntegerField(null=True, blank=True)
    agent = models.CharField(max_length=32)
    agent_version = models.CharField(max_length=64, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["day"], name="skilldaily_day"),
            models.Index(fields=["skill_key", "day"], name="skilldaily_skill_day"),
            models.Index(fields=["skill_id", "day"], name="skilldaily_catalog_day"),
        ]

    def __str__(self) -> str:
        return f"{self.skill_key} {self.day}"


class SkillDay(SkillCounters):
    """Per day and skill, all dimensions summed: the unfiltered dashboards read only this.

    A session runs one agent version for one team and project, so summing session counts over
    those dimensions counts each session once.
    """

    day = models.DateField()
    skill_key = models.CharField(max_length=210)
    skill_id = models.IntegerField(null=True, blank=True)
    skill_source = models.CharField(max_length=16, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["day", "skill_key"], name="skillday_day_skill"),
            models.Index(fields=["skill_key", "day"], name="skillday_skill_day"),
            models.Index(fields=["skill_id", "day"], name="skillday_catalog_day"),
        ]

    def __str__(self) -> str:
        return f"{self.skill_key} {self.day}"


class FleetDaily(models.Model):
    """Per day and dimension: sessions, compactions and degraded listings (session-level events)."""

    day = models.DateField()
    team_id = models.IntegerField(null=True, blank=True)
    project_id = models.IntegerField(null=True, blank=True)
    agent = models.CharField(max_length=32)
    agent_version = models.CharField(max_length=64, blank=True)
    events = models.IntegerField(default=0)
    sessions = models.IntegerField(default=0)
    compactions = models.IntegerField(default=0)
    pre_tokens = models.BigIntegerField(default=0)
    post_tokens = models.BigIntegerField(default=0)
    degraded_listings = models.IntegerField(default=0)
    degraded_sessions = models.IntegerField(default=0)
    name_only_listings = models.IntegerField(default=0)
    plugins_loaded = models.IntegerField(default=0)
    tokens = models.BigIntegerField(default=0)
    cost_usd = models.FloatField(default=0.0)
    metric_tokens = models.BigIntegerField(default=0)
    metric_cost_usd = models.FloatField(default=0.0)

    class Meta:
        indexes = [models.Index(fields=["day"], name="fleetdaily_day")]

    def __str__(self) -> str:
        return f"fleet {self.day} {self.agent} {self.agent_version}"
