"""Pages of the policy concern: overview and downloads, editor, impact preview, history."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from governance.engine.managed_settings import portal_only
from governance.engine.policydoc import (
    Change,
    canonical_json,
    diff_documents,
    document_sha256,
    empty_document,
)
from governance.policy import selectors
from governance.policy.api import portal_base_url
from governance.policy.forms import (
    OverrideForm,
    PluginForm,
    PublishForm,
    RawForm,
    SettingsForm,
    SkillRuleForm,
    SourceRuleForm,
)
from governance.policy.models import PolicyVersion
from governance.policy.services import (
    PolicyInvalid,
    PolicyStateError,
    policy_draft_discard,
    policy_draft_update,
    policy_publish,
)
from portal.accounts.services import user_is_admin


def _require_admin(request: HttpRequest) -> None:
    if not user_is_admin(request.user):
        raise PermissionDenied("only admins edit the policy")


def policy(request: HttpRequest) -> HttpResponse:
    """The published policy, what Claude Code enforces from it, and the downloads."""
    published = selectors.policy_published()
    doc = selectors.policy_document(published)
    base = portal_base_url(request)
    compiled = selectors.managed_settings_file(base_url=base, version=published)
    dropins = selectors.managed_settings_dropins_zip(base_url=base, version=published)
    counts = selectors.catalog_decision_counts(published)
    return render(
        request,
        "policy/overview.html",
        {
            "published": published,
            "draft": selectors.policy_draft(),
            "document": doc.as_dict(),
            "compiled": compiled,
            "compiled_text": compiled.content.decode(),
            "dropins": dropins,
            "portal_only": portal_only(doc),
            "decision_counts": list(counts.items()),
            "skills_checked": sum(counts.values()),
            "can_edit": user_is_admin(request.user),
            "refusals": selectors.source_refusals(),
        },
    )


# --------------------------------------------------------------------------------------------
# Editor

SETTINGS_FIELDS = {
    "channel_lock": "channel_lock",
    "hooks.managed_only": "managed_hooks_only",
    "hooks.trusted_plugins": "trusted_hook_plugins",
    "sensitive.model": "model_is_sensitive",
    "sensitive.context_fork": "fork_is_sensitive",
    "disable_skill_shell_execution": "disable_skill_shell_execution",
    "managed_permission_rules_only": "managed_permission_rules_only",
    "telemetry.enabled": "telemetry_enabled",
    "telemetry.protocol": "telemetry_protocol",
}


def _field_for(action: str, path: str, document: dict[str, Any]) -> str | None:
    """The form field an error path belongs to, for the form of ``action``."""
    if action == "skill_rule":
        prefix = f"skill_rules[{len(document.get('skill_rules', [])) - 1}]."
        return path[len(prefix) :] if path.startswith(prefix) else None
    if action == "source_rule":
        prefix = f"source_rules[{len(document.get('source_rules', [])) - 1}]."
        return path[len(prefix) :] if path.startswith(prefix) else None
    if action == "settings":
        for key, field in SETTINGS_FIELDS.items():
            if path == key or path.startswith(key + "["):
                return field
        return None
    if action == "plugin":
        return "plugin_id" if path.startswith("enabled_plugins.") else None
    if action == "override":
        return "name" if path.startswith("skill_overrides.") else None
    if action == "raw":
        return "document"
    return None


def _new_document(action: str, form: forms.Form, document: dict[str, Any]) -> dict[str, Any]:
    new = json.loads(json.dumps(document))
    if isinstance(form, SkillRuleForm):
        new.setdefault("skill_rules", []).append(form.rule())
    elif isinstance(form, SourceRuleForm):
        new.setdefault("source_rules", []).append(form.rule())
    elif isinstance(form, SettingsForm):
        new = form.apply(new)
    elif isinstance(form, PluginForm):
        new.setdefault("enabled_plugins", {})[form.cleaned_data["plugin_id"].strip()] = form.cleaned_data[
            "enabled"
        ]
    elif isinstance(form, OverrideForm):
        new.setdefault("skill_overrides", {})[form.cleaned_data["name"].strip()] = form.cleaned_data[
            "visibility"
        ]
    elif isinstance(form, RawForm):
        new = form.cleaned_data["document"]
    return new


EDIT_FORMS: dict[str, type[forms.Form]] = {
    "skill_rule": SkillRuleForm,
    "source_rule": SourceRuleForm,
    "settings": SettingsForm,
    "plugin": PluginForm,
    "override": OverrideForm,
    "raw": RawForm,
}


def _delete(document: dict[str, Any], section: str, key: str) -> dict[str, Any]:
    new = json.loads(json.dumps(document))
    if section in {"skill_rules", "source_rules"}:
        items = new.get(section, [])
        try:
            index = int(key)
        except ValueError as exc:
            raise Http404("no such rule") from exc
        if not 0 <= index < len(items):
            raise Http404("no such rule")
        items.pop(index)
    elif section in {"enabled_plugins", "skill_overrides"}:
        if key not in new.get(section, {}):
            raise Http404("no such entry")
        del new[section][key]
    else:
        raise Http404("no such section")
    return new


@require_http_methods(["GET", "POST"])
def policy_edit(request: HttpRequest) -> HttpResponse:
    """The draft editor: a form per rule kind, the raw JSON alongside; admins only."""
    _require_admin(request)
    draft = selectors.policy_draft()
    published = selectors.policy_published()
    base_version = draft or published
    document: dict[str, Any] = base_version.document if base_version else empty_document()
    bound: dict[str, forms.Form] = {}
    status = 200
    if request.method == "POST":
        action = request.POST.get("action", "")
        base_sha256 = request.POST.get("base_sha256", "")
        if action == "delete":
            new = _delete(document, request.POST.get("section", ""), request.POST.get("key", ""))
            try:
                policy_draft_update(actor=request.user, document=new, base_sha256=base_sha256)
            except (PolicyInvalid, PolicyStateError) as exc:
                messages.error(request, f"Not removed: {exc}")
            else:
                messages.success(request, "Removed from the draft.")
            return redirect("policy-edit")
        if action == "discard":
            try:
                policy_draft_discard(actor=request.user)
            except PolicyStateError as exc:
                messages.error(request, str(exc))
            else:
                messages.success(request, "Draft discarded.")
            return redirect("policy-edit")
        form_class = EDIT_FORMS.get(action)
        if form_class is None:
            return HttpResponse(f"unknown action {action!r}", status=400, content_type="text/plain")
        form = form_class(request.POST, prefix=action)
        bound[action] = form
        if form.is_valid():
            new = _new_document(action, form, document)
            note = form.cleaned_data.get("note", "") if action == "raw" else ""
            try:
                policy_draft_update(actor=request.user, document=new, note=note, base_sha256=base_sha256)
            except PolicyStateError as exc:
                form.add_error(None, str(exc))
            except PolicyInvalid as exc:
                for path, problems in exc.errors.items():
                    field = _field_for(action, path, new)
                    for problem in problems:
                        if field is not None and field in form.fields:
                            form.add_error(field, problem if action != "raw" else f"{path}: {problem}")
                        else:
                            form.add_error(None, f"{path or 'policy'}: {problem}")
            else:
                messages.success(request, "Draft saved. Check the impact before publishing.")
                return redirect("policy-edit")
        status = 400
    initial_settings = SettingsForm.initial_from(document)
    context_forms = {
        "skill_rule": bound.get("skill_rule") or SkillRuleForm(prefix="skill_rule"),
        "source_rule": bound.get("source_rule") or SourceRuleForm(prefix="source_rule"),
        "settings": bound.get("settings") or SettingsForm(prefix="settings", initial=initial_settings),
        "plugin": bound.get("plugin") or PluginForm(prefix="plugin"),
        "override": bound.get("override") or OverrideForm(prefix="override"),
        "raw": bound.get("raw")
        or RawForm(
            prefix="raw", initial={"document": canonical_json(document), "note": draft.note if draft else ""}
        ),
    }
    changes: list[Change] = []
    if draft is not None:
        changes, _ = diff_documents(published.document if published else empty_document(), draft.document)
    return render(
        request,
        "policy/edit.html",
        {
            "draft": draft,
            "published": published,
            "document": document,
            "document_json": canonical_json(document),
            "base_sha256": document_sha256(document),
            "forms": context_forms,
            "changes": changes,
        },
        status=status,
    )


def policy_impact(request: HttpRequest) -> HttpResponse:
    """What publishing the draft changes in the stored catalog; the publish button lives here."""
    _require_admin(request)
    draft = selectors.policy_draft()
    published = selectors.policy_published()
    impact = None
    changes: list[Any] = []
    diff_text = ""
    if draft is not None:
        impact = selectors.policy_impact(
            before=selectors.policy_document(published), after=selectors.policy_document(draft)
        )
        changes, diff_text = diff_documents(
            published.document if published else empty_document(), draft.document
        )
    return render(
        request,
        "policy/impact.html",
        {
            "draft": draft,
            "published": published,
            "impact": impact,
            "changes": changes,
            "diff_text": diff_text,
            "form": PublishForm(initial={"note": draft.note if draft else ""}),
        },
    )


@require_POST
def policy_publish_view(request: HttpRequest) -> HttpResponse:
    _require_admin(request)
    form = PublishForm(request.POST)
    note = form.cleaned_data["note"] if form.is_valid() else ""
    try:
        version = policy_publish(actor=request.user, note=note)
    except (PolicyStateError, PolicyInvalid) as exc:
        messages.error(request, f"Not published: {exc}")
        return redirect("policy-impact")
    messages.success(request, f"Policy v{version.number} published.")
    return redirect("policy")


def policy_history(request: HttpRequest) -> HttpResponse:
    versions = list(selectors.policy_versions())
    return render(request, "policy/history.html", {"versions": versions})


def policy_version(request: HttpRequest, number: int) -> HttpResponse:
    """One version, and its diff against another (``?against=N``, default: the one before)."""
    version = get_object_or_404(PolicyVersion, number=number)
    against_number = request.GET.get("against")
    against: PolicyVersion | None
    if against_number:
        if not (against_number.isascii() and against_number.isdigit() and len(against_number) <= 9):
            return HttpResponse("against must be a version number", status=400)
        against = get_object_or_404(PolicyVersion, number=int(against_number))
    else:
        against = PolicyVersion.objects.filter(number__lt=number).order_by("-number").first()
    changes, diff_text = diff_documents(against.document if against else empty_document(), version.document)
    return render(
        request,
        "policy/version.html",
        {
            "version": version,
            "against": against,
            "changes": changes,
            "diff_text": diff_text,
            "document_json": canonical_json(version.document),
            "others": selectors.policy_versions().exclude(pk=version.pk),
        },
    )
