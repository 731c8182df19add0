"""Objects whose files a person purged from history (`vouch forget --purge-history`).

A purge removes an object's files from every commit, the decision that approved it
included, and records a `history.purge` event naming the object. The checks then find
an approved object gone. That absence is the purge, not a deletion outside vouch, only
when both hold: a purge event names the object (an event owned, like every event, by
the vouch commit that made it, or reported by the audit check), and no commit of the
branch's history ever held its file — a forger who deletes the file and types the
event still has the approval commit holding it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from vouch.gate.direct_writes import PURGE


def purged_ids(events: dict[str, dict[str, Any]]) -> set[str]:
    """The object ids the purge events of a chain name."""
    out: set[str] = set()
    for event in events.values():
        if event.get("event") == PURGE:
            out.update(str(i) for i in event.get("object_ids") or [])
    return out


def in_logs(datas: Iterable[bytes]) -> set[str]:
    """The object ids the purge events of audit log files name (events whose hash
    matches their body; the audit check proves who wrote them)."""
    from vouch.store import audit

    out: set[str] = set()
    needle = f'"{PURGE}"'.encode()
    for data in datas:
        for line in data.split(b"\n"):
            if needle not in line:
                continue
            record = audit.parse_line(line)
            if record is not None and record.get("hash") == audit.event_hash(record):
                out |= purged_ids({"": record})
    return out


def taken(kb: Any, files: dict[str, str], logs: Iterable[bytes], rev: str = "HEAD") -> set[str]:
    """Of `files` (repository path -> object id: approved objects whose files are gone),
    the paths a purge took (see the module's docstring)."""
    from vouch.git import purge

    named = in_logs(logs) if files else set()
    candidates = {p for p, oid in files.items() if oid in named}
    if not candidates:
        return set()
    return candidates - purge.ever_held(kb.repo, rev, candidates)
