"""The policy document: field-level validation messages, canonical form, diffs."""

from __future__ import annotations

from governance.engine.policydoc import diff_documents, document_sha256, empty_document, parse_document


def test_errors_are_keyed_by_the_wrong_field() -> None:
    _, errors = parse_document(
        {
            "skill_rules": [
                {"effect": "allow", "name": "ok"},
                {"effect": "maybe", "name": "has space"},
                {"effect": "deny"},
            ],
            "source_rules": [
                {"effect": "deny", "kind": "host", "pattern": "("},
                {"effect": "deny", "kind": "repository", "pattern": "not a repo"},
            ],
            "channel_lock": ["skills", "commands"],
            "skill_overrides": {"deploy": "hidden"},
            "enabled_plugins": {"no-marketplace": True},
            "telemetry": {"protocol": "grpc"},
            "surprise": 1,
        }
    )
    assert set(errors) == {
        "skill_rules[1].effect",
        "skill_rules[1].name",
        "skill_rules[2].name",
        "source_rules[0].pattern",
        "source_rules[1].pattern",
        "channel_lock",
        "skill_overrides.deploy",
        "enabled_plugins.no-marketplace",
        "telemetry.protocol",
        "surprise",
    }
    assert "at least one criterion" in errors["skill_rules[2].name"][0]
    assert "regular expression" in errors["source_rules[0].pattern"][0]


def test_round_trip_and_hash_are_stable() -> None:
    data = {
        "skill_rules": [{"effect": "deny", "name": "x", "team": "payments"}],
        "channel_lock": ["hooks", "skills"],
    }
    doc, errors = parse_document(data)
    assert errors == {}
    again, _ = parse_document(doc.as_dict())
    assert again.as_dict() == doc.as_dict()
    assert doc.as_dict()["channel_lock"] == ["skills", "hooks"]
    assert document_sha256(doc.as_dict()) == document_sha256(again.as_dict())
    assert parse_document(empty_document())[1] == {}


def test_diff_names_each_changed_field() -> None:
    before = empty_document()
    after = parse_document(
        {"skill_rules": [{"effect": "deny", "name": "x"}], "disable_skill_shell_execution": True}
    )[0].as_dict()
    changes, text = diff_documents(before, after)
    by_path = {c.path: c.change for c in changes}
    assert by_path["disable_skill_shell_execution"] == "changed"
    assert by_path["skill_rules[0]"] == "added"
    assert '"disable_skill_shell_execution": true' in text
