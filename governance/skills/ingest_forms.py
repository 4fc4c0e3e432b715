"""Forms of the ingest pages: register a source, upload an archive."""

from __future__ import annotations

from django import forms

from governance.skills.services import INGESTIBLE_KINDS
from portal.accounts.models import Project

KIND_CHOICES = [(k, k) for k in sorted(INGESTIBLE_KINDS)]
UPLOAD_KIND_CHOICES = [(k, k) for k in ("project", "user", "plugin", "managed")]


class SourceForm(forms.Form):
    kind = forms.ChoiceField(choices=KIND_CHOICES, initial="project")
    location = forms.CharField(
        max_length=1000,
        help_text="A directory path on the portal's host, or a git URL (https:// or ssh).",
        widget=forms.TextInput(attrs={"placeholder": "https://github.com/acme/payments-api"}),
    )
    ref = forms.CharField(max_length=200, required=False, help_text="Branch, tag or commit (git only).")
    project = forms.ModelChoiceField(queryset=Project.objects.order_by("name"), required=False)
    display_name = forms.CharField(max_length=300, required=False)
    ingest_now = forms.BooleanField(required=False, initial=True, label="Ingest now")


class UploadForm(forms.Form):
    file = forms.FileField(help_text="A .zip or .tar.gz of skill folders (each with a SKILL.md).")
    kind = forms.ChoiceField(choices=UPLOAD_KIND_CHOICES, initial="project")
    name = forms.CharField(
        max_length=100,
        required=False,
        help_text="Source name; re-uploading the same name makes new versions.",
    )
    project = forms.ModelChoiceField(queryset=Project.objects.order_by("name"), required=False)
