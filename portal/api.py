"""The HTTP API under /api/v1/: one NinjaAPI mounting a router per concern of ``governance``."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import NinjaAPI, Schema

from governance.policy.api import router as policy_router
from governance.reviews.api import router as reviews_router
from governance.skills.api import router as skills_router
from governance.telemetry.api import router as telemetry_router
from portal.accounts.services import user_role
from portal.auth import ScopedToken, SessionAuth

api = NinjaAPI(
    title="Skill governance portal API",
    version="1",
    urls_namespace="api",
    description=(
        "Send `Authorization: Bearer <token>` with a token created on the Tokens page or by "
        "`python manage.py create_token`. Each endpoint names the scope it needs."
    ),
)


class Me(Schema):
    username: str
    role: str
    scopes: list[str]


class AnyToken(ScopedToken):
    """Any active token, whatever its scopes (for ``/me``)."""

    def __init__(self) -> None:
        super().__init__(scope="")

    def authenticate(self, request: HttpRequest, token: str) -> object:
        from portal.accounts.models import ApiToken, hash_token

        found = ApiToken.objects.select_related("user").filter(token_hash=hash_token(token)).first()
        if found is None or not found.is_active or not found.user.is_active:
            return None
        request.user = found.user
        request.api_token = found  # type: ignore[attr-defined]
        return found.user


@api.get("/me", response=Me, auth=[AnyToken(), SessionAuth()], tags=["accounts"])
def me(request: HttpRequest) -> Me:
    """Who the caller is, and which scopes the token carries (all scopes for a browser session)."""
    token = getattr(request, "api_token", None)
    role = user_role(request.user)
    scopes = list(token.scopes) if token is not None else ["session"]
    return Me(username=request.user.get_username(), role=role.value if role else "", scopes=scopes)


api.add_router("/skills", skills_router)
api.add_router("/policy", policy_router)
api.add_router("/telemetry", telemetry_router)
api.add_router("/reviews", reviews_router)
