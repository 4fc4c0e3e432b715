"""FINDINGS.md documents every finding code the engine can emit, and nothing else."""

from __future__ import annotations

import re
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "governance" / "engine"
EMITTERS = ("skillfile.py", "rules.py", "yamlsafe.py")


def emitted_codes() -> set[str]:
    pattern = re.compile(
        r'\b(?:Finding|YamlRefused|at|add|refuse|_unreadable)\(\s*(?:[\w.]+(?:\([^)]*\))?,\s*)*"([a-z0-9]+(?:-[a-z0-9]+)+)"'
    )
    found: set[str] = set()
    for name in EMITTERS:
        found |= set(pattern.findall((ENGINE / name).read_text()))
    return found


def documented_codes() -> set[str]:
    return set(re.findall(r"^\| `([a-z0-9-]+)` \|", (ENGINE / "FINDINGS.md").read_text(), re.MULTILINE))


def test_every_emitted_code_is_documented() -> None:
    emitted = emitted_codes()
    assert len(emitted) > 50
    assert emitted - documented_codes() == set()


def test_every_documented_code_is_emitted() -> None:
    assert documented_codes() - emitted_codes() == set()


def test_every_documented_code_is_asserted_by_a_test() -> None:
    tests = "".join(path.read_text() for path in Path(__file__).parent.glob("test_*.py"))
    untested = {code for code in documented_codes() if f'"{code}"' not in tests}
    assert untested == set()
