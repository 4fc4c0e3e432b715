"""Every page needs a login; machine endpoints authenticate themselves (tokens) instead."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse

# Paths that do their own authentication (API tokens) or must be reachable without a session.
PUBLIC_PREFIXES = ("/api/", "/otlp/", "/registry/", "/healthz", "/static/", "/accounts/login/")


class LoginRequiredMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.user.is_authenticated and not request.path.startswith(PUBLIC_PREFIXES):
            return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
        return self.get_response(request)
