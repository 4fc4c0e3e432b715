"""Forms of the review pages."""

from __future__ import annotations

from django import forms

from governance.reviews.models import ProposalState
from governance.reviews.selectors import FLAGS


class QueueFilterForm(forms.Form):
    team = forms.CharField(required=False)
    skill = forms.CharField(required=False, max_length=200)
    state = forms.ChoiceField(
        required=False,
        choices=[("pending", "Pending"), ("all", "All states")]
        + [(s.value, s.label) for s in ProposalState if s != ProposalState.PENDING],
    )
    flag = forms.ChoiceField(
        required=False,
        choices=[("", "Any flags"), ("none", "No flag")] + [(f, f.capitalize()) for f in FLAGS],
    )
    min_age_days = forms.IntegerField(required=False, min_value=0, max_value=3650, label="Older than (days)")


class ApproveForm(forms.Form):
    edited_text = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 24}), strip=False)
    note = forms.CharField(required=False, max_length=5000)


class DismissForm(forms.Form):
    reason = forms.CharField(max_length=5000, widget=forms.Textarea(attrs={"rows": 2}))


class CommentForm(forms.Form):
    body = forms.CharField(max_length=10_000, widget=forms.Textarea(attrs={"rows": 3}), label="Comment")


class BulkApproveForm(forms.Form):
    ids = forms.TypedMultipleChoiceField(coerce=int, choices=[], required=True)
    confirm = forms.BooleanField(required=False)

    def __init__(self, *args: object, allowed_ids: list[int], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["ids"].choices = [(i, str(i)) for i in allowed_ids]  # type: ignore[attr-defined]
