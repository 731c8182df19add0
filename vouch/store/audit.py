"""The audit log: one JSON line per mutation, hash-chained, append-only.

`audit.log.jsonl` is tracked by git with the union merge driver, so two branches that
each append merge without conflict. Appending reads only the last line (a seek from the
end), never the whole log.

Segments keep the cost of a commit flat. Every commit stores the whole active log as one
git blob (hash + zlib of every byte), so a single ever-growing file would make each
append O(log size). Once the active log reaches SEGMENT_BYTES, the next append in a
commit closes it: its bytes move unchanged to `audit/<seq>-<sha16>.jsonl`
(a content-addressed name, so two branches that close the same log agree) and the active
log restarts. Verification treats all files together as a hash DAG: every event's hash
matches its body and every `prev_hash` names an event that exists somewhere — which is
exactly what git's union merge of two branches' appends preserves.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from vouch.core import ids, safeload

LOG_NAME = "audit.log.jsonl"
SEGMENT_DIR = "audit"
SEGMENT_BYTES = 256 * 1024


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


MAX_LINE = 1 << 20  # no event vouch writes comes near; a longer last line is no event


def last_line(path: Path) -> str | None:
    """The final non-empty line of a file, read backwards from the end, block by block
    (each block looked at once: linear in the line, and a last line past `MAX_LINE` is
    given as "" — no event — without reading it whole)."""
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return None
    with fh:
        pos = fh.seek(0, os.SEEK_END)
        blocks: list[bytes] = []  # the line's blocks, last first
        size = 0
        while pos > 0:
            step = min(64 * 1024, pos)
            pos -= step
            fh.seek(pos)
            block = fh.read(step)
            if not blocks and size == 0:
                block = block.rstrip(b"\n")  # the newlines that end the file
                if not block:
                    continue
            cut = block.rfind(b"\n")
            blocks.append(block[cut + 1 :] if cut >= 0 else block)
            size += len(blocks[-1])
            if size > MAX_LINE:
                return ""
            if cut >= 0:
                break
        line = b"".join(reversed(blocks))
        return line.decode("utf-8", "replace") if line else None


def last_event(vouch_dir: Path) -> dict[str, Any] | None:
    line = last_line(vouch_dir / LOG_NAME)
    return parse_line(line) if line else None


def read_events(vouch_dir: Path) -> Iterator[dict[str, Any]]:
    """The active log's events, oldest first (unreadable lines skipped)."""
    yield from _records(vouch_dir / LOG_NAME)


# -- appending inside a commit (no work tree) ----------------------------------------------
def parse_line(line: bytes | str) -> dict[str, Any] | None:
    """The event on one line, or None when it is not a JSON object `safeload` reads."""
    try:
        record = safeload.json_value(line, "audit line")
    except safeload.Unreadable:
        return None
    return record if isinstance(record, dict) else None


def line_problem(line: bytes | str) -> str:
    """Why `parse_line` read no event from a line."""
    try:
        safeload.json_value(line, "audit line")
    except safeload.Unreadable as exc:
        return exc.detail
    return "not a JSON object"


def last_in(content: bytes) -> dict[str, Any] | None:
    """The last event of a log held in memory."""
    stripped = content.rstrip(b"\n")
    if not stripped:
        return None
    return parse_line(stripped.rsplit(b"\n", 1)[-1])


def segment_name(content: bytes, seq: int) -> str:
    """`audit/<seq>-<sha16>.jsonl`: sorts in closing order and names its own bytes.

    `seq` is one more than the highest sequence number already in the tree, so two
    branches that close the same log at the same point pick the same name (and a merge
    sees one file), while events of one second still sort correctly.
    """
    return f"{SEGMENT_DIR}/{seq:06d}-{ids.sha256_hex(content)[:16]}.jsonl"


def next_seq(names: Iterable[str]) -> int:
    """The sequence number for the next closed segment, given the existing file names."""
    seqs = [int(n.split("-", 1)[0]) for n in names if n.split("-", 1)[0].isdigit()]
    return max(seqs, default=0) + 1


def append_events(
    content: bytes, specs: Iterable[tuple[str, str, list[str], dict[str, Any]]], *, seq: int = 1
) -> tuple[bytes, dict[str, bytes], list[dict[str, Any]]]:
    """Append events to an active log's bytes.

    One new event per (event, actor, object_ids, data), each chained to the one before.
    Returns the new active log, segment files to add ({path: bytes}), and the new events.
    `seq` names a segment closed now (see `segment_name`).
    """
    segments: dict[str, bytes] = {}
    previous = last_in(content)
    if len(content) >= SEGMENT_BYTES:
        segments[segment_name(content, seq)] = content
        content = b""
    if content and not content.endswith(b"\n"):
        content += b"\n"
    out = bytearray(content)
    made = []
    for event, actor, object_ids, data in specs:
        prev = str(previous.get("hash", "")) if previous else ""
        record = make_event(event, actor, object_ids, data, prev)
        out += to_line(record).encode()
        made.append(record)
        previous = record
    return bytes(out), segments, made


# -- reading everything ------------------------------------------------------------------
def log_files(vouch_dir: Path) -> list[Path]:
    """Closed segments in name (time) order, then the active log."""
    seg_dir = vouch_dir / SEGMENT_DIR
    try:
        segments = sorted(p for p in seg_dir.iterdir() if p.suffix == ".jsonl")
    except FileNotFoundError:
        segments = []
    active = vouch_dir / LOG_NAME
    return [*segments, active] if active.exists() else segments


def _records(path: Path) -> list[dict[str, Any]]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    return [r for r in (parse_line(x) for x in data.split(b"\n") if x.strip()) if r]


def matches(record: dict[str, Any], event: str | None, actor: str | None) -> bool:
    """`event` matches itself and its dotted children (`proposal` matches proposal.approve)."""
    if event:
        name = str(record.get("event", ""))
        if name != event and not name.startswith(event.rstrip(".") + "."):
            return False
    return not actor or record.get("actor") == actor


def query(
    vouch_dir: Path, tail: int | None = None, event: str | None = None, actor: str | None = None
) -> list[dict[str, Any]]:
    """Matching events, oldest first; with `tail`, only the newest `tail` of them.

    A tail reads files newest-first and stops once it has enough, so `--tail 20` costs
    the same on a log of any length.
    """
    found: list[dict[str, Any]] = []
    seen: set[str] = set()
    for path in reversed(log_files(vouch_dir)):
        batch = [r for r in _records(path) if matches(r, event, actor)]
        for record in reversed(batch):
            key = str(record.get("hash"))
            if key in seen:  # the same event can sit in two segments after a merge
                continue
            seen.add(key)
            found.append(record)
        if tail is not None and len(found) >= tail:
            break
    found.reverse()
    return found[-tail:] if tail is not None and tail > 0 else ([] if tail == 0 else found)


def verify(vouch_dir: Path, anchors: Iterable[tuple[str, str]] = ()) -> dict[str, Any]:
    """Check the log files: every event's hash, every prev_hash, one first event.

    `anchors` are (commit, head hash) pairs that git history recorded — each vouch
    commit names the chain's head it left. Each must name an event here (else events
    were dropped or rewritten and re-chained), and every event must be an ancestor of
    one of them (else it was inserted by hand). With no anchors (a log written by an
    older vouch) only the chain itself is checked.
    """
    issues: list[dict[str, Any]] = []
    prev_of: dict[str, str] = {}
    where: dict[str, tuple[str, int]] = {}
    firsts: dict[str, tuple[str, int]] = {}  # events that start a chain, by hash
    files = log_files(vouch_dir)
    for path in files:
        rel = path.relative_to(vouch_dir).as_posix()
        data = path.read_bytes()
        if rel != LOG_NAME and not path.name.endswith(f"-{ids.sha256_hex(data)[:16]}.jsonl"):
            issues.append(
                {
                    "file": rel,
                    "line": None,
                    "detail": "closed segment was modified (name no longer matches)",
                }
            )
        for lineno, raw in enumerate(data.split(b"\n"), 1):
            if not raw.strip():
                continue
            record = parse_line(raw)
            if record is None:
                issues.append({"file": rel, "line": lineno, "detail": line_problem(raw)})
                continue
            if record.get("hash") != event_hash(record):
                issues.append(
                    {
                        "file": rel,
                        "line": lineno,
                        "detail": f"hash mismatch for event {record.get('id')}",
                    }
                )
                continue
            key = str(record["hash"])
            prev = str(record.get("prev_hash") or "")
            prev_of[key] = prev
            where.setdefault(key, (rel, lineno))
            if not prev:
                firsts.setdefault(key, (rel, lineno))
    for key, prev in prev_of.items():
        if prev and prev not in prev_of:
            rel, lineno = where[key]
            issues.append(
                {
                    "file": rel,
                    "line": lineno,
                    "detail": f"prev_hash {prev[:12]}… names no event in the log",
                }
            )
    for rel, lineno in list(firsts.values())[1:]:
        issues.append(
            {
                "file": rel,
                "line": lineno,
                "detail": "a second event without prev_hash: only the first event "
                "of the log may start a chain",
            }
        )
    issues += _anchor_issues(prev_of, where, list(anchors))
    return {"ok": not issues, "events": len(prev_of), "files": len(files), "issues": issues}


def _anchor_issues(
    prev_of: dict[str, str], where: dict[str, tuple[str, int]], anchors: list[tuple[str, str]]
) -> list[dict[str, Any]]:
    if not anchors:
        return []
    issues: list[dict[str, Any]] = []
    anchored: set[str] = set()
    for commit, head in anchors:
        if head not in prev_of:
            issues.append(
                {
                    "file": LOG_NAME,
                    "line": None,
                    "detail": f"event {head[:12]}… recorded by commit {commit[:12]} is "
                    "not in the log: events were dropped or rewritten",
                }
            )
            continue
        node = head
        while node and node not in anchored and node in prev_of:
            anchored.add(node)
            node = prev_of[node]
    for key in prev_of.keys() - anchored:
        rel, lineno = where[key]
        issues.append(
            {
                "file": rel,
                "line": lineno,
                "detail": f"event {key[:12]}… is not recorded by any vouch commit (added by hand?)",
            }
        )
    return issues
