"""A tiny API mounted only in tests (``settings.ROOT_URLCONF = "tests.portal.scoped_urls"``), so
scopes and CSRF are checked through the real auth classes whatever endpoints the concerns have built."""

from __future__ import annotations

from django.http import HttpRequest
from django.urls import include, path
from ninja import NinjaAPI

from portal.auth import token_only, token_or_session

scoped_api = NinjaAPI(urls_namespace="scoped-test")


@scoped_api.get("/read", auth=token_or_session("skills:read"))
def read(request: HttpRequest) -> dict[str, str]:
    return {"user": request.user.get_username()}


@scoped_api.post("/write", auth=token_or_session("skills:write"))
def write(request: HttpRequest) -> dict[str, str]:
    return {"user": request.user.get_username()}


@scoped_api.post("/machine", auth=token_only("telemetry:write"))
def machine(request: HttpRequest) -> dict[str, str]:
    return {"user": request.user.get_username()}


urlpatterns = [path("api/scoped-test/", scoped_api.urls), path("", include("portal.urls"))]
