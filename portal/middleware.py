"""Every page needs a login; machine endpoints authenticate themselves (tokens) instead."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, JsonResponse

# Paths that do their own authentication (API tokens) or must be reachable without a session.
PUBLIC_PREFIXES = ("/api/", "/otlp/", "/registry/", "/healthz", "/static/", "/accounts/login/")


class LoginRequiredMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.user.is_authenticated and not request.path.startswith(PUBLIC_PREFIXES):
            return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
        return self.get_response(request)


class RequestSizeLimitMiddleware:
    """Refuse a body larger than the largest the portal accepts before anything reads it.

    Django bounds non-file bodies (DATA_UPLOAD_MAX_MEMORY_SIZE) but streams multipart files to a
    temporary file of any size; the views check the archive's size only afterwards. The declared
    Content-Length is what the WSGI server lets Django read, so checking it bounds every body.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        # The largest archive plus room for the multipart envelope and form fields.
        self.limit = max(settings.DATA_UPLOAD_MAX_MEMORY_SIZE, settings.SKILL_UPLOAD_MAX_BYTES) + 1024 * 1024

    def __call__(self, request: HttpRequest) -> HttpResponse:
        declared = request.META.get("CONTENT_LENGTH") or "0"
        if declared.isdigit() and int(declared) > self.limit:
            message = f"request body larger than {self.limit} bytes"
            if request.path.startswith("/api/"):
                return JsonResponse({"code": "body-too-large", "detail": message}, status=413)
            return HttpResponse(message + "\n", status=413, content_type="text/plain")
        return self.get_response(request)
