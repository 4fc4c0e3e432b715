"""Forms of the policy editor: one per rule kind, plus the raw JSON form."""

from __future__ import annotations

import json
from typing import Any

from django import forms

from governance.engine import jsonsafe
from governance.engine.permissions import LOCK_SURFACES, Effect
from governance.engine.policydoc import SKILL_OVERRIDE_VALUES, TELEMETRY_PROTOCOLS
from governance.engine.sources import SourceRuleKind
from governance.engine.types import SourceKind
from portal.accounts.models import Project, Team


def _blank(choices: list[tuple[str, str]], label: str = "any") -> list[tuple[str, str]]:
    return [("", label), *choices]


class SkillRuleForm(forms.Form):
    effect = forms.ChoiceField(choices=[(e.value, e.value) for e in Effect])
    name = forms.CharField(
        required=False, max_length=300, help_text="Exact name, plugin:name, or a glob such as deploy-*"
    )
    source_kind = forms.ChoiceField(required=False, choices=_blank([(k.value, k.value) for k in SourceKind]))
    source = forms.CharField(
        required=False, max_length=300, help_text="Repository or server, any spelling (or a glob)"
    )
    marketplace = forms.CharField(required=False, max_length=300)
    plugin = forms.CharField(required=False, max_length=300)
    team = forms.ChoiceField(required=False, choices=())
    project = forms.ChoiceField(required=False, choices=())
    note = forms.CharField(required=False, max_length=300, help_text="Why (shown in decisions)")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["team"].choices = _blank([(t.slug, t.name) for t in Team.objects.order_by("name")])  # type: ignore[attr-defined]
        self.fields["project"].choices = _blank(  # type: ignore[attr-defined]
            [(p.slug, p.name) for p in Project.objects.order_by("name")]
        )

    def rule(self) -> dict[str, str]:
        data = {k: v for k, v in self.cleaned_data.items() if v}
        return data


class SourceRuleForm(forms.Form):
    effect = forms.ChoiceField(choices=[("deny", "deny"), ("allow", "allow")])
    kind = forms.ChoiceField(choices=[(k.value, k.value) for k in SourceRuleKind])
    pattern = forms.CharField(
        max_length=500,
        help_text="repository: URL or owner/repo (any spelling, or a glob such as github.com/acme/*); "
        "marketplace: its repository URL or name; host: a regular expression such as .*\\.acme\\.internal",
    )
    note = forms.CharField(required=False, max_length=300)

    def rule(self) -> dict[str, str]:
        return {k: v for k, v in self.cleaned_data.items() if v}


class SettingsForm(forms.Form):
    channel_lock = forms.MultipleChoiceField(
        required=False,
        choices=[(s, s) for s in LOCK_SURFACES],
        widget=forms.CheckboxSelectMultiple,
        label="Plugins only for",
        help_text="strictPluginOnlyCustomization: these surfaces load only from plugins (and managed)",
    )
    managed_hooks_only = forms.BooleanField(
        required=False, label="Managed hooks only (allowManagedHooksOnly)"
    )
    trusted_hook_plugins = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Plugins trusted with hooks",
        help_text="One plugin or plugin@marketplace per line",
    )
    model_is_sensitive = forms.BooleanField(required=False, label="model needs approval")
    fork_is_sensitive = forms.BooleanField(required=False, label="context: fork needs approval")
    disable_skill_shell_execution = forms.BooleanField(
        required=False, label="Disable inline shell in skills (disableSkillShellExecution)"
    )
    managed_permission_rules_only = forms.BooleanField(
        required=False, label="Only managed permission rules apply (allowManagedPermissionRulesOnly)"
    )
    telemetry_enabled = forms.BooleanField(required=False, label="Send telemetry to this portal")
    telemetry_protocol = forms.ChoiceField(choices=[(p, p) for p in TELEMETRY_PROTOCOLS])

    @classmethod
    def initial_from(cls, document: dict[str, Any]) -> dict[str, Any]:
        return {
            "channel_lock": document.get("channel_lock", []),
            "managed_hooks_only": document.get("hooks", {}).get("managed_only", False),
            "trusted_hook_plugins": "\n".join(document.get("hooks", {}).get("trusted_plugins", [])),
            "model_is_sensitive": document.get("sensitive", {}).get("model", True),
            "fork_is_sensitive": document.get("sensitive", {}).get("context_fork", True),
            "disable_skill_shell_execution": document.get("disable_skill_shell_execution", False),
            "managed_permission_rules_only": document.get("managed_permission_rules_only", False),
            "telemetry_enabled": document.get("telemetry", {}).get("enabled", True),
            "telemetry_protocol": document.get("telemetry", {}).get("protocol", "http/json"),
        }

    def apply(self, document: dict[str, Any]) -> dict[str, Any]:
        data = self.cleaned_data
        plugins = [line.strip() for line in data["trusted_hook_plugins"].splitlines() if line.strip()]
        return {
            **document,
            "channel_lock": data["channel_lock"],
            "hooks": {"managed_only": data["managed_hooks_only"], "trusted_plugins": plugins},
            "sensitive": {"model": data["model_is_sensitive"], "context_fork": data["fork_is_sensitive"]},
            "disable_skill_shell_execution": data["disable_skill_shell_execution"],
            "managed_permission_rules_only": data["managed_permission_rules_only"],
            "telemetry": {"enabled": data["telemetry_enabled"], "protocol": data["telemetry_protocol"]},
        }


class PluginForm(forms.Form):
    plugin_id = forms.CharField(max_length=300, label="Plugin", help_text="plugin@marketplace")
    enabled = forms.BooleanField(required=False, initial=True)


class OverrideForm(forms.Form):
    name = forms.CharField(max_length=300, label="Skill name")
    visibility = forms.ChoiceField(choices=[(v, v) for v in SKILL_OVERRIDE_VALUES])


class RawForm(forms.Form):
    document = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 18, "spellcheck": "false"}), label="Policy JSON"
    )
    note = forms.CharField(required=False, max_length=300)

    def clean_document(self) -> Any:
        text = self.cleaned_data["document"]
        try:
            return jsonsafe.loads(text)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(
                f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
            ) from exc
        except ValueError as exc:  # too deep, a lone surrogate, an integer longer than Python converts
            raise forms.ValidationError(f"invalid JSON: {exc}") from exc


class PublishForm(forms.Form):
    note = forms.CharField(required=False, max_length=300, label="Publication note")
