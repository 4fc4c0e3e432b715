from django.apps import AppConfig


class TelemetryConfig(AppConfig):
    name = "governance.telemetry"
    label = "telemetry"
