"""Site-level pages: the home dashboard, health, and the user's API tokens."""

from __future__ import annotations

from typing import cast

from django import forms
from django.contrib import messages
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from portal.accounts.models import ApiToken, Scope
from portal.accounts.services import InvalidScopes, token_create
from portal.accounts.services import token_revoke as revoke_token
from portal.dashboard import dashboard_cards, generated_at
from portal.health import health_check


def home(request: HttpRequest) -> HttpResponse:
    """The landing page: one card per concern (see portal/dashboard.py for how to add one)."""
    return render(
        request,
        "home.html",
        {"cards": dashboard_cards(cast(User, request.user)), "generated_at": generated_at()},
    )


def healthz(request: HttpRequest) -> JsonResponse:
    """200 when the database and broker answer, else 503. ``?deep=1`` also requires a live worker
    (a heartbeat younger than three beats), for monitoring that should page when workers stall."""
    health = health_check()
    deep = request.GET.get("deep", "") in {"1", "true", "yes"}
    healthy = health.deep_healthy if deep else health.healthy
    return JsonResponse(
        {
            "status": "ok" if healthy else "degraded",
            "database": health.database,
            "broker": health.broker,
            "worker": health.worker,
        },
        status=200 if healthy else 503,
    )


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100)
    scopes = forms.MultipleChoiceField(choices=Scope.choices, widget=forms.CheckboxSelectMultiple)


@require_http_methods(["GET", "POST"])
def tokens(request: HttpRequest) -> HttpResponse:
    new_token = None
    form = TokenForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            _, new_token = token_create(
                user=request.user,  # type: ignore[arg-type]
                name=form.cleaned_data["name"],
                scopes=form.cleaned_data["scopes"],
            )
        except InvalidScopes as exc:
            form.add_error("scopes", str(exc))
        else:
            form = TokenForm()
    user_tokens = ApiToken.objects.filter(user=request.user)  # type: ignore[misc]
    status = 400 if request.method == "POST" and form.errors else 200
    return render(
        request, "tokens.html", {"form": form, "tokens": user_tokens, "new_token": new_token}, status=status
    )


@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    token = get_object_or_404(ApiToken, pk=token_id, user=request.user)
    revoke_token(token=token)
    messages.success(request, f"Token {token.name} revoked.")
    return redirect("tokens")
