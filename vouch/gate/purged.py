"""Objects whose files a person purged from history (`vouch forget --purge-history`).

A purge removes an object's files from every commit, the decision that approved it
included, and records a `history.purge` event naming the object. The audit check then
finds that decision's object gone: for an object a purge event names (an event owned,
like every event, by the vouch commit that made it, or reported), that absence is the
purge, not a forged approval.
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
