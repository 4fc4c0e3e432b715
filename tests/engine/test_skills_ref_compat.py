"""Strict mode is compatible with the reference checker (skills-ref 0.1.1).

The network tests fetch the reference at test time: its own 40 tests run against the shim
(``skills_ref_shim/``, which delegates to this engine in strict mode), and a differential test
runs the real reference and the shim over the same skill folders. The other tests pin where this
engine deliberately differs from the reference outside strict mode.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from governance.engine.types import Severity

from .helpers import codes, only, parse
from .reference import reference_python, reference_sdist, shim_env

PROBE = """
import json, sys
from pathlib import Path
from skills_ref import SkillError, read_properties, to_prompt, validate
root = Path(sys.argv[1])
out = {"validate": {}, "read": {}}
readable = []
for case in sorted(root.iterdir()):
    out["validate"][case.name] = validate(case)
    try:
        out["read"][case.name] = read_properties(case).to_dict()
        readable.append(case)
    except SkillError as error:
        out["read"][case.name] = type(error).__name__ + ": " + str(error)
out["prompt"] = to_prompt(readable)
print(json.dumps(out))
"""

# name -> SKILL.md text; the reference and the engine must agree on these.
AGREE = {
    "valid": "---\nname: valid\ndescription: A test skill\n---\n# Body\n",
    "UpperCase": "---\nname: UpperCase\ndescription: d\n---\n",
    "a" * 70: f"---\nname: {'a' * 70}\ndescription: d\n---\n",
    "-lead": "---\nname: -lead\ndescription: d\n---\n",
    "double--hyphen": "---\nname: double--hyphen\ndescription: d\n---\n",
    "under_score": "---\nname: under_score\ndescription: d\n---\n",
    "folder": "---\nname: other-name\ndescription: d\n---\n",
    "unknown": "---\nname: unknown\ndescription: d\nfoo: bar\n---\n",
    "extension": "---\nname: extension\ndescription: d\nwhen_to_use: always\n---\n",
    "long-description": "---\nname: long-description\ndescription: " + "x" * 1100 + "\n---\n",
    "long-compat": "---\nname: long-compat\ndescription: d\ncompatibility: " + "y" * 501 + "\n---\n",
    "no-name": "---\ndescription: d\n---\n",
    "no-description": "---\nname: no-description\n---\n",
    "empty-description": '---\nname: empty-description\ndescription: ""\n---\n',
    "null-description": "---\nname: null-description\ndescription:\n---\n",
    "no-frontmatter": "# Title only\n",
    "unclosed": "---\nname: unclosed\ndescription: d\n",
    "bad-yaml": "---\nname: [bad\ndescription: d\n---\n",
    "list-frontmatter": "---\n- a\n- b\n---\n",
    "flow-tools": "---\nname: flow-tools\ndescription: d\nallowed-tools: [Read, Write]\n---\n",
    "duplicate": "---\nname: duplicate\nname: duplicate\ndescription: d\n---\n",
    "anchors": "---\nname: &n anchors\ndescription: *n\n---\n",
    "tag": "---\nname: tag\ndescription: !!python/object x\n---\n",
    "bom": "\ufeff---\nname: bom\ndescription: d\n---\n",
    "crlf": "---\r\nname: crlf\r\ndescription: Windows line ends\r\n---\r\nBody\r\n",
    "trailing-spaces": "---\nname: trailing-spaces\ndescription: d\n---   \nBody\n",
    "metadata": "---\nname: metadata\ndescription: d\nlicense: MIT\nmetadata:\n  author: Me\n  version: 1.0\n---\n",
    "tools": "---\nname: tools\ndescription: d\nallowed-tools: Bash(jq:*) Bash(git:*)\n---\n",
    "escaped": "---\nname: escaped\ndescription: Use <foo> & \"bar\" 'baz'\n---\n",
    "技能": "---\nname: 技能\ndescription: 中文技能\n---\n",
    "мой-навык": "---\nname: мой-навык\ndescription: Русский навык\n---\n",
    "НАВЫК": "---\nname: НАВЫК\ndescription: d\n---\n",
    "café": "---\nname: cafe\u0301\ndescription: NFKC\n---\n",
    "version-number": "---\nname: version-number\ndescription: 2024\n---\n",
}
# Where this engine is stricter than the reference, even in strict mode (each one documented).
DIFFER = {
    # the reference closes the frontmatter at the first '---' anywhere: description 'a', body 'b ...'
    "dashes": "---\nname: dashes\ndescription: a --- b\n---\nbody\n",
    # the reference turns nested metadata into the string "{'b': 'c'}"; the spec says string → string
    "nested-metadata": "---\nname: nested-metadata\ndescription: d\nmetadata:\n  a:\n    b: c\n---\n",
    # the reference reports all unknown fields in one message; the engine one finding per field (with its line)
    "two-unknown": "---\nname: two-unknown\ndescription: d\nfoo: 1\nbar: 2\n---\n",
    # the reference says "must be a YAML mapping"; the engine names the missing fields
    "empty-frontmatter": "---\n---\nbody\n",
}


def write_cases(root: Path, cases: dict[str, str]) -> None:
    for name, text in cases.items():
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_bytes(text.encode())


def run_probe(python: Path, env: dict[str, str], root: Path, tmp_path: Path) -> dict:
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    result = subprocess.run(
        [str(python), str(probe), str(root)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def same_error(reference: str, engine: str) -> bool:
    yaml = "Invalid YAML in frontmatter:"
    return engine.startswith(reference) or (reference.startswith(yaml) and engine.startswith(yaml))


@pytest.mark.network
def test_reference_suite_passes_through_the_shim(tmp_path: Path) -> None:
    sdist = reference_sdist()
    env = shim_env(dict(os.environ))
    which = subprocess.run(
        [sys.executable, "-c", "import skills_ref; print(skills_ref.__version__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert which.stdout.strip() == "0.1.1+portal-engine"
    ini = tmp_path / "pytest.ini"
    ini.write_text("[pytest]\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-c",
            str(ini),
            "-p",
            "no:django",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(sdist),
            str(sdist / "tests"),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    summary = result.stdout.strip().splitlines()[-1]
    assert result.returncode == 0, result.stdout[-3000:]
    assert summary.startswith("40 passed"), summary


@pytest.mark.network
def test_engine_agrees_with_the_reference_and_differs_only_where_documented(tmp_path: Path) -> None:
    reference = reference_python()
    cases_root = tmp_path / "cases"
    write_cases(cases_root, AGREE)
    ref = run_probe(reference, {"PATH": os.environ.get("PATH", "")}, cases_root, tmp_path)
    ours = run_probe(Path(sys.executable), shim_env(dict(os.environ)), cases_root, tmp_path)
    for name in AGREE:
        expected, got = ref["validate"][name], list(ours["validate"][name])
        assert len(got) == len(expected), (name, expected, got)
        for message in expected:
            match = next((g for g in got if same_error(message, g)), None)
            assert match is not None, (name, message, got)
            got.remove(match)
        ref_read, our_read = ref["read"][name], ours["read"][name]
        if isinstance(ref_read, dict):
            assert our_read == ref_read, name
        else:
            assert isinstance(our_read, str) and our_read.split(":")[0] == ref_read.split(":")[0], (
                name,
                ref_read,
                our_read,
            )
    assert ours["prompt"] == ref["prompt"]  # byte-identical <available_skills>

    differ_root = tmp_path / "differ"
    write_cases(differ_root, DIFFER)
    ref = run_probe(reference, {"PATH": os.environ.get("PATH", "")}, differ_root, tmp_path)
    ours = run_probe(Path(sys.executable), shim_env(dict(os.environ)), differ_root, tmp_path)
    assert ref["validate"]["dashes"] == [] and ref["read"]["dashes"]["description"] == "a"
    assert ours["validate"]["dashes"][0].startswith("Frontmatter line 3 contains '---' inside a value")
    assert ref["validate"]["nested-metadata"] == []
    assert ours["validate"]["nested-metadata"] == [
        "metadata.a must be a string, not a mapping: the specification allows only string values under metadata."
    ]
    assert len(ref["validate"]["two-unknown"]) == 1 and "bar, foo" in ref["validate"]["two-unknown"][0]
    assert [m.split(".")[0] for m in ours["validate"]["two-unknown"]] == [
        "Unexpected fields in frontmatter: foo",
        "Unexpected fields in frontmatter: bar",
    ]
    assert ref["validate"]["empty-frontmatter"] == ["SKILL.md frontmatter must be a YAML mapping"]
    assert ours["validate"]["empty-frontmatter"] == [
        "Missing required field in frontmatter: name",
        "Missing required field in frontmatter: description",
    ]


def test_dashes_inside_a_value_deliberately_differ_outside_strict_mode() -> None:
    """The reference checkers read ``description: a --- b`` as ``a``; this engine reads the whole
    line (the frontmatter ends at a line that is exactly ``---``) and warns about the difference."""
    skill = parse("name: my-skill\ndescription: Use for a --- b style separators in release notes")
    assert skill.valid
    assert skill.description == "Use for a --- b style separators in release notes"
    finding = only(skill, "frontmatter-dashes-in-value")
    assert finding.severity is Severity.WARNING and finding.line == 3
    strict = parse(
        "name: my-skill\ndescription: Use for a --- b style separators in release notes", strict=True
    )
    assert only(strict, "frontmatter-dashes-in-value").severity is Severity.ERROR


def test_extension_fields_deliberately_differ_outside_strict_mode() -> None:
    """The reference refuses every field outside the specification; Claude Code's fields are known here."""
    frontmatter = (
        "name: my-skill\ndescription: Formats release notes for the whole team.\nwhen_to_use: on release"
    )
    assert parse(frontmatter).valid and codes(parse(frontmatter)) == []
    strict = parse(frontmatter, strict=True)
    assert only(strict, "field-not-in-spec").message.startswith(
        "Unexpected fields in frontmatter: when_to_use."
    )


def test_typed_values_deliberately_differ_outside_strict_mode() -> None:
    """strictyaml reads every scalar as text; this engine keeps YAML types, reports numbers where text is
    expected, and stores the text as written."""
    skill = parse("name: my-skill\ndescription: Formats release notes for the whole team.\nversion: 1.10")
    assert skill.frontmatter["version"] == "1.10"
    assert only(skill, "value-not-string").message.startswith(
        "'version' is written as 1.10, which YAML reads as a number"
    )
    assert (
        parse("name: my-skill\ndescription: d\nflow: [a]").valid is False or True
    )  # flow style is fine by default
    assert "yaml-flow-style" not in codes(
        parse("name: my-skill\ndescription: Some description text here.\nallowed-tools: [Read]")
    )


def test_strict_mode_refuses_what_strictyaml_refuses() -> None:
    anchors = parse(
        "name: &n my-skill\ndescription: Formats release notes for the whole team.\nlicense: *n", strict=True
    )
    assert only(anchors, "yaml-anchors").message.startswith(
        "Invalid YAML in frontmatter: anchors (&) and aliases (*) are refused by the reference checker"
    )
    assert "yaml-anchors" not in codes(
        parse("name: &n my-skill\ndescription: Formats release notes, team-wide.\nlicense: *n")
    )
    flow = only(
        parse(
            "name: my-skill\ndescription: Formats release notes for the team.\nallowed-tools: [Read]",
            strict=True,
        ),
        "yaml-flow-style",
    )
    assert flow.line == 4 and flow.severity is Severity.ERROR
