from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from portal import views
from portal.api import api

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("account/tokens/", views.tokens, name="tokens"),
    path("account/tokens/<int:token_id>/revoke/", views.token_revoke, name="token-revoke"),
    path("admin/", admin.site.urls),
    path("api/v1/", api.urls),
    path("", include("governance.skills.urls")),
    path("", include("governance.policy.urls")),
    path("", include("governance.telemetry.urls")),
    path("", include("governance.reviews.urls")),
    path("", include("governance.audit.urls")),
]
