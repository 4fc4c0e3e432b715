"""JSON from untrusted clients, parsed so that every bad body is a ``ValueError``.

``json.loads`` accepts what no database or hash can take afterwards: a lone UTF-16 surrogate
written as an escape (``"\\ud800"``) becomes a Python string that cannot be encoded as UTF-8, so
the failure came later, as a 500, from the hash, the database driver or the page. Nesting deep
enough raises ``RecursionError``, not ``ValueError``. Both are refused here, as ``ValueError``.
"""

from __future__ import annotations

import json
import re
from typing import Any

# A surrogate escape (\uD800-\uDFFF) in the text: only then can a parsed string hold a lone one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class JsonRefused(ValueError):
    """The body is not JSON this portal accepts; the message says why."""


def loads(body: bytes | str) -> Any:
    """``json.loads`` of UTF-8 JSON that raises ``JsonRefused`` (a ``ValueError``) when refused."""
    if isinstance(body, bytes):
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonRefused(f"body is not UTF-8: {exc}") from None
    else:
        text = body
    try:
        data = json.loads(text)
    except RecursionError:
        raise JsonRefused("JSON nested too deeply") from None
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise JsonRefused("a string holds a lone UTF-16 surrogate (\\ud800-\\udfff)") from None
        except RecursionError:
            raise JsonRefused("JSON nested too deeply") from None
    return data
