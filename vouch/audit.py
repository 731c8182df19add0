"""The audit log: one JSON line per mutation, hash-chained, append-only.

`audit.log.jsonl` is tracked by git with the union merge driver, so two branches that
each append merge without conflict. Appending reads only the last line (a seek from the
end), never the whole log.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from vouch import ids

LOG_NAME = "audit.log.jsonl"


def event_hash(event: dict[str, Any]) -> str:
    body = {k: v for k, v in event.items() if k != "hash"}
    return ids.sha256_hex(ids.canonical_json(body))


def make_event(
    event: str,
    actor: str,
    object_ids: Iterable[str],
    data: dict[str, Any] | None,
    prev_hash: str,
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": f"{ids.now_iso().replace(':', '').replace('-', '')}-{secrets.token_hex(4)}",
        "event": event,
        "actor": actor,
        "created_at": ids.now_iso(),
        "object_ids": list(object_ids),
        "data": data or {},
        "prev_hash": prev_hash,
    }
    record["hash"] = event_hash(record)
    return record


def to_line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, sort_keys=False, separators=(",", ":")) + "\n"


def last_line(path: Path) -> str | None:
    """The final non-empty line of a file, read backwards from the end."""
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return None
    with fh:
        fh.seek(0, os.SEEK_END)
        end = fh.tell()
        block = 4096
        buf = b""
        pos = end
        while pos > 0:
            step = min(block, pos)
            pos -= step
            fh.seek(pos)
            buf = fh.read(step) + buf
            stripped = buf.rstrip(b"\n")
            if b"\n" in stripped:
                return stripped.rsplit(b"\n", 1)[1].decode("utf-8", "replace")
        stripped = buf.rstrip(b"\n")
        return stripped.decode("utf-8", "replace") if stripped else None


def last_event(vouch_dir: Path) -> dict[str, Any] | None:
    line = last_line(vouch_dir / LOG_NAME)
    if not line:
        return None
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        return None
    return record if isinstance(record, dict) else None


def next_event(vouch_dir: Path, event: str, actor: str, object_ids: Iterable[str],
               data: dict[str, Any] | None = None) -> dict[str, Any]:
    """A new event chained to the last one in the work tree's log."""
    last = last_event(vouch_dir)
    return make_event(event, actor, object_ids, data, str(last.get("hash", "")) if last else "")


def read_events(vouch_dir: Path) -> Iterator[dict[str, Any]]:
    path = vouch_dir / LOG_NAME
    try:
        fh = open(path, encoding="utf-8")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return
    with fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict):
                yield record
