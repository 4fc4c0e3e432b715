"""Events are identified by (event_id, occurred_at); the surrogate primary key index is dropped on
PostgreSQL (one index less to maintain on the hot ingest path; nothing looks events up by id)."""

from django.db import migrations


def drop_pk(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE telemetry_event DROP CONSTRAINT IF EXISTS telemetry_event_pkey")


def restore_pk(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "ALTER TABLE telemetry_event ADD CONSTRAINT telemetry_event_pkey PRIMARY KEY (id, occurred_at)"
        )


class Migration(migrations.Migration):
    dependencies = [("telemetry", "0002_skill_day")]

    operations = [migrations.RunPython(drop_pk, restore_pk)]
