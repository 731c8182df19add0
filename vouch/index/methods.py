"""Registry handlers for the index (kb.index_rebuild, kb.index_status) and the index's
part of kb.status: CallContext in, JSON out."""

from __future__ import annotations

import json
from typing import Any

from vouch.callctx import CallContext
from vouch.kb import KB


def index_rebuild(ctx: CallContext, force: bool = False) -> dict[str, Any]:
    """Rebuild the whole index aside and swap it in; `force` replaces another knowledge
    base's index at this path instead of refusing (E003)."""
    from vouch.index.api import rebuild_index

    report = rebuild_index(ctx.kb, force=force)
    # a server's warm index still points at the replaced files: drop it
    for key in [k for k in ctx.warm if isinstance(k, tuple) and "index" in str(k[0])]:
        ctx.warm.pop(key, None)
    return {"ok": True, "indexed": report.documents, **report.to_json()}


def index_status(ctx: CallContext) -> dict[str, Any]:
    from vouch.index.status import index_status as status

    return status(ctx.kb)


def invalid_files(kb: KB) -> int:
    """How many files the index's last build or refresh left out (0 without an index),
    from one read of `index_meta`: `vouch status` shows it without opening the index
    (`vouch index status` names them)."""
    import sqlite3

    from vouch.index import location, store

    path = location.of(kb.dir).path / store.DB_NAME
    if not path.is_file():
        return 0
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT value FROM index_meta WHERE key = 'invalid'").fetchone()
        finally:
            conn.close()
        found = json.loads(row[0]) if row else []
    except (sqlite3.Error, ValueError):
        return 0  # an unusable index: `index_state` says so
    return len(found) if isinstance(found, list) else 0
