"""Pages of the telemetry concern, and the OpenTelemetry receiver (outside /api/v1)."""

from django.urls import path

from governance.telemetry import receiver, views

urlpatterns = [
    path("otlp/v1/logs", receiver.otlp_logs, name="otlp-logs"),
    path("otlp/v1/metrics", receiver.otlp_metrics, name="otlp-metrics"),
    path("health/", views.health, name="health"),
    path("health/agents/", views.health_agents, name="health-agents"),
    path("health/skills/<path:skill_key>/", views.health_skill, name="health-skill"),
    path("telemetry/", views.telemetry, name="telemetry"),
]
