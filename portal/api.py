"""The HTTP API under /api/v1/: one NinjaAPI mounting a router per concern of ``governance``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, JsonResponse
from ninja import NinjaAPI, Schema
from ninja.errors import HttpError
from ninja.parser import Parser

from governance.engine import jsonsafe
from governance.policy.api import router as policy_router
from governance.reviews.api import router as reviews_router
from governance.skills.api import router as skills_router
from governance.skills.catalog_api import router as catalog_router
from governance.telemetry.api import router as telemetry_router
from portal.accounts.services import token_authenticate, user_role
from portal.auth import ScopedToken, SessionAuth


def docs_for_known_callers(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The OpenAPI document and the interactive docs: a logged-in user, or any active token.

    They describe every endpoint of the organisation's control plane, so they are not public;
    browsers are sent to the login page, tools without a valid token get a 401.
    """

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.user.is_authenticated:
            return view(request, *args, **kwargs)
        header = request.headers.get("Authorization", "")
        scheme, _, raw = header.partition(" ")
        if scheme.lower() == "bearer" and token_authenticate(raw=raw.strip(), scope=None) is not None:
            return view(request, *args, **kwargs)
        if request.path.endswith(".json"):
            return JsonResponse({"detail": "Unauthorized"}, status=401)
        return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)

    return wrapper


class StrictJsonParser(Parser):
    """Request bodies through ``jsonsafe``: too deep, lone surrogates and non-UTF-8 are a 400."""

    def parse_body(self, request: HttpRequest) -> dict[str, Any]:
        return jsonsafe.loads(request.body)


api = NinjaAPI(
    title="Skill governance portal API",
    version="1",
    urls_namespace="api",
    docs_decorator=docs_for_known_callers,
    parser=StrictJsonParser(),
    description=(
        "Send `Authorization: Bearer <token>` with a token created on the Tokens page or by "
        "`python manage.py create_token`. Each endpoint names the scope it needs."
    ),
)


ERROR_CODES = {
    400: "bad-request",
    401: "unauthorized",
    403: "forbidden",
    404: "not-found",
    405: "method-not-allowed",
}


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    """Every error the framework raises (unparseable body, missing auth, ...) has the API's error
    shape ``{"code", "detail"}``, so it matches what endpoints document for their 4xx answers."""
    code = ERROR_CODES.get(exc.status_code, f"http-{exc.status_code}")
    return api.create_response(request, {"code": code, "detail": str(exc)}, status=exc.status_code)


class Me(Schema):
    username: str
    role: str
    scopes: list[str]


@api.get("/me", response=Me, auth=[ScopedToken(None), SessionAuth()], tags=["accounts"])
def me(request: HttpRequest) -> Me:
    """Who the caller is, and which scopes the token carries (all scopes for a browser session)."""
    token = getattr(request, "api_token", None)
    role = user_role(request.user)
    scopes = list(token.scopes) if token is not None else ["session"]
    return Me(username=request.user.get_username(), role=role.value if role else "", scopes=scopes)


api.add_router("/skills", skills_router)
api.add_router("/catalog", catalog_router)
api.add_router("/policy", policy_router)
api.add_router("/telemetry", telemetry_router)
api.add_router("/reviews", reviews_router)
