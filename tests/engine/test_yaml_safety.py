"""Hostile YAML: bombs, tags, duplicates, depth; each fails fast with a clear message."""

from __future__ import annotations

import time

from governance.engine.types import Severity
from governance.engine.yamlsafe import WITH_LIBYAML, load_mapping

from .helpers import GOOD, codes, only, parse


def billion_laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels + 1):
        refs = ", ".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{refs}]")
    return "\n".join(lines)


def test_c_loader_is_used() -> None:
    assert WITH_LIBYAML


def test_billion_laughs_fails_fast_with_a_clear_message() -> None:
    started = time.perf_counter()
    skill = parse(GOOD + "\n" + billion_laughs())
    elapsed = time.perf_counter() - started
    finding = only(skill, "yaml-alias-bomb")
    assert finding.severity is Severity.ERROR
    assert finding.message.startswith(
        "Invalid YAML in frontmatter: it expands to 4,412,961,520 values through anchors (&) and aliases (*), "
        "over the 10,000 allowed: refused as a 'billion laughs' document."
    )
    assert elapsed < 0.05  # measured on the shared graph, never expanded
    assert skill.frontmatter == {} and not skill.valid


def test_alias_expansion_just_past_the_bound() -> None:
    items = ", ".join(["x"] * 100)
    refs = ", ".join(["*a"] * 120)
    skill = parse(GOOD + f"\nmetadata:\n  a: &a [{items}]\nhooks: [{refs}]")
    assert "yaml-alias-bomb" in codes(skill)


def test_small_aliases_are_fine() -> None:
    skill = parse(GOOD + "\nmetadata:\n  a: &x one\n  b: *x")
    assert skill.valid
    assert skill.frontmatter["metadata"] == {"a": "one", "b": "one"}


def test_recursive_alias_is_refused() -> None:
    skill = parse(GOOD + "\nhooks: &h\n  Stop: *h")
    assert "recursive alias" in only(skill, "yaml-alias-bomb").message


def test_python_tag_is_refused() -> None:
    skill = parse(GOOD + "\nversion: !!python/object/apply:os.system ['echo pwned']")
    finding = only(skill, "yaml-tag-refused")
    assert finding.message.startswith(
        "Invalid YAML in frontmatter: the tag '!!python/object/apply:os.system' is refused"
    )
    assert finding.line == 4


def test_ruby_and_custom_tags_are_refused() -> None:
    for value, shown in (
        ("!ruby/object:Gem::Requirement x", "!ruby/object:Gem::Requirement"),
        ("!env HOME", "!env"),
    ):
        skill = parse(GOOD + f"\nmodel: {value}")
        assert f"the tag '{shown}' is refused" in only(skill, "yaml-tag-refused").message


def test_standard_explicit_tags_are_fine() -> None:
    skill = parse(GOOD + "\nversion: !!str 1.0")
    assert skill.valid and skill.frontmatter["version"] == "1.0"
    assert "value-not-string" not in codes(skill)


def test_duplicate_keys_are_reported_with_both_lines() -> None:
    skill = parse(GOOD + "\nname: other")
    finding = only(skill, "yaml-duplicate-key")
    assert finding.message.startswith("Invalid YAML in frontmatter: duplicate key 'name' (lines 2 and 4)")
    assert finding.severity is Severity.ERROR and finding.line == 4


def test_nested_duplicate_key() -> None:
    skill = parse(GOOD + "\nmetadata:\n  a: x\n  a: y")
    assert "duplicate key 'metadata.a'" in only(skill, "yaml-duplicate-key").message


def test_too_deep_nesting() -> None:
    deep = "hooks: " + "[" * 100 + "]" * 100
    skill = parse(GOOD + "\n" + deep)
    assert "it nests deeper than 64 levels" in only(skill, "yaml-too-deep").message


def test_libyaml_nesting_cap_is_a_yaml_error() -> None:
    skill = parse(GOOD + "\nhooks: " + "[" * 5000 + "]" * 5000)
    assert only(skill, "yaml-invalid").message.startswith("Invalid YAML in frontmatter:")


def test_too_many_nodes() -> None:
    skill = parse(GOOD + "\nmetadata:\n" + "".join(f"  k{i}: v\n" for i in range(6000)))
    assert "more than 10,000 values" in only(skill, "yaml-too-many-nodes").message


def test_only_json_values_come_out() -> None:
    doc = load_mapping("a: 2024-01-01\nb: .nan\nc: -.inf\nd: 0x10\ne: ~\nf: 1" + "0" * 5000)
    assert doc is not None
    assert doc.data == {
        "a": "2024-01-01",
        "b": ".nan",
        "c": "-.inf",
        "d": 16,
        "e": None,
        "f": "1" + "0" * 5000,
    }


def test_merge_keys() -> None:
    doc = load_mapping("base: &b {x: 1}\nother:\n  <<: *b\n  y: 2")
    assert doc is not None and doc.data["other"] == {"x": 1, "y": 2}


def test_yaml_tag_refused_in_key() -> None:
    skill = parse(GOOD + "\n!!python/name:os.system : x")
    assert "yaml-tag-refused" in codes(skill)


def test_fast_resolver_types_scalars_exactly_as_pyyaml() -> None:
    import yaml

    values = [
        "yes",
        "No",
        "on",
        "OFF",
        "true",
        "False",
        "~",
        "null",
        "",
        "0",
        "-1",
        "+2",
        "0x1F",
        "0o17",
        "017",
        "1_000",
        "1:30",
        "1.0",
        ".5",
        "-.inf",
        ".NaN",
        "1e3",
        "Hello",
        "hello world",
        "<<x",
        "=x",
        "'quoted'",
        "a-b",
        "x%",
        "_u",
        "[1, 2]",
        "{a: 1}",
        "2024-01-01",
        "12:30:00",
        "Yes please",
    ]
    text = "\n".join(f"k{i}: {v}" for i, v in enumerate(values))
    ours = load_mapping(text)
    assert ours is not None
    expected = yaml.safe_load(text)
    for key, value in expected.items():
        if hasattr(value, "isoformat"):
            assert ours.data[key] == values[int(key[1:])]  # dates stay text
        elif value != value:  # NaN
            assert ours.data[key] == ".NaN"
        elif isinstance(value, float) and value in (float("inf"), float("-inf")):
            assert ours.data[key] == "-.inf"
        else:
            assert ours.data[key] == value and type(ours.data[key]) is type(value), key
