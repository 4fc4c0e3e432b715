"""Safe, fast YAML for SKILL.md frontmatter.

libyaml (PyYAML's C extension) scans, parses and composes the document into a node graph; this
module then builds Python values from the nodes itself instead of PyYAML's constructor, so it can:

- refuse a document whose anchors/aliases expand past ``max_yaml_nodes`` (a "billion laughs"
  graph is tiny once composed, it explodes only when walked: its expanded size is computed on
  the shared graph, memoised per node, before any value is built; the builder also counts every
  node it visits, aliases included, and stops at the bound) and recursive aliases;
- refuse language-specific and custom tags (``!!python/object``, ``!ruby/...``, ``!foo``);
- report duplicate keys with both line numbers (PyYAML silently keeps the last one; strictyaml
  and the JavaScript parsers refuse them);
- keep the source text of every scalar that YAML 1.1 would type as a number, boolean, null or
  date (``version: 1.0``), so the rules can report it and store the text, not a float;
- note flow style (``[a, b]``), which the reference checker's strictyaml refuses.

Only JSON-compatible values come out: dates, NaN and infinities stay as their text.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.resolver import Resolver

try:  # pragma: no branch - the C parser is in the pinned wheel
    from yaml._yaml import CParser as _Parser

    WITH_LIBYAML = True
except ImportError:  # pragma: no cover - pure-Python fallback, same behaviour, slower
    from yaml.composer import Composer
    from yaml.parser import Parser
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    class _Parser(Reader, Scanner, Parser, Composer):  # type: ignore[no-redef]
        def __init__(self, stream: str) -> None:
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)
            Composer.__init__(self)

    WITH_LIBYAML = False

_TAG = "tag:yaml.org,2002:"
STR = _TAG + "str"
INT = _TAG + "int"
FLOAT = _TAG + "float"
BOOL = _TAG + "bool"
NULL = _TAG + "null"
TIMESTAMP = _TAG + "timestamp"
SEQ = _TAG + "seq"
MAP = _TAG + "map"
MERGE = _TAG + "merge"
# "!" (non-specific), and merge/value tags on a value ("f: <<", "g: ="): plain text.
_TEXT_TAGS = frozenset({"!", MERGE, _TAG + "value"})
_SCALAR_TAGS = frozenset({STR, INT, FLOAT, BOOL, NULL, TIMESTAMP}) | _TEXT_TAGS

_CONSTRUCTOR = yaml.constructor.SafeConstructor()
# First characters with which no YAML 1.1 implicit type (bool, null, int, float, timestamp, merge,
# value) can start: a plain scalar starting with one of them is a string, no regex needed.
_NEVER_TYPED = frozenset({chr(c) for c in range(0x21, 0x7F)} - set("yYnNtTfFoO~0123456789+-.<=")) | {" "}


class _Loader(_Parser, Resolver):
    """libyaml's parser and composer (what ``CSafeLoader`` uses) with PyYAML's resolver, a fast
    path in it (the same tags, fewer regex runs) and no constructor: values are built below."""

    def __init__(self, stream: str) -> None:
        _Parser.__init__(self, stream)
        Resolver.__init__(self)

    def resolve(self, kind: type[yaml.Node], value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode and (not implicit[0] or (value and value[0] in _NEVER_TYPED)):
            return STR
        return str(super().resolve(kind, value, implicit))


class YamlRefused(Exception):
    """The frontmatter cannot be read: ``code`` is a stable finding code, ``line`` 1-based in
    the YAML text (or None)."""

    def __init__(self, code: str, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.line = line


@dataclass(frozen=True, slots=True)
class TypedScalar:
    """A scalar YAML typed as something other than a string: where it is and how it was written."""

    path: tuple[str, ...]
    text: str
    tag: str  # short name: int, float, bool, null, timestamp
    line: int


@dataclass(slots=True)
class YamlDocument:
    """Result of :func:`load_mapping`. Line numbers are 1-based within the YAML text."""

    data: dict[str, Any]
    key_lines: dict[str, int] = field(default_factory=dict)
    typed: dict[tuple[str, ...], TypedScalar] = field(default_factory=dict)
    duplicates: list[tuple[tuple[str, ...], int, int]] = field(default_factory=list)  # path, first, again
    flow_style_line: int | None = None
    aliases: int = 0


def short_tag(tag: str) -> str:
    return "!!" + tag[len(_TAG) :] if tag.startswith(_TAG) else tag


class _Builder:
    __slots__ = ("active", "budget", "doc", "max_depth", "max_nodes", "seen", "track")

    def __init__(self, doc: YamlDocument, max_nodes: int, max_depth: int, aliases: bool = True) -> None:
        self.track = aliases  # without a '*' in the text there is no alias to see
        self.doc = doc
        self.budget = max_nodes
        self.max_nodes = max_nodes
        self.max_depth = max_depth
        self.seen: set[int] = set()
        self.active: set[int] = set()

    def _count(self, node: yaml.Node) -> None:
        self.budget -= 1
        if self.budget < 0:
            if self.doc.aliases:
                raise YamlRefused(
                    "yaml-alias-bomb",
                    f"Invalid YAML in frontmatter: it expands to more than {self.max_nodes:,} values through "
                    f"anchors (&) and aliases (*) ({self.doc.aliases:,} alias uses seen): refused "
                    "as a 'billion laughs' document. Write the values out instead of aliasing them.",
                    node.start_mark.line + 1,
                )
            raise YamlRefused(
                "yaml-too-many-nodes",
                f"Invalid YAML in frontmatter: more than {self.max_nodes:,} values: refused. "
                "Keep long content in the body or in references/.",
                node.start_mark.line + 1,
            )

    def build(self, node: yaml.Node, path: tuple[str, ...], depth: int) -> Any:
        self._count(node)
        if depth > self.max_depth:
            raise YamlRefused(
                "yaml-too-deep",
                f"Invalid YAML in frontmatter: it nests deeper than {self.max_depth} levels: refused.",
                node.start_mark.line + 1,
            )
        tag = node.tag
        if isinstance(node, yaml.ScalarNode):
            if self.track:
                if id(node) in self.seen:
                    self.doc.aliases += 1
                else:
                    self.seen.add(id(node))
            if tag == STR or tag in _TEXT_TAGS:
                return node.value
            if tag not in _SCALAR_TAGS:
                raise _tag_refused(node)
            return self._typed_scalar(node, path)
        ident = id(node)
        if ident in self.seen:
            self.doc.aliases += 1
            if ident in self.active:
                raise YamlRefused(
                    "yaml-alias-bomb",
                    "Invalid YAML in frontmatter: a recursive alias (an anchor that contains itself): refused.",
                    node.start_mark.line + 1,
                )
        else:
            self.seen.add(ident)
        if getattr(node, "flow_style", False) and self.doc.flow_style_line is None:
            self.doc.flow_style_line = node.start_mark.line + 1
        self.active.add(ident)
        try:
            if isinstance(node, yaml.SequenceNode):
                if tag != SEQ:
                    raise _tag_refused(node)
                return [
                    self.build(item, (*path, str(index)), depth + 1) for index, item in enumerate(node.value)
                ]
            if tag != MAP or not isinstance(node, yaml.MappingNode):
                raise _tag_refused(node)
            return self._mapping(node, path, depth)
        finally:
            self.active.discard(ident)

    def _typed_scalar(self, node: yaml.ScalarNode, path: tuple[str, ...]) -> Any:
        tag = node.tag
        text = node.value
        line = node.start_mark.line + 1
        value: Any
        if tag == NULL:
            value = None
        elif tag == BOOL:
            value = _CONSTRUCTOR.construct_yaml_bool(node)
        elif tag == INT:
            try:
                value = _CONSTRUCTOR.construct_yaml_int(node)
            except ValueError:  # more digits than int() accepts
                value = text
        elif tag == FLOAT:
            value = _CONSTRUCTOR.construct_yaml_float(node)
            if math.isnan(value) or math.isinf(value):
                value = text
        else:  # timestamps are kept as written: JSON has no date type
            value = text
        self.doc.typed[path] = TypedScalar(path, text, tag[len(_TAG) :], line)
        return value

    def _mapping(self, node: yaml.MappingNode, path: tuple[str, ...], depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        lines: dict[str, int] = {}
        merges: list[dict[str, Any]] = []
        top = not path
        for key_node, value_node in node.value:
            if key_node.tag == MERGE:
                merged = self.build(value_node, path, depth + 1)
                for item in merged if isinstance(merged, list) else [merged]:
                    if not isinstance(item, dict):
                        raise YamlRefused(
                            "yaml-invalid",
                            "Invalid YAML in frontmatter: a merge key (<<) needs a mapping or a list of mappings",
                            key_node.start_mark.line + 1,
                        )
                    merges.append(item)
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                raise YamlRefused(
                    "yaml-invalid",
                    "Invalid YAML in frontmatter: a key must be plain text, not a list or a mapping",
                    key_node.start_mark.line + 1,
                )
            self._count(key_node)
            if key_node.tag not in _SCALAR_TAGS:
                raise _tag_refused(key_node)
            key = key_node.value  # keys are text whatever YAML would type them as
            line = key_node.start_mark.line + 1
            if key in lines:
                self.doc.duplicates.append(((*path, key), lines[key], line))
            lines[key] = line
            result[key] = self.build(value_node, (*path, key), depth + 1)
        for merged in merges:
            for key, value in merged.items():
                result.setdefault(key, value)
        if top:
            self.doc.key_lines = lines
        return result


def _tag_refused(node: yaml.Node) -> YamlRefused:
    return YamlRefused(
        "yaml-tag-refused",
        f"Invalid YAML in frontmatter: the tag '{short_tag(node.tag)}' is refused (language-specific "
        "and custom tags can construct objects in some loaders). Write a plain value.",
        node.start_mark.line + 1,
    )


def _describe(error: yaml.YAMLError) -> tuple[str, int | None]:
    if isinstance(error, yaml.MarkedYAMLError):
        parts = [p for p in (error.context, error.problem) if p]
        mark = error.problem_mark or error.context_mark
        text = ", ".join(parts) if parts else str(error)
        return text, (mark.line + 1 if mark is not None else None)
    return str(error), None


def load_mapping(text: str, *, max_nodes: int = 10_000, max_depth: int = 64) -> YamlDocument | None:
    """Parse ``text`` (one YAML document) into a :class:`YamlDocument`.

    Returns None for an empty document. Raises :class:`YamlRefused` for invalid or refused YAML
    and for a document that is not a mapping (code ``frontmatter-not-mapping``).
    """
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
    except yaml.YAMLError as error:
        problem, line = _describe(error)
        raise YamlRefused("yaml-invalid", f"Invalid YAML in frontmatter: {problem}", line) from None
    except RecursionError:  # pure-Python fallback only: libyaml caps nesting at 1000
        raise YamlRefused(
            "yaml-too-deep", "Invalid YAML in frontmatter: it nests too deep: refused."
        ) from None
    finally:
        loader.dispose()
    if node is None:
        return None
    if not isinstance(node, yaml.MappingNode):
        raise YamlRefused(
            "frontmatter-not-mapping",
            "SKILL.md frontmatter must be a YAML mapping (name: ..., description: ...)",
            node.start_mark.line + 1,
        )
    aliases = "*" in text and "&" in text  # an alias needs an anchor
    if aliases:
        _refuse_expansion(node, max_nodes, max_depth)
    doc = YamlDocument(data={})
    doc.data = _Builder(doc, max_nodes, max_depth, aliases=aliases).build(node, (), 0)
    return doc


def _refuse_expansion(root: yaml.Node, max_nodes: int, max_depth: int) -> None:
    """Refuse a document whose aliases expand past ``max_nodes`` values before building any of it.

    The composed graph shares aliased nodes; the expanded size is computed once per distinct node
    (memoised), so a billion-laughs document is measured, and refused, in microseconds with its
    real expansion in the message.
    """
    sizes: dict[int, int] = {}
    active: set[int] = set()
    reused = 0

    def size(node: yaml.Node, depth: int) -> int:
        nonlocal reused
        ident = id(node)
        known = sizes.get(ident)
        if known is not None:
            reused += 1
            return known
        if isinstance(node, yaml.ScalarNode):
            sizes[ident] = 1
            return 1
        if ident in active:
            raise YamlRefused(
                "yaml-alias-bomb",
                "Invalid YAML in frontmatter: a recursive alias (an anchor that contains itself): refused.",
                node.start_mark.line + 1,
            )
        if depth > max_depth:
            raise YamlRefused(
                "yaml-too-deep",
                f"Invalid YAML in frontmatter: it nests deeper than {max_depth} levels: refused.",
                node.start_mark.line + 1,
            )
        active.add(ident)
        if isinstance(node, yaml.MappingNode):
            total = 1 + sum(size(k, depth + 1) + size(v, depth + 1) for k, v in node.value)
        else:
            total = 1 + sum(size(child, depth + 1) for child in node.value)
        active.discard(ident)
        sizes[ident] = total
        return total

    total = size(root, 0)
    if total > max_nodes and reused:
        raise YamlRefused(
            "yaml-alias-bomb",
            f"Invalid YAML in frontmatter: it expands to {total:,} values through anchors (&) and "
            f"aliases (*), over the {max_nodes:,} allowed: refused as a 'billion laughs' document. "
            "Write the values out instead of aliasing them.",
            root.start_mark.line + 1,
        )
