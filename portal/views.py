"""Site-level pages: the home dashboard, health, and the user's API tokens."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from portal.accounts.models import ApiToken, Scope
from portal.accounts.services import InvalidScopes, token_create
from portal.accounts.services import token_revoke as revoke_token


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html", {})


def _broker_state() -> str:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return "eager"
    from portal.celery import app

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:  # any transport error means the broker is unusable
        return f"down: {type(exc).__name__}"
    return "ok"


def healthz(request: HttpRequest) -> JsonResponse:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        database = "ok"
    except Exception as exc:  # report, never raise: this page exists to say what is broken
        database = f"down: {type(exc).__name__}"
    broker = _broker_state()
    healthy = database == "ok" and broker in {"ok", "eager"}
    return JsonResponse(
        {"status": "ok" if healthy else "degraded", "database": database, "broker": broker},
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
