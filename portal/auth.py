"""Authentication for the API: a scoped bearer token, or the browser session (with CSRF)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja.security import APIKeyCookie, HttpBearer

from portal.accounts.services import token_authenticate


class ScopedToken(HttpBearer):
    """A bearer token carrying ``scope``; ``None`` accepts any active token (``/api/v1/me``)."""

    def __init__(self, scope: str | None) -> None:
        super().__init__()
        self.scope = scope

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        api_token = token_authenticate(raw=token, scope=self.scope)
        if api_token is None:
            return None
        request.user = api_token.user
        request.api_token = api_token  # type: ignore[attr-defined]
        return api_token.user


class SessionAuth(APIKeyCookie):
    """Django session auth; ninja checks CSRF for cookie auth on unsafe methods."""

    param_name = "sessionid"

    def __init__(self) -> None:
        super().__init__(csrf=True)

    def authenticate(self, request: HttpRequest, key: str | None) -> Any:
        if request.user.is_authenticated:
            return request.user
        return None


def token_or_session(scope: str) -> list[Any]:
    """Auth for an endpoint that a token with ``scope`` or a logged-in user may call."""
    return [ScopedToken(scope), SessionAuth()]


def token_only(scope: str) -> list[Any]:
    return [ScopedToken(scope)]
