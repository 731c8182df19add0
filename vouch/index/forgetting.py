"""Forgetting: when knowledge is deleted or redacted, the index keeps none of its words.

An incremental refresh deletes a document's rows, but SQLite and FTS5 keep what they
held in free pages and merged-away segments, and the term arrays (`instances`) keep its
terms: the words a redaction removed could still be read out of `search.db`. So a
refresh that finds a claim, page, entity or source redacted, or an object removed by an
approved deletion (its approval's audit event names it: `forgotten`), becomes a full
rebuild into a new file, swapped over the old one; then the local search log loses every
line whose query holds a word that was only in what went (`scrub`), and the lint cache,
which keeps what each file held, is dropped. Any other removal (a branch checked out) is
an ordinary refresh.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import tempfile
import unicodedata
from collections.abc import Iterable
from pathlib import Path

from vouch.index import chunking, store
from vouch.kinds import KINDS
from vouch.store.kb import KB

_WORD = re.compile(r"\w{2,}")
_REDACTED = re.compile(r"^redacted_hash:", re.M)  # a redacted claim, page or entity
_TOMBSTONE = re.compile(r"^redacted_at:", re.M)  # a redacted source's meta.yaml
_LOG = "searches.log.jsonl"
_WORDED = ("claim", "page", "entity")  # the kinds a decision redacts


def words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def forgotten(kb: KB, conn: sqlite3.Connection, changed: Iterable[str]) -> set[str] | None:
    """The words of the indexed documents that `changed` (`.vouch`-relative paths)
    redacted, or removed by an approved deletion, read from the index before it forgets
    them; None when none was. (A file gone any other way — a branch checked out, a hand
    deletion — is an ordinary refresh.)"""
    gone: list[str] = []
    removed: dict[str, str] = {}  # object id -> doc key
    for rel in changed:
        found = chunking.doc_for_path(rel)
        if found is None:
            continue
        path = kb.dir / rel
        tombstone = found[0] == "source" and rel.endswith("/meta.yaml")
        try:
            head = (
                path.read_text("utf-8", "replace")[:4096]
                if found[0] in _WORDED or tombstone
                else ""
            )
        except FileNotFoundError:
            if found[0] != "source":  # a source's content goes only with its tombstone
                removed[found[1]] = chunking.doc_key(*found)
            continue
        except OSError:
            continue
        if (found[0] in _WORDED and _REDACTED.search(head)) or (
            tombstone and _TOMBSTONE.search(head)
        ):
            gone.append(chunking.doc_key(*found))
    if removed:
        from vouch.gate.changes import deleted_by_decisions  # rare: a cold search never

        deleted = deleted_by_decisions(kb)
        gone += [key for oid, key in removed.items() if oid in deleted]
    if not gone:
        return None
    out: set[str] = set()
    for part, marks in store.in_batches(gone):
        for row in conn.execute(
            f"SELECT title, section, text, context FROM chunks WHERE doc_key IN ({marks})", part
        ):
            out |= words(" ".join(str(v or "") for v in row))
    return out


def still_indexed(conn: sqlite3.Connection, candidates: Iterable[str]) -> set[str]:
    """Those of `candidates` some indexed chunk still holds (FTS5, its own tokenizer)."""
    kept = set()
    for word in candidates:
        with contextlib.suppress(sqlite3.Error):
            quoted = '"' + word.replace('"', '""') + '"'
            if conn.execute(
                "SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT 1", (quoted,)
            ).fetchone():
                kept.add(word)
    return kept


def scrub(kb: KB, conn: sqlite3.Connection, candidates: set[str]) -> int:
    """After the rebuild: drop the search-log lines naming a word no knowledge holds any
    more, and the lint cache. Returns the lines dropped. Best effort (a log line another
    process appends meanwhile may be lost; the log is local usage, never knowledge)."""
    gone = {_plain(w) for w in candidates - still_indexed(conn, candidates)}
    _drop_lint_cache(kb)
    return _scrub_log(kb.dir / _LOG, gone) if gone else 0


def _drop_lint_cache(kb: KB) -> None:
    """The lint cache keeps what each file held: it goes (the next lint makes it anew)."""
    for cache in (kb.repo.common_dir / "vouch").glob("lint-*.cache"):
        with contextlib.suppress(OSError):
            cache.unlink()


def _scrub_log(path: Path, gone: set[str]) -> int:
    try:
        lines = path.read_bytes().splitlines(keepends=True)
    except OSError:
        return 0
    kept = [line for line in lines if not _names(line, gone)]
    if len(kept) == len(lines):
        return 0
    fd, tmp = tempfile.mkstemp(prefix=".searches-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.writelines(kept)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return 0
    return len(lines) - len(kept)


def _names(line: bytes, gone: set[str]) -> bool:
    """Whether a log line's text holds a gone word: inside a longer word too
    (`secretvault`), through invisible characters (a soft hyphen) or compatibility forms
    (fullwidth letters), or as what a prefix query (`secr*`) stands for."""
    raw = line.decode("utf-8", "replace")
    try:
        record = json.loads(raw)
    except ValueError:
        record = raw
    text = _plain(json.dumps(record, ensure_ascii=False))
    if any(w in text for w in gone if len(w) >= 3):
        return True
    stems = [m for m in re.findall(r"(\w{3,})\*", text)]
    return any(w.startswith(stem) for stem in stems for w in gone)


def _plain(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    return "".join(c for c in text if unicodedata.category(c) != "Cf").lower()


def scrub_decided(kb: KB, commit: str) -> int:
    """After an approved redaction or deletion (`commit`, its decision) in a clone with
    no index (with one, its rebuild scrubs: `scrub`): the words of the knowledge files it
    changed, as they were before, leave the search log and the lint cache. A word some
    knowledge file still holds stays. Returns the log lines dropped."""
    repo = kb.repo
    parents = repo.commit_parents(commit)
    old, new = (repo.store.peel_tree(c) for c in (parents[0] if parents else "", commit))
    if old is None or new is None:
        return 0
    start = kb.rel(".") + "/"
    lost: set[str] = set()
    for path in repo.changed_names(old, new):
        rel = path[len(start) :] if path.startswith(start) else ""
        blob = repo.blob_at(old, path) if chunking.doc_for_path(rel) else None
        if blob is not None:
            lost |= words(repo.read_blob(blob).decode("utf-8", "replace"))
    if not lost:
        return 0
    kept: set[str] = set()
    for kind in ("claim", "page", "entity", "relation"):
        for obj in kb.iter_objects(KINDS[kind]):
            kept |= words(" ".join(str(v) for v in obj.values())) & lost
    _drop_lint_cache(kb)
    gone = {_plain(w) for w in lost - kept}
    return _scrub_log(kb.dir / _LOG, gone) if gone else 0
