"""The reference checker's API, answered by the portal's engine in strict mode."""

from .errors import ParseError, SkillError, ValidationError
from .models import SkillProperties
from .parser import find_skill_md, read_properties
from .prompt import to_prompt
from .validator import validate

__all__ = [
    "ParseError",
    "SkillError",
    "SkillProperties",
    "ValidationError",
    "find_skill_md",
    "read_properties",
    "to_prompt",
    "validate",
]

__version__ = "0.1.1+portal-engine"
