"""Query forms of the catalog pages: every input validated, a precise 400 otherwise."""

from __future__ import annotations

from typing import Any

from django import forms

from governance.engine.listing import LISTING_PROFILES
from governance.engine.resolve import AGENTS, DEFAULT_AGENT, Status
from governance.engine.types import Severity, SourceKind
from portal.accounts.models import Project, Team

AGENT_CHOICES = [(a.key, a.label) for a in AGENTS.values()]
WINDOW_CHOICES = [("200000", "200K tokens"), ("1000000", "1M tokens"), ("custom", "Custom")]
SORT_CHOICES = [
    ("name", "Name"),
    ("source", "Source"),
    ("trust", "Trust"),
    ("status", "Status"),
    ("findings", "Most findings"),
    ("size", "Largest body"),
]


class AgentProjectForm(forms.Form):
    agent = forms.ChoiceField(choices=AGENT_CHOICES, required=False, initial=DEFAULT_AGENT)
    project = forms.ModelChoiceField(
        queryset=Project.objects.order_by("name"),
        required=False,
        to_field_name="slug",
        empty_label="All projects",
    )

    def clean_agent(self) -> str:
        return self.cleaned_data.get("agent") or DEFAULT_AGENT


class CatalogFilterForm(AgentProjectForm):
    q = forms.CharField(required=False, max_length=200, label="Search")
    source = forms.ChoiceField(
        choices=[("", "Any source")] + [(k.value, k.value) for k in SourceKind], required=False
    )
    status = forms.ChoiceField(
        choices=[("", "Any status")] + [(s.value, s.value) for s in Status], required=False
    )
    severity = forms.ChoiceField(
        choices=[("", "Any findings")] + [(s.value, f"{s.value} or worse") for s in Severity], required=False
    )
    team = forms.ModelChoiceField(
        queryset=Team.objects.order_by("name"), required=False, to_field_name="slug", empty_label="Any team"
    )
    sort = forms.ChoiceField(choices=SORT_CHOICES, required=False)
    page = forms.IntegerField(min_value=1, max_value=1_000_000, required=False)


class ListingForm(AgentProjectForm):
    window = forms.ChoiceField(choices=WINDOW_CHOICES, required=False, initial="200000")
    custom_tokens = forms.IntegerField(min_value=1_000, max_value=100_000_000, required=False)
    profile = forms.ChoiceField(
        choices=[(p.key, p.label) for p in LISTING_PROFILES.values()], required=False, initial="classic"
    )
    fraction = forms.FloatField(
        min_value=0.001, max_value=0.5, required=False, help_text="Share of the window (0.01 = 1%)"
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        window = data.get("window") or "200000"
        if window == "custom":
            if not data.get("custom_tokens"):
                self.add_error("custom_tokens", "Give the context window in tokens for a custom window.")
            else:
                data["window_tokens"] = data["custom_tokens"]
        else:
            data["window_tokens"] = int(window)
        data["window"] = window
        data["profile"] = data.get("profile") or "classic"
        return data


class FleetForm(forms.Form):
    agent = forms.ChoiceField(choices=AGENT_CHOICES, required=False)
    window = forms.ChoiceField(choices=WINDOW_CHOICES[:2], required=False)
    profile = forms.ChoiceField(choices=[(p.key, p.label) for p in LISTING_PROFILES.values()], required=False)


class ConditionalForm(AgentProjectForm):
    paths = forms.CharField(
        required=False,
        max_length=20_000,
        widget=forms.Textarea(attrs={"rows": 5, "placeholder": "src/app/page.tsx\ndb/migrations/0001.sql"}),
        help_text="One path per line, relative to the repository root.",
    )

    def touched(self) -> list[str]:
        raw = self.cleaned_data.get("paths") or ""
        return [line.strip() for line in raw.splitlines() if line.strip()][:500]


class DiffForm(forms.Form):
    a = forms.IntegerField(min_value=1, max_value=2**31 - 1, required=False)
    b = forms.IntegerField(min_value=1, max_value=2**31 - 1, required=False)


class CollectionForm(forms.Form):
    slug = forms.SlugField(max_length=100, help_text="lowercase, digits, hyphens: used in URLs and exports")
    name = forms.CharField(max_length=200)
    description = forms.CharField(required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2}))
