"""Listing handlers around search: `kb.tags`, `kb.info`, the index fields of `kb.status`,
`chunk_count` for `vouch list`, and page sections for `vouch show --section`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vouch.core.ids import check_id
from vouch.errors import NotFound, UsageError, VouchError
from vouch.methods.context import CallContext

if TYPE_CHECKING:
    from pathlib import Path

    from vouch.kinds import Kind
    from vouch.store.kb import KB


def _index(ctx: CallContext) -> Any:
    from vouch.search.access import open_index

    return open_index(ctx.kb, ctx.warm, progress=ctx.progress).index


def tags(ctx: CallContext) -> list[dict[str, Any]]:
    from vouch.index.catalog import tag_counts

    return tag_counts(_index(ctx))


def info(ctx: CallContext, id: str) -> dict[str, Any]:
    from vouch.index.catalog import document

    check_id(id)
    index = _index(ctx)
    doc = document(index, id)
    if doc is None:
        raise NotFound(
            f"the index holds no object {id}", hint="`vouch list KIND` shows what exists"
        )
    doc["headings"] = [
        {k: h[k] for k in ("text", "level", "start_line", "end_line")} for h in index.headings(id)
    ]
    return doc


def index_status(kb: KB) -> dict[str, Any]:
    """What the index holds now, without building or refreshing it (status stays fast).

    Every field is present whether or not an index exists, so the JSON schema is stable.
    """
    from vouch.embed import model as embed

    try:
        ref = embed.resolve(kb.config)
    except VouchError:
        ref = None
    out: dict[str, Any] = {
        "documents": {},
        "total_chunks": 0,
        "db_size_bytes": 0,
        "model_name": ref.name if ref else None,
        "embedding_dim": ref.dims if ref else 0,
        "schema_version": None,
        "index_state": "missing",
    }
    if not _db_path(kb).is_file():
        return out
    from vouch.index.api import Index
    from vouch.index.catalog import summary

    try:
        index = Index.open(kb, ensure_fresh=False)
    except VouchError as exc:
        out["index_state"] = f"unusable: {exc.message}"
        return out
    try:
        out.update(summary(index))
        out["index_state"] = "ready"
    finally:
        index.close()
    return out


def chunk_counts(kb: KB, object_ids: list[str]) -> dict[str, int] | None:
    """Chunks per object from an existing index; None when there is none (no build)."""
    if not _db_path(kb).is_file():
        return None
    from vouch.index.api import Index
    from vouch.index.catalog import chunk_counts as counts

    try:
        index = Index.open(kb, ensure_fresh=False)
    except VouchError:
        return None
    try:
        return counts(index, object_ids)
    finally:
        index.close()


def annotate_list(kb: KB, kind: Kind, rows: list[dict[str, Any]]) -> None:
    """Give each `vouch list` row the search-output.md fields, in place."""
    counts = chunk_counts(kb, [str(r.get("id")) for r in rows]) or {}
    for row in rows:
        row.setdefault("title", kind.title_of(row))
        row.setdefault("type", row.get(kind.type_field) if kind.type_field else None)
        row.setdefault("tags", [])
        row.setdefault("created_at", None)
        row["chunk_count"] = counts.get(str(row.get("id")))


def section(ctx: CallContext, object_id: str, heading: str) -> dict[str, Any]:
    """One heading section of a page or markdown source, located through the index's
    headings table and cut from the object's current text."""
    from vouch.kinds import KINDS

    index = _index(ctx)
    found = index.find_section(object_id, heading)
    if found is None:
        names = [h["text"] for h in index.headings(object_id)]
        raise NotFound(
            f"{object_id} has no section {heading!r}",
            hint=("sections: " + "; ".join(names)) if names else "it has no headings",
        )
    kb = ctx.kb
    page = kb.read(KINDS["page"], object_id)
    if page is not None:
        text = str(page.get("body") or "")
    else:
        content = kb.source_content(object_id)
        if content is None:
            raise UsageError(f"{object_id} is not a page or a source")
        text = content.decode("utf-8", errors="replace")
    lines = text.split("\n")
    body = "\n".join(lines[found["start_line"] - 1 : found["end_line"] - 1]).strip("\n")
    return {
        "id": object_id,
        "section": found["text"],
        "level": found["level"],
        "start_line": found["start_line"],
        "end_line": found["end_line"],
        "text": body,
    }


def _db_path(kb: KB) -> Path:
    """Where the index database lives (in a read-only clone: the user's cache)."""
    from vouch.index import location

    return location.of(kb.dir).path / location.DB_NAME
