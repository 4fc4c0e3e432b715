"""Source admission: is a source allowed before anything of it is fetched or unpacked?

The ingest path calls ``source_admission`` first; the policy concern owns the decision.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Admission:
    allowed: bool
    reason: str


def source_admission(*, kind: str, location: str) -> Admission:
    """Decide whether a source of ``kind`` at ``location`` (URL or path) may be ingested.

    Until the policy engine lands, everything is admitted: with no published policy there is
    nothing to refuse.
    """
    return Admission(allowed=True, reason="no published policy restricts sources")
