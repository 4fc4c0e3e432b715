from __future__ import annotations

from django import forms


class LedgerFilterForm(forms.Form):
    actor = forms.CharField(required=False, max_length=200)
    action = forms.CharField(required=False, max_length=64)
    target_type = forms.CharField(required=False, max_length=64)
    target = forms.CharField(required=False, max_length=300)
    since = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
