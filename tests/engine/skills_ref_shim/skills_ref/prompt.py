"""The <available_skills> block, rendered by the engine."""

from __future__ import annotations

from pathlib import Path

from governance.engine.prompt import available_skills_xml

from .parser import find_skill_md, read_properties


def to_prompt(skill_dirs: list[Path]) -> str:
    entries = []
    for skill_dir in skill_dirs:
        resolved = Path(skill_dir).resolve()
        props = read_properties(resolved)
        entries.append((props.name, props.description, str(find_skill_md(resolved))))
    return available_skills_xml(entries)
