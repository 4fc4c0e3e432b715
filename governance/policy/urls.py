"""Pages of the policy concern."""

from django.urls import URLPattern, path

from governance.policy import views

urlpatterns: list[URLPattern] = [
    path("policy/", views.policy, name="policy"),
    path("policy/edit/", views.policy_edit, name="policy-edit"),
    path("policy/impact/", views.policy_impact, name="policy-impact"),
    path("policy/publish/", views.policy_publish_view, name="policy-publish"),
    path("policy/history/", views.policy_history, name="policy-history"),
    path("policy/v/<int:number>/", views.policy_version, name="policy-version"),
]
